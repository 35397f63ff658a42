"""Sentence pairs: where they come from, how they are cleaned, and the three splits.

Three sources share one shape (a list of :class:`Pair`): the HSK corpus shipped in
``hsk-sentences-audio`` (offline demo), local data (:mod:`.local_files`: TSV/CSV/JSONL,
line-aligned files, gzipped or not, ``datasets`` folders), and a random sample of a Hub
dataset (see :mod:`workbench.core.data.hub_sample`). Cleaning happens before the split so
junk never lands in a held-out set and duplicates never straddle a split.

Every run has three sets with one job each, so the number a user hands in was never used
to choose anything:

- **train**: what the model learns from;
- **validation**: the per-epoch charts and the choice of the best epoch, nothing else;
- **test**: the before/after BLEU, nothing else -- a Hub dataset's own held-out split
  (WMT19's ``validation`` is newstest2018), a ``--test-data`` file, or a seeded share of
  local data. No source sentence of the test set is in train or validation.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from workbench.core.config.presets import HSK_DATA
from workbench.core.config.run_config import RunConfig
from workbench.core.data.cleaning import CleaningReport
from workbench.core.data.local_files import LOCAL_SUFFIXES, moses_files, read_local_rows
from workbench.core.data.pair import Pair
from workbench.errors import WorkbenchError

T = TypeVar("T")


#: Names of the Hub test splits the presets use, shown next to every test number.
KNOWN_TEST_SETS: dict[tuple[str, str | None, str], str] = {
    ("wmt/wmt19", "zh-en", "validation"): "newstest2018",
    ("wmt/wmt14", "de-en", "validation"): "newstest2013",
}


@dataclass(frozen=True)
class SplitData:
    """Cleaned pairs split into train, validation and test, plus what cleaning removed."""

    #: A :class:`~.arrow_pairs.PairTable` (memory-mapped) once prepared; any sequence of
    #: pairs will do for a caller that builds one itself.
    train: Sequence[Pair]
    validation: list[Pair]
    test: list[Pair]
    cleaning: CleaningReport
    origin: str
    #: Where each held-out set comes from, e.g. "10% held out, seed 42", "newstest2018".
    validation_name: str = ""
    test_name: str = ""
    #: The Hub dataset commit the pairs were read at (None for local data).
    revision: str | None = None
    #: What the run should be told about the data besides the counts (a short sample).
    notes: tuple[str, ...] = ()

    @property
    def dropped(self) -> dict[str, int]:
        """Pairs taken out (or, for ``long``, counted), per cleaning rule, in rule order."""
        counts = self.cleaning.counts
        return {rule: counts[rule] for rule in self.cleaning.settings.rules if rule in counts}


#: How many more pairs a Hub sample draws than ``samples`` asks for, so that ``samples``
#: is the number left after cleaning (the draw costs only a few more row-group reads).
SAMPLE_MARGIN = 0.1


def sample_draw_size(config: RunConfig) -> int:
    """The pairs a Hub sample draws: ``samples`` and a margin for what cleaning drops."""
    if not config.samples or not config.clean:
        return config.samples
    return config.samples + math.ceil(config.samples * SAMPLE_MARGIN)


def split_pairs(
    pairs: list[T], seed: int, validation_fraction: float, test_fraction: float = 0.0
) -> tuple[list[T], list[T], list[T]]:
    """Seeded shuffle, then validation, test and train: ``(train, validation, test)``.

    Each held-out share is ``round(n * fraction)`` and at least one pair (a share of 0
    gives an empty set), so a file of 20 pairs still trains. Validation comes first so
    that it is the set a 9:1 split with the same seed held out: the demo recipe was tuned
    on that set, and the test set must be one nothing was ever chosen on.
    """
    order = list(range(len(pairs)))
    random.Random(seed).shuffle(order)

    def share(fraction: float) -> int:
        return max(1, round(len(pairs) * fraction)) if fraction > 0 else 0

    n_test, n_val = share(test_fraction), share(validation_fraction)
    if len(pairs) - n_test - n_val < 1:
        raise WorkbenchError(
            f"only {len(pairs)} usable pairs after cleaning; need at least "
            f"{n_test + n_val + 1} for train, validation and test sets"
        )
    validation = [pairs[i] for i in order[:n_val]]
    test = [pairs[i] for i in order[n_val : n_val + n_test]]
    return [pairs[i] for i in order[n_val + n_test :]], validation, test


def load_hsk_pairs(source_lang: str = "en", target_lang: str = "zh") -> list[Pair]:
    """The 4,354 HSK 3.0 pairs (CC-BY-SA-4.0) with level and topic for the preview."""
    if {source_lang, target_lang} != {"en", "zh"}:
        raise WorkbenchError(f"the hsk corpus is English-Chinese; got {source_lang}->{target_lang}")
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


def read_local_pairs(path: Path, source_lang: str, target_lang: str) -> list[Pair]:
    """Pairs from a local file, two line-aligned files or a ``datasets`` folder."""
    return [Pair(s, t) for s, t in read_local_rows(path, source_lang, target_lang)]


def is_local_data(value: str, source_lang: str, target_lang: str) -> bool:
    """True for data a user meant as local: a path, or the prefix of line-aligned files.

    A bare ``corpus`` with ``corpus.en`` and ``corpus.zh`` beside it is local, never a Hub
    id: the files on disk are what the user has in front of them.
    """
    path = Path(value).expanduser()
    return looks_like_local_path(value) or moses_files(path, source_lang, target_lang) is not None


def is_hub_dataset(config: RunConfig) -> bool:
    """True when the training data is read from a Hub dataset."""
    return config.data != HSK_DATA and not is_local_data(
        config.data, config.data_source_lang, config.data_target_lang
    )


def external_test_set(
    config: RunConfig, revision: str | None, cache_dir: Path | None
) -> tuple[list[Pair], str] | None:
    """The test pairs and their name when they come from outside the training data."""
    if config.test_data:
        path = Path(config.test_data).expanduser()
        if not path.exists() and not moses_files(
            path, config.data_source_lang, config.data_target_lang
        ):
            raise WorkbenchError(
                f"test data '{path}' not found; check the path passed to --test-data"
            )
        return read_local_pairs(path, config.data_source_lang, config.data_target_lang), path.name
    if is_hub_dataset(config) and config.test_split:
        from workbench.core.data.hub_sample import load_hub_split

        rows = load_hub_split(
            config.data,
            config.data_config,
            config.test_split,
            config.data_source_lang,
            config.data_target_lang,
            cache_dir=cache_dir,
            revision=revision,
        )
        key = (config.data, config.data_config, config.test_split)
        name = KNOWN_TEST_SETS.get(key, f"{config.data} {config.test_split} split")
        return [Pair(p.source, p.target) for p in rows.pairs], name
    return None
