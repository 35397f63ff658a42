"""The three splits a run's cleaned pairs fall into, each with one job.

Every run has three sets with one job each, so the number a user hands in was never used
to choose anything:

- **train**: what the model learns from;
- **validation**: the per-epoch charts and the choice of the best epoch, nothing else;
- **test**: the before/after BLEU, nothing else -- a Hub dataset's own held-out split
  (WMT19's ``validation`` is newstest2018), a ``--test-data`` file, or a seeded share of
  local data (:func:`split_pairs`). No source sentence of the test set is in train or
  validation. Where the pairs come from is :mod:`.sources`.

The split is made over positions (:func:`split_rows`), as numpy arrays: a prepared corpus
of millions of pairs is split by row numbers alone, and a Python list of five million
ints costs some 180 MiB where an int64 array costs 40.
"""

from __future__ import annotations

import random
from array import array
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

from workbench.core.data.cleaning import CleaningReport
from workbench.core.data.pair import Pair
from workbench.errors import WorkbenchError

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

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


def shuffled_order(count: int, seed: int) -> NDArray[np.int64]:
    """``0 .. count-1`` in the order ``random.Random(seed).shuffle`` leaves a list of them.

    The shuffle is the standard library's own, run over an ``array('q')`` rather than a
    list: the same random draws and swaps (``shuffle`` only reads the length and swaps
    items), so every split made since the first release stays as it was (the demo recipe
    was tuned on its validation set), without a Python int object per pair. The result
    shares the array's buffer.
    """
    import numpy as np

    order = array("q", range(count))
    random.Random(seed).shuffle(order)
    return np.frombuffer(order, dtype=np.int64) if count else np.zeros(0, dtype=np.int64)


def split_rows(
    count: int, seed: int, validation_fraction: float, test_fraction: float = 0.0
) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64]]:
    """The positions ``0 .. count-1`` split as :func:`split_pairs` splits a list of that
    length: ``(train, validation, test)``, each in its shuffled order.

    Each held-out share is ``round(count * fraction)`` and at least one pair (a share of
    0 gives an empty set), so a file of 20 pairs still trains. Validation comes first so
    that it is the set a 9:1 split with the same seed held out: the demo recipe was tuned
    on that set, and the test set must be one nothing was ever chosen on.
    """

    def share(fraction: float) -> int:
        return max(1, round(count * fraction)) if fraction > 0 else 0

    n_test, n_val = share(test_fraction), share(validation_fraction)
    if count - n_test - n_val < 1:
        raise WorkbenchError(
            f"only {count} usable pairs after cleaning; need at least "
            f"{n_test + n_val + 1} for train, validation and test sets"
        )
    order = shuffled_order(count, seed)
    return order[n_val + n_test :], order[:n_val], order[n_val : n_val + n_test]


def split_pairs(
    pairs: list[T], seed: int, validation_fraction: float, test_fraction: float = 0.0
) -> tuple[list[T], list[T], list[T]]:
    """Seeded shuffle, then validation, test and train: ``(train, validation, test)``, as
    :func:`split_rows` splits their positions (pairs in memory; a prepared corpus is split
    by its row numbers)."""
    train, validation, test = split_rows(len(pairs), seed, validation_fraction, test_fraction)
    return (
        [pairs[i] for i in train.tolist()],
        [pairs[i] for i in validation.tolist()],
        [pairs[i] for i in test.tolist()],
    )
