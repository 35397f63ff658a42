"""Before/after scores of one evaluation set, with sacreBLEU's intervals and paired test.

A "BLEU 0.02 -> 11.4" a user hands in must say which set it comes from and how much of
it could be chance. Everything statistical here is sacreBLEU's: its paired bootstrap (the
test ``sacrebleu --paired-bs`` runs), computed by :mod:`workbench.core.evaluate.resampling`
from sacreBLEU's statistics, seed and definitions with the same draws, gives each side's
95% interval and the p-value of "after differs from before". The interval of the
*difference* is read off the very same resamples (same seed, same sentence draws), which
sacreBLEU's ``PairedTest`` computes but does not return.

This module holds the records that a run's summary stores: :class:`SetScores`, and where
the gain comes from (:class:`LengthBucket`, :class:`ChangedSentence`). Computing them is
:mod:`workbench.core.evaluate.significance` and :mod:`workbench.core.evaluate.breakdown`,
and their one wording for every front end :mod:`workbench.core.views.score_text`.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any, Literal

from workbench.core.records.typed import decode

#: Bootstrap resamples for intervals and the paired test (sacreBLEU's default for -bs).
N_BOOTSTRAP = 1000
#: Shuffles for approximate randomisation (sacreBLEU's default for --paired-ar).
N_PERMUTATIONS = 10000
#: How a source sentence's length is counted: characters for a language written without
#: spaces (zh, ja, th), else words.
LengthUnit = Literal["words", "characters"]


@dataclass(frozen=True)
class MetricChange:
    """One more metric before and after on a set, beside BLEU and chrF: chrF++ and TER
    (sacreBLEU's paired bootstrap), or a neural metric such as COMET (a bootstrap over its
    segment scores and comet-compare's paired t-test).

    ``*_ci`` are ``[low, high]`` as in :class:`SetScores`; ``p`` is ``test``'s p-value of
    after vs before. COMET is on the 0–100 scale, as the WMT papers report it.
    """

    metric: str  # "chrF++", "TER", "COMET", "MetricX-24"
    before: float
    after: float
    before_ci: list[float]
    after_ci: list[float]
    delta: float
    delta_ci: list[float]
    p: float
    test: str  # "paired bootstrap" or "paired t-test"
    model: str | None = None  # a neural metric's model, as the user named it
    lower_is_better: bool = False  # TER counts edits, MetricX errors


@dataclass(frozen=True)
class SetScores:
    """BLEU and chrF before and after fine-tuning on one set, with 95% intervals; chrF++,
    TER, COMET and MetricX (0-25, lower is better) beside them where the run computed them.

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
    chrfpp: MetricChange | None = None
    ter: MetricChange | None = None
    comet: MetricChange | None = None
    metricx: MetricChange | None = None

    def to_dict(self) -> dict[str, Any]:
        """Plain dict for summary.json (a metric not computed left out)."""
        return {k: v for k, v in dataclasses.asdict(self).items() if v is not None}

    @classmethod
    def from_dict(cls, data: Any) -> SetScores | None:
        """The scores stored in a summary block, or None (a stopped or failed run)."""
        return decode(cls, data)

    @property
    def label(self) -> str:
        """``test (newstest2018, 3,981)``: the set's role, origin and size."""
        return f"{self.role} ({self.name}, {self.size:,})"

    @property
    def more(self) -> list[MetricChange]:
        """chrF++, TER, COMET and MetricX, those the run computed, in that order."""
        return [c for c in (self.chrfpp, self.ter, self.comet, self.metricx) if c is not None]

    def change(self, short: str) -> MetricChange:
        """``bleu`` or ``chrf`` as a :class:`MetricChange`, the shape the other metrics
        have, so that every front end writes each metric one way."""
        return MetricChange(
            metric={"bleu": "BLEU", "chrf": "chrF"}[short],
            before=getattr(self, f"{short}_before"),
            after=getattr(self, f"{short}_after"),
            before_ci=getattr(self, f"{short}_before_ci"),
            after_ci=getattr(self, f"{short}_after_ci"),
            delta=getattr(self, f"{short}_delta"),
            delta_ci=getattr(self, f"{short}_delta_ci"),
            p=getattr(self, f"{short}_p"),
            test="paired bootstrap",
        )

    @property
    def changes(self) -> list[MetricChange]:
        """Every metric of the set: BLEU, chrF, then :attr:`more`."""
        return [self.change("bleu"), self.change("chrf"), *self.more]


def finite_or_none(value: Any) -> float | None:
    """A float when ``value`` is a finite number, else None (keeps NaN out of JSON/plots)."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def score_change(before: float, after: float) -> float:
    """After minus before, to the two decimals the scores are stored with."""
    return round(after - before, 2)


@dataclass(frozen=True)
class LengthBucket:
    """Corpus BLEU and chrF before and after on the test sentences of one source-length
    range (``low`` to ``high`` words or characters; ``high`` None: no upper bound)."""

    unit: LengthUnit
    low: int
    high: int | None
    sentences: int
    bleu_before: float
    bleu_after: float
    chrf_before: float
    chrf_after: float


@dataclass(frozen=True)
class ChangedSentence:
    """One test sentence with its sentence chrF before and after fine-tuning."""

    source: str
    reference: str
    before: str
    after: str
    chrf_before: float
    chrf_after: float
    change: float  # after minus before (:func:`score_change`)


@dataclass(frozen=True)
class MostChanged:
    """The test sentences whose sentence chrF rose most and fell most (``most_changed``)."""

    rose: list[ChangedSentence] = dataclasses.field(default_factory=list)
    fell: list[ChangedSentence] = dataclasses.field(default_factory=list)
