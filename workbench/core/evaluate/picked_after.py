"""``train --pick``: the test set's "after" decoded a second way, each line picked among
its candidates, and scored against beam search's "after" with the same statistics.

Beam search's "after" is untouched: it is decoded, scored and written as in a run
without a pick, and the pick is a second decoding of the same best model, loaded from
disk as ``workbench translate --pick`` loads it and run in fp32 as "after" is
(:meth:`~.before_after.HeldOutSets.translate`). Beam is the baseline of every
comparison here: BLEU, chrF, chrF++ and TER by sacreBLEU's paired bootstrap
(:func:`~.significance.paired_changes`), the run's COMET by its segment bootstrap and
comet-compare's paired t-test (:func:`~.segment_statistics.segment_change`), and the
run's MetricX the same way (lower is better); beam's COMET and MetricX segments are the
ones "after" already scored, so only the pick is scored again.
Only the test set is picked: validation chose the epoch, and nothing here chooses.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from workbench.core.evaluate.before_after import HeldOutSets
from workbench.core.evaluate.metrics import sentence_bleu, sentence_chrf
from workbench.core.evaluate.segment_statistics import segment_change
from workbench.core.evaluate.significance import paired_changes
from workbench.core.events import EventSink, Note, Phase, Sample
from workbench.core.metricx.scorer import MetricXSettings
from workbench.core.picking.picks import Pick
from workbench.core.records.picked_scores import PickedSample, PickedScores
from workbench.core.records.scores import N_BOOTSTRAP, MetricChange
from workbench.core.translate.picked import PickSettings, pick_translations
from workbench.errors import failure_text


def pick_test_set(
    sets: HeldOutSets,
    settings: PickSettings,
    best_dir: Path,
    device: str,
    emit: EventSink,
) -> list[Pick | None]:
    """Each test line's pick among its candidates, by the best model in fp32."""
    from workbench.core.model.load import fp32_decoding
    from workbench.core.translate.translator import Translator

    translator = Translator.from_pretrained(str(best_dir), device=device, backend="transformers")
    picker = dataclasses.replace(settings, device=device).picker(translator)
    pairs = sets.pairs["test"]
    emit(
        Phase(
            "pick",
            f"{settings.candidates.count} candidates for each of {len(pairs)} test sentences, "
            f"picked by {picker.label}",
        )
    )
    with fp32_decoding():
        lines = pick_translations(
            translator, [p.source for p in pairs], picker, settings.candidates, sets.options
        )
    return [line.pick for line in lines]


def picked_comet(
    rows: list[Sample], picked: list[str], sets: HeldOutSets, model: str, device: str
) -> MetricChange | None:
    """The run's COMET of the pick against beam's, whose segments "after" scored (None
    where it scored none)."""
    beam = [row.comet_after for row in rows]
    if any(score is None for score in beam):
        return None
    from workbench.core.comet.scorer import load_scorer, points

    scorer = load_scorer(model, device=device)
    pairs = sets.pairs["test"]
    scores = points(scorer.score([p.source for p in pairs], picked, sets.references("test")))
    return segment_change([float(s or 0.0) for s in beam], scores, scorer.metric, model)


def picked_metricx(
    rows: list[Sample], picked: list[str], sets: HeldOutSets, settings: MetricXSettings
) -> MetricChange | None:
    """The run's MetricX of the pick against beam's, whose segments "after" scored (None
    where it scored none); lower is better."""
    beam = [row.metricx_after for row in rows]
    if any(score is None for score in beam):
        return None
    from workbench.core.metricx.scorer import load_metricx

    scorer = load_metricx(settings)
    pairs = sets.pairs["test"]
    scores = scorer.score([p.source for p in pairs], picked, sets.references("test"))
    change = segment_change(
        [float(s or 0.0) for s in beam], [round(s, 4) for s in scores], scorer.metric(qe=False),
        settings.model,
    )  # fmt: skip
    return dataclasses.replace(change, lower_is_better=True)


def score_pick(
    sets: HeldOutSets,
    settings: PickSettings,
    picks: list[Pick | None],
    rows: list[Sample],
    judges: NeuralJudges,
    emit: EventSink,
) -> tuple[PickedScores, list[PickedSample]]:
    """The pick against beam search on the test set, and each sentence's pair of them.

    A neural judge that fails now costs the pick nothing else: a warning says so."""
    beam = [row.after for row in rows]
    picked = [p.translation if p is not None else "" for p in picks]
    references = sets.references("test")
    paired = paired_changes(beam, picked, references, sets.bleu_tokenize)
    changes = list(paired.changes.values())
    scorers: list[tuple[str, Callable[[], MetricChange | None]]] = []
    if judges.comet:
        comet = judges.comet
        scorers.append(("COMET", lambda: picked_comet(rows, picked, sets, comet, judges.device)))
    if judges.metricx is not None:
        metricx = judges.metricx
        scorers.append(("MetricX", lambda: picked_metricx(rows, picked, sets, metricx)))
    for name, score in scorers:  # one scorer loaded at a time
        try:
            found = score()
        except Exception as err:  # any failure here (out of memory too) must not cost the run
            found = None
            emit(Note(f"{name} of the pick was not scored: {failure_text(err)}", "warning"))
        if found is not None:
            changes.append(found)
    first = next(p for p in picks if p is not None) if any(picks) else None
    scores = PickedScores(
        picked_by=first.picked_by if first else settings.method,
        metric=first.metric if first else "",
        candidates=settings.candidates.count,
        candidates_from=settings.candidates.source,
        changes=changes,
        n_bootstrap=N_BOOTSTRAP,
        size=len(references),
        distinct=round(
            sum(len(p.candidates) / settings.candidates.count for p in picks if p)
            / max(1, sum(1 for p in picks if p)),
            3,
        ),
    )
    tokenize = sets.bleu_tokenize
    samples = [
        PickedSample(
            source=row.source,
            reference=row.reference,
            beam=row.after,
            picked=text,
            score=pick.score if pick is not None else None,
            distinct=len(pick.candidates) if pick is not None else 0,
            bleu_beam=row.bleu_after,
            bleu_picked=round(sentence_bleu(text, row.reference, tokenize), 2),
            chrf_beam=round(sentence_chrf(row.after, row.reference), 2),
            chrf_picked=round(sentence_chrf(text, row.reference), 2),
        )
        for row, pick, text in zip(rows, picks, picked, strict=True)
    ]
    return scores, samples


@dataclass(frozen=True)
class NeuralJudges:
    """The run's neural metrics, which judge a pick beside BLEU and chrF: its COMET model
    and its MetricX settings (None: the run scores none), on ``device``."""

    comet: str | None
    metricx: MetricXSettings | None
    device: str


def pick_after(
    sets: HeldOutSets,
    settings: PickSettings,
    best_dir: Path,
    rows: list[Sample],
    judges: NeuralJudges,
    emit: EventSink,
) -> tuple[PickedScores, list[PickedSample]]:
    """The test set picked by the best model, scored against beam's "after" (``rows``),
    and said in the run's lines (:func:`~workbench.core.picking.picked_text.picked_lines`)."""
    from workbench.core.picking.picked_text import picked_lines

    picks = pick_test_set(sets, settings, best_dir, judges.device, emit)
    scores, samples = score_pick(sets, settings, picks, rows, judges, emit)
    for line in picked_lines(scores):
        emit(Note(line))
    return scores, samples
