"""The batch shortcut past MarianTokenizer's Python path gives the tokenizer's own ids."""

from __future__ import annotations

from pathlib import Path

import pytest

from workbench.core.data import piece_ids
from workbench.core.data.piece_ids import batch_ids

#: Texts where a shortcut could go wrong: nothing, spaces, special tokens inside a
#: sentence, language labels (known, unknown, unclosed), characters neither side's
#: SentencePiece knows, the other side's script, and a long line.
AWKWARD = [
    "",
    "   ",
    "Hello, world!",
    "a </s> b",
    "<unk>",
    "two <pad><pad> pads",
    ">>cmn_Hans<< I like tea.",
    ">>xyz_Latn<< An unknown label.",
    ">>no end label",
    "Emoji 🙂 and 𠀀 rare Han",
    "我喜欢喝茶。",
    "Tabs\tand\nnewlines",
    " ".join(["long"] * 400),
]


@pytest.fixture(scope="module")
def marian(tmp_path_factory: pytest.TempPathFactory, hsk_pairs):
    from transformers import AutoTokenizer

    from tests.helpers.hub_repos import build_opus_like_model

    folder = build_opus_like_model(
        tmp_path_factory.mktemp("opus") / "model",
        [p.source for p in hsk_pairs],
        [p.target for p in hsk_pairs],
    )
    return AutoTokenizer.from_pretrained(folder)


@pytest.mark.parametrize("target", [False, True], ids=["source", "target"])
def test_the_shortcut_gives_the_tokenizers_ids_on_awkward_and_real_text(
    marian, hsk_pairs, target: bool
):
    side = [p.target if target else p.source for p in hsk_pairs]
    texts = AWKWARD + side
    expected = (marian(text_target=texts) if target else marian(texts))["input_ids"]
    pieces = piece_ids._Pieces.of(marian, target)
    assert pieces is not None  # a MarianTokenizer takes the shortcut
    assert pieces.ids(texts) == expected
    assert batch_ids(marian, texts, target) == expected
    assert batch_ids(marian, [], target) == []


def test_other_tokenizers_are_called_as_they_are(tmp_path: Path, hsk_pairs):
    from transformers import AutoTokenizer

    from tests.helpers.family_models import build_family_model

    folder = build_family_model(
        "t5", tmp_path / "t5", [p.source for p in hsk_pairs], [p.target for p in hsk_pairs]
    )
    t5 = AutoTokenizer.from_pretrained(folder)
    assert piece_ids._Pieces.of(t5, False) is None
    texts = AWKWARD[:5] + [p.source for p in hsk_pairs[:20]]
    assert batch_ids(t5, texts) == t5(texts)["input_ids"]


def test_a_batch_the_shortcut_gets_wrong_goes_to_the_tokenizer(marian, hsk_pairs, monkeypatch):
    """The first sentences of every batch are checked against the tokenizer: a shortcut that
    disagrees (here made to drop each sentence's last piece) is not used for that batch."""
    texts = [p.source for p in hsk_pairs[:50]]
    right = piece_ids._Pieces.ids
    monkeypatch.setattr(
        piece_ids._Pieces, "ids", lambda self, t: [ids[:-2] + ids[-1:] for ids in right(self, t)]
    )
    assert batch_ids(marian, texts) == marian(texts)["input_ids"]
