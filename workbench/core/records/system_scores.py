"""What ``workbench score`` reports on any system's output, typed: each file's score on
each metric with its interval and every segment's, and each file against the first (what
:mod:`workbench.core.evaluate.system_scores` computes, :mod:`workbench.core.views.score_report_text`
words, and ``--json`` writes)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from workbench.core.records.scores import MetricChange


@dataclass(frozen=True)
class MetricScore:
    """One system's score on one metric, with its 95% interval and every segment's."""

    metric: str  # "BLEU", "COMET-22"
    score: float
    ci: list[float]
    segments: list[float]
    model: str | None = None  # a neural metric's model


@dataclass(frozen=True)
class SystemResult:
    """One hypothesis file scored."""

    name: str  # the file as given
    scores: list[MetricScore]
    #: Against the first file (none for the first itself): one change per metric.
    against_first: list[MetricChange] = field(default_factory=list)


@dataclass(frozen=True)
class ScoreReport:
    """Everything ``workbench score`` prints, and its ``--json``."""

    segments: int
    references: str | None
    sources: str | None
    tokenize: str | None  # the BLEU tokenizer, when BLEU was scored
    tokenize_reason: str
    signatures: dict[str, str]  # sacreBLEU's, by metric
    systems: list[SystemResult]
    n_bootstrap: int

    def to_dict(self) -> dict[str, Any]:
        """The JSON object ``--json`` prints."""
        return asdict(self)
