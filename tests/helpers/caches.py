"""Caches of every kind, written by the workbench's own cache modules into the test's
``$WORKBENCH_CACHE``, for the listing and pruning tests; and an entry's size as ``du``
gives it."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class PlantedCaches:
    """One entry of each kind and shape, by the name a test reads it by."""

    prepared: Path  # a whole prepared-data entry, made by prepare_data
    before: Path  # one set's "before" translations
    sample: Path  # a Hub sample's rows
    partial_sample: Path  # the row groups a stopped read kept
    sealed_preferences: Path  # ranked lines, sealed
    unsealed_preferences: Path  # ranked lines of a stopped build

    def all(self) -> list[Path]:
        """Every planted entry."""
        return [
            self.prepared,
            self.before,
            self.sample,
            self.partial_sample,
            self.sealed_preferences,
            self.unsealed_preferences,
        ]


def numbered_tsv(path: Path, n: int) -> Path:
    """``n`` distinct clean pairs as a TSV file with a header."""
    lines = "".join(f"Sentence {i} here.\t第{i}句。\n" for i in range(n))
    path.write_text(f"en\tzh\n{lines}", encoding="utf-8")
    return path


def plant_caches(work: Path) -> PlantedCaches:
    """One entry of each kind under ``$WORKBENCH_CACHE``, made as a run makes them (outside
    a run, so none has a run among its users); ``work`` holds the data file."""
    from workbench.core.cache_use import using
    from workbench.core.config.build import build_config
    from workbench.core.data.prepared import prepare_data
    from workbench.core.data.prepared_cache import prepared_root
    from workbench.core.data.sample_cache import PartialSample, default_cache_dir, write_cached
    from workbench.core.data.sample_plan import HubPair
    from workbench.core.evaluate.before_cache import keep_before, kept_file
    from workbench.core.preferences.cache import PreferenceEntry, preferences_root
    from workbench.core.preferences.records import RankedSource

    tsv = numbered_tsv(work / "pairs.tsv", 120)
    prepare_data(build_config("demo", overrides={"data": str(tsv)}))
    (prepared,) = [p for p in prepared_root().iterdir() if (p / "done.json").is_file()]
    keep_before("b" * 32, ["一", "二"])
    sample = default_cache_dir() / "org--pairs-default-en-zh-n2-seed0-cap4@0123abcd.jsonl"
    write_cached(sample, [HubPair("one", "一"), HubPair("two", "二")])
    partial = PartialSample(default_cache_dir(), "org/pairs", "0123abcd", "datasets/org/pairs")
    with using(partial.folder):  # as a Hub read holds it
        partial.keep_rows(
            "datasets/org/pairs/train.parquet", 0, [0], [HubPair("a", "甲")], ("en", "zh")
        )
    lines = [RankedSource("one", "一", 1.0)]
    sealed = PreferenceEntry(preferences_root(), "5" * 24)
    with using(sealed.folder):  # as preference_records holds it
        sealed.append(lines)
        sealed.seal(len(lines))
    unsealed = PreferenceEntry(preferences_root(), "u" * 24)
    with using(unsealed.folder):
        unsealed.append(lines)
    return PlantedCaches(
        prepared, kept_file("b" * 32), sample, partial.folder, sealed.folder, unsealed.folder
    )


def du_bytes(path: Path, apparent: bool = False) -> int:
    """``du -sB1`` of ``path`` (its blocks on disk), or ``du -sb`` (its files' lengths)."""
    flag = "-sb" if apparent else "-sB1"
    out = subprocess.run(["du", flag, str(path)], capture_output=True, text=True, check=True)
    return int(out.stdout.split()[0])
