"""A run past the references (``train --objective best|cpo|dpo``): what it trains on, the
Trainer that trains on it, and its ceiling.

After "before" (the starting model on the held-out sets), rank 0 draws each training
source's candidates with the starting model and ranks them (:mod:`workbench.core.preferences`,
cached, so the other ranks, a resume and a rerun with another ``--beta`` read them back);
the run folder gets the choice made from them as ``preferences.jsonl``. ``best`` trains on
the top candidate as an ordinary target; ``cpo`` and ``dpo`` on the preference pairs
(:mod:`.preference_trainer`), DPO against a frozen copy of the starting model (none with
LoRA: the adapters switched off are the starting model).

After "after", the ceiling: the starting model picking on the test set by the ranker's
pick (:func:`~.objective.ceiling_pick`), against its own beam search ("before"). The test
set ranks and chooses nothing here.
"""

from __future__ import annotations

import dataclasses
import threading
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbench.core.data.pair import Pair
from workbench.core.evaluate.picked_after import NeuralJudges, pick_test_set, score_pick
from workbench.core.events import Note, Phase, RunDone
from workbench.core.preferences.preference_set import PreferenceSet, preference_records
from workbench.core.preferences.records import (
    PreferenceRecord,
    read_preferences,
    write_preferences,
)
from workbench.core.records.objective_record import ObjectiveRecord
from workbench.core.records.picked_scores import PickedScores
from workbench.core.records.run_records import Sample
from workbench.core.records.scores import SetScores
from workbench.core.records.summary import RunSummary
from workbench.core.run_folder.layout import RunFolder
from workbench.core.run_folder.summary_file import write_summary
from workbench.core.train import distributed
from workbench.core.train.objective import Objective
from workbench.errors import failure_text

if TYPE_CHECKING:
    from workbench.core.evaluate.before_after import HeldOutSets
    from workbench.core.train.run_start import RunContext


@dataclass(frozen=True)
class ObjectiveData:
    """What a run past the references trains on, made from its starting model."""

    objective: Objective
    ranker: str  # the metric that ranked, as tables name it ("chrF")
    records: list[PreferenceRecord]
    sources: int  # training sources ranked
    skipped: int  # sources with no preference to learn
    stopped: bool  # the stop flag ended the ranking (what was ranked is cached)

    @property
    def targets(self) -> list[Pair]:
        """``best``'s training pairs: each source with its top candidate as the target."""
        return [Pair(r.source, r.chosen) for r in self.records]

    @property
    def triples(self) -> list[tuple[str, str, str]]:
        """CPO's and DPO's rows: source, chosen, rejected."""
        return [(r.source, r.chosen, r.rejected) for r in self.records]

    def record(self, ceiling: PickedScores | None = None) -> ObjectiveRecord:
        """The summary's ``objective`` block."""
        o = self.objective
        return ObjectiveRecord(
            objective=o.name,
            rank_by=o.rank_by,
            ranker=self.ranker,
            candidates=o.candidates.count,
            candidates_from=o.candidates.source,
            sources=self.sources,
            pairs=len(self.records),
            skipped=self.skipped,
            beta=o.beta if o.preference else None,
            nll_weight=o.nll_weight if o.name == "cpo" else None,
            ceiling=ceiling,
        )


def objective_data(
    run: RunContext, model: Any, tokenizer: Any, direction: Any, options: Any, stop: threading.Event
) -> ObjectiveData | None:
    """The training data of ``run``'s objective, made from the starting ``model`` (None:
    ``sft``, which trains on the references). ``options``: the run's decoding, the base of
    the candidates' (their beams' length bound, the n-gram block).

    A resumed run trains on the ``preferences.jsonl`` it wrote, whatever the cache holds
    now (cleared, or keyed anew by an upgraded library). Under torchrun rank 0 ranks while
    the others wait, and every rank learns from rank 0 whether it was stopped."""
    objective = Objective.of(run.config)
    if objective is None:
        return None
    pairs = list(run.data.train)
    kept = RunFolder(run.run_dir).preferences
    if kept.is_file():
        records = read_preferences(kept)
        ranker = records[0].ranked_by if records else objective.rank_by
        run.emit(Note(f"preferences: {len(records):,} read back from the run's {kept.name}"))
        skipped = len(pairs) - len(records)
        return ObjectiveData(objective, ranker, records, len(pairs), skipped, False)
    loaded = (model, tokenizer, direction)
    # rank 0 ranks; the others wait for it here, then read its sealed entry
    first = _rank(run, objective, pairs, loaded, options, stop) if run.main else None
    if distributed.from_main(first is not None and first[0].stopped):
        ranker = first[1] if first is not None else objective.rank_by
        return ObjectiveData(objective, ranker, [], len(pairs), 0, True)
    found, ranker = first or _rank(run, objective, pairs, loaded, options, stop)
    if run.main:
        write_preferences(kept, found.records)
        run.emit(Note(found.summary))
    return ObjectiveData(
        objective, ranker, list(found.records), found.ranked, found.skipped, found.stopped
    )


def _rank(
    run: RunContext,
    objective: Objective,
    pairs: list[Pair],
    loaded: tuple[Any, Any, Any],
    options: Any,
    stop: threading.Event,
) -> tuple[PreferenceSet, str]:
    """The ranked candidates (cached: ranked now, or read back) and the ranker's name."""
    from workbench.core.model.load import fp32_decoding
    from workbench.core.translate.translator import Translator

    config, emit = run.config, run.emit
    translator = Translator(*loaded, config.max_source_length)
    pick = dataclasses.replace(objective.ceiling, device=run.precision.device)
    ranker = pick.picker(translator).metric
    if run.main:
        emit(
            Phase(
                "rank",
                f"{objective.candidates.count} candidates for each of {len(pairs):,} "
                f"training sources, ranked by {ranker.name}",
            )
        )
        if distributed.is_distributed():
            emit(
                Note(
                    f"rank 0 ranks them while the other processes wait, up to "
                    f"--ddp-timeout {config.ddp_timeout} s"
                )
            )
    with fp32_decoding():
        found = preference_records(
            translator,
            pairs,
            objective.name,
            objective.candidates,
            ranker,
            model=config.model,
            ranker_model=_ranker_model(pick),
            base=options,
            emit=emit,
            stop=stop,
        )
    return found, ranker.name


def _ranker_model(pick: Any) -> str | None:
    """The neural ranker's model as the cache key names it, with how a MetricX model is
    read (its tokenizer and input length change its scores); None: chrF or BLEU."""
    neural = pick.neural_model
    if neural is None:
        return None
    kind, model, _ = neural
    if kind != "metricx":
        return str(model)
    return f"{model} (tokenizer {pick.metricx_tokenizer}, max length {pick.metricx_max_length})"


def reference_copy(model: Any, data: ObjectiveData | None, lora: bool) -> Any:
    """DPO's frozen reference: a copy of the starting model in eval mode, made before any
    training step (None for another objective, and under LoRA, whose adapters switched
    off are the starting model)."""
    if data is None or data.objective.name != "dpo" or lora:
        return None
    from workbench.core.train.preference_trainer import reference_model

    return reference_model(model, lora)


def ceiling(
    run: RunContext,
    data: ObjectiveData,
    held_out: HeldOutSets,
    rows: list[Sample],
) -> PickedScores | None:
    """The starting model picking on the test set by the ranker's pick, against its own
    beam search (``rows``' "before"), judged by BLEU, chrF and the run's neural metrics;
    None, with a warning, where that fails (the tuned model and its scores are kept
    whatever)."""
    from workbench.core.evaluate.metricx_scores import run_metricx

    emit, device = run.emit, run.precision.device
    judges = NeuralJudges(run.config.comet, run_metricx(run.config, device), device)
    start = Path(run.config.model)
    beam = [
        dataclasses.replace(
            row,
            after=row.before,
            bleu_after=row.bleu_before,
            chrf_after=row.chrf_before,
            comet_after=row.comet_before,
            metricx_after=row.metricx_before,
        )
        for row in rows
    ]
    try:
        picks = pick_test_set(held_out, data.objective.ceiling, start, judges.device, emit)
        scores, _ = score_pick(held_out, data.objective.ceiling, picks, beam, judges, emit)
    except Exception as err:  # the tuned model and its scores are kept whatever
        emit(Note(f"the ceiling was not measured: {failure_text(err)}", "warning"))
        return None
    return scores


def stopped_while_ranking(
    run: RunContext, summary_with: partial[RunSummary], data: ObjectiveData
) -> RunSummary:
    """A run stopped while it ranked: its summary, and how to go on (what was ranked is
    in the cache, so ``--resume`` ranks only the rest)."""
    summary = summary_with(objective=data.record())
    if run.main:
        write_summary(run.run_dir, summary)
        run.emit(
            Note(
                "stopped while ranking the training sources' candidates, before any "
                "training step; continue with: workbench train --resume"
            )
        )
        run.emit(RunDone("stopped", str(run.run_dir), summary))
    return summary


def worse_than_start(run: RunContext, validation: SetScores) -> None:
    """Say so when the tuned model's validation BLEU is below the starting model's: the
    best epoch is chosen among the tuned ones, so a run past the references can publish a
    model worse than the one it started from, which is still where it was."""
    if validation.bleu_after >= validation.bleu_before:
        return
    run.emit(
        Note(
            f"the tuned model is below its starting model on validation (BLEU "
            f"{validation.bleu_before:.2f} → {validation.bleu_after:.2f}); the starting "
            f"model is unchanged in {run.config.model}",
            "warning",
        )
    )
