"""The repos the Hub look-alike serves in the tests: a tiny MarianMT laid out as
opus-mt-en-zh's repo (and a single-pair one as opus-mt-en-de's) and a WMT-shaped
parquet dataset, with the ids they imitate."""

from __future__ import annotations

import json
from pathlib import Path

#: The real model's id and the labels of its vocabulary that the tests use.
OPUS_MODEL = "Helsinki-NLP/opus-mt-en-zh"
LABELS = (">>cmn_Hans<<", ">>cmn_Hant<<")
WMT_DATASET = "wmt/wmt19"
#: The opus-en-de preset's model and data, served as look-alikes too.
OPUS_DE_MODEL = "Helsinki-NLP/opus-mt-en-de"
WMT14_DATASET = "wmt/wmt14"


def build_opus_like_model(
    folder: Path, sources: list[str], targets: list[str], labels: tuple[str, ...] = LABELS
) -> Path:
    """A tiny random MarianMT saved as opus-mt-en-zh's repo is laid out (no workbench.json);
    with ``labels=()`` a single-pair one, as opus-mt-en-de is.

    Its tokenizer is a real ``MarianTokenizer`` (``source.spm``, ``target.spm``,
    ``vocab.json`` holding the language labels as single tokens), and its generation config
    is the real model's: 4 beams, ``max_length`` 512, the pad token banned.
    """
    from transformers import GenerationConfig, MarianConfig, MarianMTModel, MarianTokenizer

    from tests.helpers.runs import tiny_config
    from workbench.core.model.scratch import build_tokenizer

    spm = folder / "spm"
    build_tokenizer(sources, targets, spm, tiny_config())
    vocab = json.loads((spm / "vocab.json").read_text(encoding="utf-8"))
    for label in labels:
        vocab[label] = len(vocab)
    (spm / "vocab.json").write_text(json.dumps(vocab, ensure_ascii=False), encoding="utf-8")
    tokenizer = MarianTokenizer(
        vocab=str(spm / "vocab.json"),
        source_spm=str(spm / "source.spm"),
        target_spm=str(spm / "target.spm"),
        source_lang="en",
        target_lang="zh",
    )
    pad, eos = tokenizer.pad_token_id, tokenizer.eos_token_id
    config = MarianConfig(
        vocab_size=len(vocab),
        decoder_vocab_size=len(vocab),
        d_model=16,
        encoder_layers=1,
        decoder_layers=1,
        encoder_attention_heads=2,
        decoder_attention_heads=2,
        encoder_ffn_dim=32,
        decoder_ffn_dim=32,
        max_position_embeddings=512,
        scale_embedding=True,
        share_encoder_decoder_embeddings=True,
        pad_token_id=pad,
        eos_token_id=eos,
        decoder_start_token_id=pad,
        forced_eos_token_id=eos,
    )
    import torch

    torch.manual_seed(0)
    model = MarianMTModel(config)
    model.generation_config = GenerationConfig(
        pad_token_id=pad,
        eos_token_id=eos,
        decoder_start_token_id=pad,
        forced_eos_token_id=eos,
        bad_words_ids=[[pad]],
        max_length=512,
        num_beams=4,
    )
    repo = folder / "repo"
    model.save_pretrained(repo)
    tokenizer.save_pretrained(repo)
    return repo


def build_wmt_like_dataset(
    folder: Path,
    pairs: list[tuple[str, str]],
    files: int = 3,
    group: int = 10,
    validation: int = 24,
    overlap: int = 4,
    config: str = "zh-en",
) -> Path:
    """WMT19's layout: ``zh-en/train-000NN-of-000MM.parquet`` of several row groups and a
    ``zh-en/validation-00000-of-00001.parquet``, rows in a ``translation`` {en, zh} struct.
    ``config="de-en"`` lays out WMT14's de-en the same way ({en, de}).

    The last ``overlap`` validation rows are also train rows, so that a run has test pairs
    to drop from its training side.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    def write(path: Path, rows: list[tuple[str, str]]) -> None:
        en = pa.array([s for s, _ in rows])
        zh = pa.array([t for _, t in rows])
        other = config.split("-")[0]
        names = ["en", other]
        table = pa.table({"translation": pa.StructArray.from_arrays([en, zh], names=names)})
        path.parent.mkdir(parents=True, exist_ok=True)
        pq.write_table(table, path, row_group_size=group)

    test, train = pairs[:validation], pairs[validation - overlap :]
    size = -(-len(train) // files)
    for f in range(files):
        write(
            folder / config / f"train-{f:05d}-of-{files:05d}.parquet",
            train[f * size : (f + 1) * size],
        )
    write(folder / config / "validation-00000-of-00001.parquet", test)
    (folder / "README.md").write_text(
        f"---\nconfigs:\n- config_name: {config}\n---\n", encoding="utf-8"
    )
    return folder
