"""MetricX on any system's output (``workbench score --metrics metricx,metricx-qe``) and on
a run's held-out sets before and after (``train --metricx``).

Each system's segment scores (0-25, **lower is better**), their mean with a bootstrap
interval over segments, and every system after the first against the first, paired on
the same segments, with the same bootstrap and paired t-test COMET gets
(:mod:`.segment_statistics`). The model is loaded once for both modes: MetricX-24's
checkpoints are hybrid, so ``metricx`` (with the references) and ``metricx-qe`` (without)
are the same model read two ways. A run scores its held-out sets with the references,
by the path COMET takes (:mod:`.set_scorers`). No agreement (Kocmi et al.) reading is
given (docs/metrics.md says why).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from workbench.core.config.scorer_settings import ScorerSettings
from workbench.core.evaluate.before_after import HeldOutSets
from workbench.core.evaluate.segment_statistics import mean, segment_change, segment_interval
from workbench.core.evaluate.set_scorers import SetScorer, SystemsScorer, add_scores
from workbench.core.events import EventSink, Note, Sample
from workbench.core.metricx.scorer import MetricXSettings
from workbench.core.records.scores import MetricChange, SetScores
from workbench.core.records.system_scores import MetricScore


def check_metricx(settings: MetricXSettings, modes: Sequence[str]) -> None:
    """The model found, its config read, each mode checked and its tokenizer found,
    before any weight is read: a model that cannot score as asked is one line first."""
    from workbench.core.metricx.files import locate, tokenizer_location

    source = locate(settings.model)
    for mode in modes:
        source.check_mode(qe=mode == "metricx-qe")
    tokenizer_location(source, settings.tokenizer)


def run_metricx(config: ScorerSettings, device: str | None = None) -> MetricXSettings | None:
    """The MetricX model a run's settings ask for, on ``device``; None when none is."""
    if not config.metricx:
        return None
    return MetricXSettings(
        config.metricx, config.metricx_tokenizer, config.metricx_max_length, device=device
    )


def metricx_scores(
    settings: MetricXSettings,
    modes: Sequence[str],
    sources: list[str],
    hypotheses: list[list[str]],
    references: list[str] | None,
    n_bootstrap: int,
    emit: EventSink | None = None,
) -> tuple[list[list[MetricScore]], list[list[MetricChange]]]:
    """Per system, its score in each mode asked (``metricx``, ``metricx-qe``), and its
    changes against the first system."""
    from workbench.core.metricx.scorer import load_metricx

    if emit is not None:
        emit(Note(f"loading MetricX model {settings.model}"))
    scorer = load_metricx(settings)
    scores: list[list[MetricScore]] = [[] for _ in hypotheses]
    changes: list[list[MetricChange]] = [[] for _ in hypotheses]
    for mode in modes:
        qe = mode == "metricx-qe"
        name = scorer.metric(qe)
        scored = [
            [round(s, 4) for s in system]
            for system in scorer.score_systems(sources, hypotheses, None if qe else references)
        ]
        for segments, out in zip(scored, scores, strict=True):
            interval = segment_interval(segments, n_bootstrap)
            out.append(
                MetricScore(name, round(mean(segments), 2), interval, segments, settings.model)
            )
        for segments, against in zip(scored[1:], changes[1:], strict=True):
            change = segment_change(scored[0], segments, name, settings.model, n_bootstrap)
            against.append(dataclasses.replace(change, lower_is_better=True))
    return scores, changes


def add_metricx(
    sets: HeldOutSets,
    before: dict[str, list[str]],
    after: dict[str, list[str]],
    scores: dict[str, SetScores],
    rows: dict[str, list[Sample]],
    settings: MetricXSettings,
    emit: EventSink,
) -> tuple[dict[str, SetScores], dict[str, list[Sample]]]:
    """Each set's scores and sentences with MetricX added, against the references (lower
    is better); a model that fails now costs the run nothing else."""

    def load() -> tuple[str, SystemsScorer]:
        from workbench.core.metricx.scorer import load_metricx

        scorer = load_metricx(settings)
        return scorer.metric(qe=False), scorer

    def scale(segments: list[float]) -> list[float]:
        return [round(s, 4) for s in segments]

    metricx = SetScorer("metricx", "MetricX", settings.model, load, scale, lower_is_better=True)
    return add_scores(sets, before, after, scores, rows, metricx, emit)
