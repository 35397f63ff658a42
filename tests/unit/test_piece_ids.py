"""The batch shortcut past MarianTokenizer's Python path gives the tokenizer's own ids."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

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
def opus_folder(tmp_path_factory: pytest.TempPathFactory, hsk_pairs) -> Path:
    from tests.helpers.hub_repos import build_opus_like_model

    return build_opus_like_model(
        tmp_path_factory.mktemp("opus") / "model",
        [p.source for p in hsk_pairs],
        [p.target for p in hsk_pairs],
    )


@pytest.fixture(scope="module")
def marian(opus_folder: Path):
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(opus_folder)


@pytest.fixture(scope="module")
def two_vocabularies(opus_folder: Path, tmp_path_factory: pytest.TempPathFactory):
    """A Marian tokenizer with a target vocabulary of its own, in another order: ``<unk>``
    and every piece have other ids on the target side than on the source side."""
    from transformers import MarianTokenizer

    folder = tmp_path_factory.mktemp("two-vocabularies")
    vocabulary = json.loads((opus_folder / "vocab.json").read_text(encoding="utf-8"))
    (folder / "vocab.json").write_text(json.dumps(vocabulary), encoding="utf-8")
    order = sorted(vocabulary, key=lambda piece: vocabulary[piece])
    keep = {"</s>", "<pad>"}  # the model's eos and pad ids are shared by both sides
    others = [p for p in order if p not in keep]
    # The other pieces take one another's ids in reverse: the last piece's id goes to the first.
    target = {p: vocabulary[p] for p in keep} | {
        p: vocabulary[q] for p, q in zip(others, reversed(others), strict=True)
    }
    (folder / "target_vocab.json").write_text(json.dumps(target), encoding="utf-8")
    tokenizer: Any = MarianTokenizer(
        vocab=str(folder / "vocab.json"),
        source_spm=str(opus_folder / "source.spm"),
        target_spm=str(opus_folder / "target.spm"),
        target_vocab_file=str(folder / "target_vocab.json"),
        separate_vocabs=True,
        source_lang="en",
        target_lang="zh",
    )
    assert tokenizer.encoder["<unk>"] != tokenizer.target_encoder["<unk>"]
    return tokenizer


@pytest.mark.parametrize("target", [False, True], ids=["source", "target"])
@pytest.mark.parametrize("vocabularies", ["one vocabulary", "two vocabularies"])
def test_the_shortcut_gives_the_tokenizers_ids_on_awkward_and_real_text(
    request, hsk_pairs, target: bool, vocabularies: str
):
    tokenizer = request.getfixturevalue(
        "marian" if vocabularies == "one vocabulary" else "two_vocabularies"
    )
    side = [p.target if target else p.source for p in hsk_pairs]
    texts = AWKWARD + side + [p.source if target else p.target for p in hsk_pairs[:50]]
    expected = (tokenizer(text_target=texts) if target else tokenizer(texts))["input_ids"]
    pieces = piece_ids._Pieces.of(tokenizer, target)
    assert pieces is not None  # a MarianTokenizer takes the shortcut
    assert pieces.ids(texts) == expected
    assert batch_ids(tokenizer, texts, target) == expected
    assert batch_ids(tokenizer, [], target) == []


def test_the_other_families_tokenizers_take_no_shortcut(family_models: dict[str, Path]):
    from transformers import AutoTokenizer

    for family, folder in family_models.items():
        tokenizer = AutoTokenizer.from_pretrained(folder)
        assert piece_ids._Pieces.of(tokenizer, False) is None, family
        assert piece_ids._Pieces.of(tokenizer, True) is None, family


def test_a_batch_the_shortcut_gets_wrong_goes_to_the_tokenizer(marian, hsk_pairs, monkeypatch):
    """The first sentences of every batch are checked against the tokenizer: a shortcut that
    disagrees (here made to drop each sentence's last piece) is not used for that batch."""
    texts = [p.source for p in hsk_pairs[:50]]
    right = piece_ids._Pieces.ids
    monkeypatch.setattr(
        piece_ids._Pieces, "ids", lambda self, t: [ids[:-2] + ids[-1:] for ids in right(self, t)]
    )
    assert batch_ids(marian, texts) == marian(texts)["input_ids"]
