"""Build a small MarianMT from scratch, so the demo needs no download at all.

The tokenizer is the real ``MarianTokenizer`` over two SentencePiece models trained on the
training split only (validation text never shapes the vocabulary), with one shared
``vocab.json`` so source and target embeddings can be tied as in opus-mt.
"""

from __future__ import annotations

import io
import json
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbench.core.config.run_config import RunConfig
from workbench.core.decoding import MAX_POSITIONS
from workbench.errors import WorkbenchError

if TYPE_CHECKING:
    from transformers import MarianMTModel, MarianTokenizer

SPECIAL_TOKENS = ("</s>", "<unk>", "<pad>")  # ids 0, 1, 2: eos, unk, pad/decoder start


def train_sentencepiece(
    sentences: list[str], vocab_size: int, normalization: str, seed: int
) -> bytes:
    """Train a unigram SentencePiece model in memory and return its bytes.

    ``normalization`` matters for Chinese: the default ``nmt_nfkc`` maps full-width
    punctuation (，。？) to ASCII, and every punctuation match against the references
    would then be lost in BLEU; the target side uses ``identity``.
    """
    import sentencepiece as spm

    model = io.BytesIO()
    text = [s for s in sentences if s.strip()]
    size = vocab_size
    while True:
        try:
            spm.SentencePieceTrainer.train(
                sentence_iterator=iter(text),
                model_writer=model,
                vocab_size=size,
                # A soft limit: on a small corpus spm stops at the pieces the data supports
                # instead of refusing ("Vocabulary size too high"); the caller says so.
                hard_vocab_limit=False,
                model_type="unigram",
                character_coverage=0.9995,
                normalization_rule_name=normalization,
                # Marian's tokenizer adds </s> itself and maps pieces through vocab.json.
                unk_id=0,
                bos_id=-1,
                eos_id=-1,
                pad_id=-1,
                num_threads=2,
                minloglevel=2,
            )
            return model.getvalue()
        except RuntimeError as err:
            message = str(err)
            needed = re.search(r"smaller than required_chars\. \d+ vs (\d+)", message)
            if needed and size < int(needed.group(1)) + 64:
                # Every character must be a piece (coverage 0.9995): grow to fit them.
                size = int(needed.group(1)) + 64
                model = io.BytesIO()
                continue
            raise WorkbenchError(f"could not build a SentencePiece vocabulary: {message}") from None


def _pieces(model_bytes: bytes) -> list[str]:
    import sentencepiece as spm

    proc = spm.SentencePieceProcessor(model_proto=model_bytes)
    return [proc.id_to_piece(i) for i in range(proc.get_piece_size())]


def _load_tokenizer(folder: Path, config: RunConfig) -> MarianTokenizer:
    from transformers import MarianTokenizer

    return MarianTokenizer(
        vocab=str(folder / "vocab.json"),
        source_spm=str(folder / "source.spm"),
        target_spm=str(folder / "target.spm"),
        source_lang=config.source_lang,
        target_lang=config.target_lang,
    )


def build_tokenizer(
    sources: list[str],
    targets: list[str],
    folder: Path,
    config: RunConfig,
    reuse: bool = False,
) -> MarianTokenizer:
    """Train both SentencePiece models, write vocab.json and load a MarianTokenizer.

    ``reuse`` loads the files already in ``folder`` instead: the other processes of a
    multi-process run use the vocabularies rank 0 has just built, rather than all
    rewriting the same files at once.
    """
    from workbench.core.model.load import quiet_libraries

    quiet_libraries()
    names = ("vocab.json", "source.spm", "target.spm")
    if reuse and all((folder / n).is_file() for n in names):
        return _load_tokenizer(folder, config)
    folder.mkdir(parents=True, exist_ok=True)
    src_model = train_sentencepiece(sources, config.scratch_source_vocab, "nmt_nfkc", config.seed)
    tgt_model = train_sentencepiece(targets, config.scratch_target_vocab, "identity", config.seed)
    (folder / "source.spm").write_bytes(src_model)
    (folder / "target.spm").write_bytes(tgt_model)
    vocab: dict[str, int] = {tok: i for i, tok in enumerate(SPECIAL_TOKENS)}
    for piece in _pieces(src_model) + _pieces(tgt_model):
        if piece not in vocab and piece != "<unk>":
            vocab[piece] = len(vocab)
    (folder / "vocab.json").write_text(json.dumps(vocab, ensure_ascii=False), encoding="utf-8")
    return _load_tokenizer(folder, config)


def build_scratch_model(
    sources: list[str],
    targets: list[str],
    folder: Path,
    config: RunConfig,
    reuse: bool = False,
) -> tuple[MarianMTModel, MarianTokenizer]:
    """A freshly initialised MarianMT of the configured shape and its tokenizer."""
    import torch
    from transformers import GenerationConfig, MarianMTModel

    tokenizer = build_tokenizer(sources, targets, folder, config, reuse)
    pad_id = tokenizer.pad_token_id
    model_config = scratch_model_config(
        config, len(tokenizer.encoder), pad_id, tokenizer.eos_token_id
    )
    torch.manual_seed(config.seed)
    model = MarianMTModel(model_config)
    model.generation_config = GenerationConfig(
        pad_token_id=pad_id,
        eos_token_id=tokenizer.eos_token_id,
        decoder_start_token_id=pad_id,
        forced_eos_token_id=tokenizer.eos_token_id,
        bad_words_ids=[[pad_id]],
        max_new_tokens=config.max_new_tokens,
        num_beams=config.num_beams,
    )
    return model, tokenizer


def scratch_model_config(config: RunConfig, vocab_size: int, pad_id: int, eos_id: int) -> Any:
    """The MarianConfig of the configured scratch shape (also what the memory plan counts,
    before any vocabulary is trained, at the largest vocabulary the settings allow)."""
    from transformers import MarianConfig

    return MarianConfig(
        vocab_size=vocab_size,
        decoder_vocab_size=vocab_size,
        d_model=config.scratch_d_model,
        encoder_layers=config.scratch_layers,
        decoder_layers=config.scratch_layers,
        encoder_attention_heads=config.scratch_heads,
        decoder_attention_heads=config.scratch_heads,
        encoder_ffn_dim=config.scratch_ffn_dim,
        decoder_ffn_dim=config.scratch_ffn_dim,
        dropout=config.scratch_dropout,
        attention_dropout=config.scratch_dropout,
        activation_dropout=0.0,
        max_position_embeddings=MAX_POSITIONS,
        # Without this the sinusoidal positions (magnitude ~1) drown the token
        # embeddings (std 0.02) and the model cannot learn.
        scale_embedding=True,
        share_encoder_decoder_embeddings=True,
        tie_word_embeddings=True,
        pad_token_id=pad_id,
        eos_token_id=eos_id,
        decoder_start_token_id=pad_id,
        forced_eos_token_id=eos_id,
    )
