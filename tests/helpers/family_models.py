"""Tiny random translation models of each Hugging Face family, saved as the Hub ships them.

Next to ``tests/helpers/hub_repos.py``'s Marian look-alike (opus-mt-en-zh) these imitate the other
families a user can name with ``--model``: NLLB-200, M2M100, mBART-50 and T5. Each is a
1-layer, 16-wide random model written with ``save_pretrained``, with a real tokenizer of its
family built from a SentencePiece model trained here on the given sentences, the family's
special-token ids (pad, eos, decoder start) and its full default list of language codes.

As on the Hub: no ``workbench.json``, and no ``forced_bos_token_id`` in
``generation_config.json`` (the Hub's NLLB, M2M100 and mBART-50 folders do not force the
target language; a caller must). The tokenizer files are the ones each family ships:
``tokenizer.json`` plus the SentencePiece model for NLLB, mBART-50 and T5, and
``vocab.json`` plus ``sentencepiece.bpe.model`` for M2M100 (which has no tokenizers-backed
class). Building all four takes about a second.
"""

from __future__ import annotations

import io
import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

#: The families, in the order the tests go through them.
FAMILIES = ("nllb", "m2m100", "mbart50", "t5")

#: The Hub model each family's tiny model imitates (and is served as by ``hub_server``).
HUB_IDS = {
    "nllb": "facebook/nllb-200-distilled-600M",
    "m2m100": "facebook/m2m100_418M",
    "mbart50": "facebook/mbart-large-50-many-to-many-mmt",
    "t5": "google-t5/t5-small",
}

#: ``src_lang``/``tgt_lang`` for English -> Chinese (T5 has none: it takes a prefix).
LANGUAGES = {
    "nllb": ("eng_Latn", "zho_Hans"),
    "m2m100": ("en", "zh"),
    "mbart50": ("en_XX", "zh_CN"),
}

#: The token that names a language in each family's vocabulary (M2M100 wraps the code).
CODE_TOKEN = {
    "nllb": "{}",
    "m2m100": "__{}__",
    "mbart50": "{}",
}

#: T5's task prefix for English -> Chinese (t5-small's own tasks use the same form).
T5_PREFIX = "translate English to Chinese: "

#: Position bounds as the Hub's configs and tokenizer configs give them.
MAX_POSITIONS = {"nllb": 1024, "m2m100": 1024, "mbart50": 1024, "t5": 512}

#: M2M100's embedding rows past the language codes (``madeupword0..7``): the real
#: m2m100_418M has 128,004 vocab.json entries + 100 codes + 8 = ``vocab_size`` 128,112.
M2M100_MADEUP_WORDS = 8

#: The shape every family shares.
D_MODEL, FFN, HEADS, LAYERS = 16, 32, 2, 1

#: SentencePiece pieces asked for; a small corpus may support fewer (a soft limit).
SPM_VOCAB = 1000

#: Keys that converting and loading a local folder leave in a tokenizer config; the Hub's
#: have none of them (``local_files_only`` would follow the files to every later load;
#: ``unk_id`` is the SentencePiece model's, not the tokenizer's).
LOAD_KEYS = ("is_local", "local_files_only", "unk_id")


def code_token(family: str, lang: str) -> str:
    """The vocabulary token of ``lang`` (a ``LANGUAGES`` value) in ``family``."""
    return CODE_TOKEN[family].format(lang)


def train_spm(sentences: list[str], model_type: str, ids: Mapping[str, Any]) -> bytes:
    """A SentencePiece model of ``model_type`` trained in memory, with the special-piece ids
    ``ids`` (unk_id, bos_id, eos_id, pad_id; -1 for none), as the family's own model has;
    any other trainer options may travel with them."""
    import sentencepiece as spm

    text = [s for s in sentences if s.strip()]
    size = SPM_VOCAB
    while True:
        model = io.BytesIO()
        try:
            spm.SentencePieceTrainer.train(
                sentence_iterator=iter(text),
                model_writer=model,
                vocab_size=size,
                hard_vocab_limit=False,
                model_type=model_type,
                character_coverage=1.0,
                num_threads=1,  # deterministic
                minloglevel=2,
                **ids,
            )
            return model.getvalue()
        except RuntimeError as err:  # every character must be a piece: grow to fit them
            needed = re.search(r"required_chars\. \d+ vs (\d+)", str(err))
            if not needed or size > int(needed.group(1)):
                raise
            size = int(needed.group(1)) + 64


#: Fairseq's SentencePiece layout (NLLB, M2M100, mBART-50): <unk> 0, <s> 1, </s> 2, which
#: the tokenizers move to <s> 0, <pad> 1, </s> 2, <unk> 3.
FAIRSEQ_SPM_IDS = {"unk_id": 0, "bos_id": 1, "eos_id": 2, "pad_id": -1}
#: T5's: <pad> 0, </s> 1, <unk> 2, no <s>.
T5_SPM_IDS = {"pad_id": 0, "eos_id": 1, "unk_id": 2, "bos_id": -1}


def _tidy_tokenizer_config(repo: Path) -> None:
    path = repo / "tokenizer_config.json"
    config = json.loads(path.read_text(encoding="utf-8"))
    for key in LOAD_KEYS:
        config.pop(key, None)
    path.write_text(json.dumps(config, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def _tokenizer(family: str, work: Path, sources: list[str], targets: list[str]) -> Any:
    """The family's tokenizer, converted from a SentencePiece model trained on the text."""
    from transformers import M2M100Tokenizer, MBart50Tokenizer, NllbTokenizer, T5Tokenizer

    work.mkdir(parents=True, exist_ok=True)
    limit = MAX_POSITIONS[family]
    if family == "t5":  # the prefix's characters (":") must be pieces, as in T5's own model
        (work / "spiece.model").write_bytes(
            train_spm([T5_PREFIX + s for s in sources] + targets, "unigram", T5_SPM_IDS)
        )
        return T5Tokenizer.from_pretrained(work, model_max_length=limit)
    # NLLB's and M2M100's models are BPE; mBART-50's (XLM-R's) is a unigram one.
    model_type = "unigram" if family == "mbart50" else "bpe"
    spm_bytes = train_spm(sources + targets, model_type, FAIRSEQ_SPM_IDS)
    (work / "sentencepiece.bpe.model").write_bytes(spm_bytes)
    if family == "nllb":
        from transformers.models.nllb.tokenization_nllb import FAIRSEQ_LANGUAGE_CODES

        # from_pretrained of a folder passes an empty code list unless told: the default
        # list (all 202 codes) is what the real tokenizer has.
        return NllbTokenizer.from_pretrained(
            work, extra_special_tokens=list(FAIRSEQ_LANGUAGE_CODES), model_max_length=limit
        )
    if family == "mbart50":
        return MBart50Tokenizer.from_pretrained(work, model_max_length=limit)
    import sentencepiece as spm

    # M2M100: vocab.json maps the pieces in fairseq's order; the codes follow it.
    pieces = spm.SentencePieceProcessor(model_proto=spm_bytes)
    vocab = {"<s>": 0, "<pad>": 1, "</s>": 2, "<unk>": 3}
    for i in range(3, pieces.get_piece_size()):
        vocab.setdefault(pieces.id_to_piece(i), len(vocab))
    (work / "vocab.json").write_text(json.dumps(vocab, ensure_ascii=False), encoding="utf-8")
    return M2M100Tokenizer(
        vocab_file=str(work / "vocab.json"),
        spm_file=str(work / "sentencepiece.bpe.model"),
        model_max_length=limit,
        num_madeup_words=M2M100_MADEUP_WORDS,
    )


def vocab_size(family: str, tokenizer: Any) -> int:
    """The embedding rows the family's model has for ``tokenizer``: ``len(tokenizer)``,
    except M2M100, whose ``len`` counts neither its 100 codes nor the made-up words."""
    if family == "m2m100":
        return len(tokenizer.encoder) + len(tokenizer.lang_token_to_id) + M2M100_MADEUP_WORDS
    return len(tokenizer)


def _model(family: str, tokenizer: Any) -> Any:
    """The family's random model (``torch.manual_seed(0)``) with its Hub generation config."""
    import torch
    from transformers import (
        GenerationConfig,
        M2M100Config,
        M2M100ForConditionalGeneration,
        MBartConfig,
        MBartForConditionalGeneration,
        T5Config,
        T5ForConditionalGeneration,
    )

    size = vocab_size(family, tokenizer)
    torch.manual_seed(0)
    if family == "t5":
        config = T5Config(
            vocab_size=size,
            d_model=D_MODEL,
            d_kv=4,  # d_kv * num_heads = 8, not d_model: T5 allows it
            d_ff=FFN,
            num_heads=HEADS,
            num_layers=LAYERS,
            num_decoder_layers=LAYERS,
            pad_token_id=0,
            eos_token_id=1,
            # Not in T5Config's signature; an extra keyword becomes an attribute, as in the
            # Hub's t5-small config.json.
            decoder_start_token_id=0,  # type: ignore[call-arg]
        )
        model: Any = T5ForConditionalGeneration(config)
        model.generation_config = GenerationConfig(
            decoder_start_token_id=0, eos_token_id=1, pad_token_id=0
        )
        return model
    # NLLB, M2M100 and mBART-50: <s> 0, <pad> 1, </s> 2, decoding starts at </s>.
    special: dict[str, Any] = dict(
        bos_token_id=0, pad_token_id=1, eos_token_id=2, decoder_start_token_id=2
    )
    shape: dict[str, Any] = dict(
        vocab_size=size,
        d_model=D_MODEL,
        encoder_layers=LAYERS,
        decoder_layers=LAYERS,
        encoder_attention_heads=HEADS,
        decoder_attention_heads=HEADS,
        encoder_ffn_dim=FFN,
        decoder_ffn_dim=FFN,
        max_position_embeddings=MAX_POSITIONS[family],
        scale_embedding=True,
    )
    if family == "mbart50":
        mbart_config = MBartConfig(**shape, **special, forced_eos_token_id=2)
        model = MBartForConditionalGeneration(mbart_config)
        model.generation_config = GenerationConfig(
            **special, forced_eos_token_id=2, max_length=200, num_beams=5, early_stopping=True
        )
        return model
    extra: dict[str, Any] = {"tokenizer_class": "NllbTokenizer"} if family == "nllb" else {}
    m2m100_config = M2M100Config(**shape, **special, activation_function="relu", **extra)
    model = M2M100ForConditionalGeneration(m2m100_config)
    beams = {} if family == "nllb" else {"num_beams": 5, "early_stopping": True}
    model.generation_config = GenerationConfig(**special, max_length=200, **beams)
    return model


def build_family_model(family: str, folder: Path, sources: list[str], targets: list[str]) -> Path:
    """A tiny random model of ``family`` (one of FAMILIES) saved under ``folder / "repo"``
    as its Hub repo is laid out; returns that folder.

    ``sources`` and ``targets`` (English and Chinese) train the SentencePiece model.
    """
    if family not in FAMILIES:
        raise ValueError(f"unknown family {family!r}; one of {', '.join(FAMILIES)}")
    from workbench.core.model.load import quiet_libraries

    quiet_libraries()
    work = folder / "spm"
    tokenizer = _tokenizer(family, work, sources, targets)
    model = _model(family, tokenizer)
    repo = folder / "repo"
    model.save_pretrained(repo)
    tokenizer.save_pretrained(repo)
    if family != "m2m100":  # the Hub ships the SentencePiece model next to tokenizer.json
        name = "spiece.model" if family == "t5" else "sentencepiece.bpe.model"
        (repo / name).write_bytes((work / name).read_bytes())
    _tidy_tokenizer_config(repo)
    return repo
