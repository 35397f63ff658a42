"""Before/after scores of one evaluation set, with sacreBLEU's intervals and paired test.

A "BLEU 0.02 -> 11.4" a user hands in must say which set it comes from and how much of
it could be chance. Everything statistical here is sacreBLEU's own: its paired bootstrap
(``sacrebleu.significance.PairedTest``, the code behind ``sacrebleu --paired-bs``) gives
each side's 95% interval and the p-value of "after differs from before". The interval of
the *difference* is read off the very same resamples (same seed, same sentence draws),
because PairedTest computes those paired differences but does not return them.

This module holds the record (:class:`SetScores`) that a run's summary stores; computing
it is :mod:`workbench.core.evaluate.significance`, and its one wording for every front end
:mod:`workbench.core.views.score_text`.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any

#: Bootstrap resamples for intervals and the paired test (sacreBLEU's default for -bs).
N_BOOTSTRAP = 1000
#: Shuffles for approximate randomisation (sacreBLEU's default for --paired-ar).
N_PERMUTATIONS = 10000


@dataclass(frozen=True)
class SetScores:
    """BLEU and chrF before and after fine-tuning on one set, with 95% intervals.

    ``*_ci`` are ``[low, high]``: sacreBLEU's bootstrap mean ± its 95% half-width for a
    single side, the 2.5th and 97.5th percentile of the paired resampled differences for
    a delta. ``*_p`` is the paired bootstrap p-value of after vs before.
    """

    role: str  # "test" or "validation"
    name: str  # where the set comes from: "newstest2018", "10% held out, seed 42"
    size: int
    bleu_before: float
    bleu_after: float
    chrf_before: float
    chrf_after: float
    bleu_before_ci: list[float]
    bleu_after_ci: list[float]
    chrf_before_ci: list[float]
    chrf_after_ci: list[float]
    bleu_delta: float
    bleu_delta_ci: list[float]
    bleu_p: float
    chrf_delta: float
    chrf_delta_ci: list[float]
    chrf_p: float
    n_bootstrap: int
    #: sacreBLEU's signature of the BLEU computed, e.g. ``nrefs:1|bs:1000|seed:12345|...``.
    bleu_signature: str

    def to_dict(self) -> dict[str, Any]:
        """Plain dict for summary.json."""
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: Any) -> SetScores | None:
        """The scores stored in a summary block, or None (an older or a stopped run)."""
        names = {f.name for f in dataclasses.fields(cls)}
        if not isinstance(data, dict) or not names <= set(data):
            return None
        return cls(**{k: data[k] for k in names})

    @property
    def label(self) -> str:
        """``test (newstest2018, 3,981)``: the set's role, origin and size."""
        return f"{self.role} ({self.name}, {self.size:,})"


def finite_or_none(value: Any) -> float | None:
    """A float when ``value`` is a finite number, else None (keeps NaN out of JSON/plots)."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None
