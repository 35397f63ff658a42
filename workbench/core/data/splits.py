"""The three splits a run's cleaned pairs fall into, each with one job.

Every run has three sets with one job each, so the number a user hands in was never used
to choose anything:

- **train**: what the model learns from;
- **validation**: the per-epoch charts and the choice of the best epoch, nothing else;
- **test**: the before/after BLEU, nothing else -- a Hub dataset's own held-out split
  (WMT19's ``validation`` is newstest2018), a ``--test-data`` file, or a seeded share of
  local data (:func:`split_pairs`). No source sentence of the test set is in train or
  validation. Where the pairs come from is :mod:`.sources`.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypeVar

from workbench.core.data.cleaning import CleaningReport
from workbench.core.data.pair import Pair
from workbench.errors import WorkbenchError

T = TypeVar("T")


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
