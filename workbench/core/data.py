"""Sentence pairs: where they come from, how they are cleaned, and the train/validation split.

Three sources share one shape (a list of :class:`Pair`): the HSK corpus shipped in
``hsk-sentences-audio`` (offline demo), a local file or ``datasets`` folder, and a random
sample of a Hub dataset (see :mod:`workbench.core.hub_sample`). Cleaning happens before
the split so junk never lands in validation and duplicates never straddle the split.
"""

from __future__ import annotations

import csv
import json
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from workbench.config import HSK_DATA, RunConfig
from workbench.errors import WorkbenchError

LOCAL_SUFFIXES = (".tsv", ".csv", ".jsonl", ".json")


@dataclass(frozen=True)
class Pair:
    """One source sentence, its reference translation, and optional metadata."""

    source: str
    target: str
    meta: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)


@dataclass(frozen=True)
class SplitData:
    """Cleaned pairs split into train and validation, plus what cleaning removed."""

    train: list[Pair]
    validation: list[Pair]
    dropped: dict[str, int]
    origin: str


def clean_pairs(pairs: list[Pair]) -> tuple[list[Pair], dict[str, int]]:
    """Drop empty pairs, the corpus's literal 'placeholder' rows and repeated sources.

    Repeated sources are dropped (first kept) so that one English sentence cannot sit in
    both train and validation, which would inflate held-out BLEU.
    """
    kept: list[Pair] = []
    seen: set[str] = set()
    dropped = {"empty": 0, "placeholder": 0, "duplicate": 0}
    for pair in pairs:
        src, tgt = pair.source.strip(), pair.target.strip()
        if not src or not tgt:
            dropped["empty"] += 1
        elif src.lower() == "placeholder" or tgt.lower() == "placeholder":
            dropped["placeholder"] += 1
        elif src in seen:
            dropped["duplicate"] += 1
        else:
            seen.add(src)
            kept.append(Pair(src, tgt, pair.meta))
    return kept, dropped


def split_pairs(
    pairs: list[Pair], validation_fraction: float, seed: int
) -> tuple[list[Pair], list[Pair]]:
    """Seeded shuffle, then the first ``round(n * fraction)`` pairs are validation."""
    order = list(range(len(pairs)))
    random.Random(seed).shuffle(order)
    n_val = max(1, round(len(pairs) * validation_fraction))
    if len(pairs) - n_val < 1:
        raise WorkbenchError(
            f"only {len(pairs)} usable pairs after cleaning; need at least 2 to split"
        )
    return [pairs[i] for i in order[n_val:]], [pairs[i] for i in order[:n_val]]


def load_hsk_pairs(source_lang: str = "en", target_lang: str = "zh") -> list[Pair]:
    """The 4,354 HSK 3.0 pairs (CC-BY-SA-4.0) with level and topic for the preview."""
    if {source_lang, target_lang} != {"en", "zh"}:
        raise WorkbenchError(
            f"the hsk corpus is English-Chinese; got {source_lang}->{target_lang}"
        )
    from hsk_sentences_audio import load_sentences

    pairs = []
    for record in load_sentences():
        text = {"en": record["translation"]["en"], "zh": record["chinese"]}
        meta = {"hsk_level": record.get("hsk_level"), "topic": record.get("topic")}
        pairs.append(Pair(text[source_lang], text[target_lang], meta))
    return pairs


def looks_like_local_path(value: str) -> bool:
    """True for values a user meant as a path (never to be sent to the Hub)."""
    return (
        value.startswith((".", "/", "~"))
        or "\\" in value
        or value.count("/") > 1
        or value.lower().endswith(LOCAL_SUFFIXES)
        or Path(value).expanduser().exists()
    )


def _pick(record: dict[str, Any], lang: str, where: str) -> Any:
    if lang in record:
        return record[lang]
    nested = record.get("translation")
    if isinstance(nested, dict) and lang in nested:
        return nested[lang]
    raise WorkbenchError(
        f"{where} has no '{lang}' column (found: {', '.join(map(str, record))}); "
        "name the columns after the languages (a header 'en<TAB>zh') or pass "
        "--source-lang/--target-lang"
    )


def read_pair_file(path: Path, source_lang: str, target_lang: str) -> list[Pair]:
    """Pairs from a TSV/CSV (header names the languages) or JSONL file."""
    if not path.is_file():
        raise WorkbenchError(f"data file '{path}' not found; check the path passed to --data")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as err:
        raise WorkbenchError(
            f"data file '{path}' is not UTF-8 (byte {err.start}); re-save it as UTF-8"
        ) from None
    if not text.strip():
        raise WorkbenchError(f"data file '{path}' is empty; it needs a header and pairs")
    suffix = path.suffix.lower()
    rows: list[dict[str, Any]] = []
    if suffix in (".jsonl", ".json"):
        for number, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError:
                raise WorkbenchError(
                    f"data file '{path}' line {number} is not JSON; use one object per line"
                ) from None
            if not isinstance(row, dict):
                raise WorkbenchError(f"data file '{path}' line {number} is not a JSON object")
            rows.append(row)
    else:
        delimiter = "\t" if suffix == ".tsv" else ","
        rows = list(csv.DictReader(text.splitlines(), delimiter=delimiter))
        if not rows:
            raise WorkbenchError(f"data file '{path}' has a header but no pairs")
    where = f"data file '{path}'"
    return [
        Pair(str(_pick(r, source_lang, where) or ""), str(_pick(r, target_lang, where) or ""))
        for r in rows
    ]


def read_datasets_folder(path: Path, source_lang: str, target_lang: str) -> list[Pair]:
    """Pairs from a folder written by ``datasets``' ``save_to_disk`` (all splits pooled)."""
    import datasets

    try:
        loaded = datasets.load_from_disk(str(path))
    except (FileNotFoundError, ValueError) as err:
        raise WorkbenchError(
            f"'{path}' is not a datasets folder ({err}); pass a TSV/CSV/JSONL file instead"
        ) from None
    splits = loaded.values() if isinstance(loaded, datasets.DatasetDict) else [loaded]
    where = f"dataset '{path}'"
    return [
        Pair(str(_pick(r, source_lang, where) or ""), str(_pick(r, target_lang, where) or ""))
        for split in splits
        for r in split
    ]


def load_raw_pairs(config: RunConfig, cache_dir: Path | None = None) -> tuple[list[Pair], str]:
    """The uncleaned pairs named by ``config.data`` and a short description of the origin."""
    data = config.data
    if data == HSK_DATA:
        return load_hsk_pairs(config.source_lang, config.target_lang), "HSK 3.0 sentences"
    if looks_like_local_path(data):
        path = Path(data).expanduser()
        if path.is_dir():
            return read_datasets_folder(path, config.source_lang, config.target_lang), str(path)
        return read_pair_file(path, config.source_lang, config.target_lang), str(path)
    from workbench.core.hub_sample import load_hub_sample

    pairs = load_hub_sample(
        data,
        config.data_config,
        config.source_lang,
        config.target_lang,
        n=config.samples,
        seed=config.seed,
        cache_dir=cache_dir,
    )
    return pairs, f"{data} ({config.data_config}), {len(pairs)} random pairs"


def prepare_data(config: RunConfig, cache_dir: Path | None = None) -> SplitData:
    """Load, clean, optionally subsample (local sources), and split 9:1 with the seed."""
    raw, origin = load_raw_pairs(config, cache_dir)
    pairs, dropped = clean_pairs(raw)
    if not pairs:
        raise WorkbenchError(f"no usable pairs in {origin} after dropping empty rows")
    if config.samples and len(pairs) > config.samples:
        pairs = random.Random(config.seed).sample(pairs, config.samples)
    train, validation = split_pairs(pairs, config.validation_fraction, config.seed)
    return SplitData(train, validation, dropped, origin)
