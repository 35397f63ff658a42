"""The decoding study's quality-aware arms: N candidates a sentence, one picked by MBR
(chrF, BLEU) or by a QE model, each with what it costs beside beam search.

Every arm picks among the same candidates (generated once, as ``translate --pick``
generates them), so the arms differ only in their metric; an arm's time is the
candidates' generation plus its own scoring, what it would cost alone. A metric used to
pick overrates its own pick (Kovacs, Deutsch & Freitag, WMT 2024): an arm's row leads
with a metric that did not pick (BLEU when chrF picked, chrF when BLEU picked) and marks
the other "(used to pick)". No neural judge of another family is at hand here, so a QE
arm is judged by BLEU and chrF, which did not pick it either.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from workbench.core.translate.candidates import DEFAULT_CANDIDATES, CandidateSettings
from workbench.core.translate.picked import PickSettings
from workbench.errors import WorkbenchError

if TYPE_CHECKING:
    from workbench.core.decoding import DecodeOptions
    from workbench.core.evaluate.significance import SystemScore
    from workbench.core.picking.picks import Candidates
    from workbench.core.translate.translator import Translator

#: The beam search an arm's time is a multiple of (one of the study's strategies).
BEAM_BASELINE = "beam 4"
#: The surface metrics an arm is scored by; a row reads the one that did not pick.
SURFACE = ("BLEU", "chrF")
#: Sentences whose candidates are generated between two progress reports (and stop checks).
CHUNK = 16


@dataclass(frozen=True)
class PickArm:
    """A quality-aware arm: its name in the tables and how it picks."""

    name: str
    pick: PickSettings


def pick_arms(count: int = DEFAULT_CANDIDATES, qe_model: str | None = None) -> list[PickArm]:
    """MBR by chrF and by BLEU among ``count`` candidates, and QE when a QE model is given."""
    candidates = CandidateSettings(count)
    arms = [
        PickArm(f"mbr chrF N={count}", PickSettings("mbr", utility="chrf", candidates=candidates)),
        PickArm(f"mbr BLEU N={count}", PickSettings("mbr", utility="bleu", candidates=candidates)),
    ]
    if qe_model is not None:
        qe = PickSettings("qe", qe_model=qe_model, candidates=candidates)
        arms.append(PickArm(f"qe N={count}", qe))
    return arms


@dataclass
class PickResult:
    """What one arm did on the set, and what it cost beside beam search."""

    name: str
    picked_by: str  # "mbr:chrF", "qe:CometKiwi-22"
    metric: str  # the metric that picked, as marked "(used to pick)"
    candidates: int  # drawn a sentence
    distinct: float  # distinct candidates a sentence, on average
    bleu: float
    bleu_ci: list[float]
    chrf: float
    chrf_ci: list[float]
    bleu_p: float  # against greedy
    length_ratio: float
    ms_per_sentence: float  # the candidates generated, then picked
    scoring_ms_per_sentence: float  # the pick's own scoring
    candidates_per_second: float  # drawn, while generating
    times_beam: float | None  # ms_per_sentence over BEAM_BASELINE's (None: not run)
    example: list[str]
    #: chrF's paired p against greedy; None in a study saved without it.
    chrf_p: float | None = None

    @property
    def leading(self) -> str:
        """The metric the row leads with: one that did not pick."""
        return "chrF" if self.metric == "BLEU" else "BLEU"

    def p(self, metric: str) -> float | None:
        """The paired p-value against greedy of ``metric`` ("BLEU" or "chrF")."""
        return self.chrf_p if metric == "chrF" else self.bleu_p


@dataclass(frozen=True)
class ArmOutputs:
    """An arm's picks over the set and its timings, before they are scored."""

    arm: PickArm
    picked_by: str
    metric: str
    translations: list[str]
    distinct: float
    generation_s: float
    scoring_s: float
    drawn: int


def run_pick_arms(
    translator: Translator,
    sources: list[str],
    arms: Sequence[PickArm],
    base: DecodeOptions,
    on_progress: Callable[[str, int, int], None] | None = None,
    stop: threading.Event | None = None,
) -> list[ArmOutputs]:
    """Generate the arms' candidates once per candidate setting, then let each arm pick."""
    from workbench.core.translate.candidates import generate_candidates

    generated: dict[CandidateSettings, tuple[list[Candidates], float]] = {}
    for settings in dict.fromkeys(arm.pick.candidates for arm in arms):
        started, candidates = time.perf_counter(), []
        for at in range(0, len(sources), CHUNK):
            if stop is not None and stop.is_set():
                raise WorkbenchError("the decoding study was stopped before it finished")
            if on_progress:
                on_progress(f"candidates ×{settings.count}", at, len(sources))
            chunk = sources[at : at + CHUNK]
            candidates += generate_candidates(translator, chunk, settings, base)
        generated[settings] = candidates, time.perf_counter() - started
    outputs = []
    for arm in arms:
        if on_progress:
            on_progress(arm.name, 0, 1)
        candidates, generation_s = generated[arm.pick.candidates]
        picker = arm.pick.picker(translator)  # a neural metric loads now, before the timing
        started = time.perf_counter()
        picks = [picker.pick(c) if c.texts else None for c in candidates]
        scoring_s = time.perf_counter() - started
        outputs.append(
            ArmOutputs(
                arm,
                picker.label,
                picker.metric.name,
                [p.translation if p is not None else "" for p in picks],
                sum(len(c.texts) for c in candidates) / max(1, len(candidates)),
                generation_s,
                scoring_s,
                sum(c.drawn for c in candidates),
            )
        )
    return outputs


def pick_result(arm: ArmOutputs, score: SystemScore, beam_ms: float | None) -> PickResult:
    """An arm's row: its scores, its time a sentence, and that time against beam search's
    ``beam_ms`` a sentence (None: no beam search was run)."""
    size = max(1, len(arm.translations))
    ms = 1000 * (arm.generation_s + arm.scoring_s) / size
    return PickResult(
        name=arm.arm.name,
        picked_by=arm.picked_by,
        metric=arm.metric,
        candidates=arm.arm.pick.candidates.count,
        distinct=round(arm.distinct, 2),
        bleu=score.bleu,
        bleu_ci=score.bleu_ci,
        chrf=score.chrf,
        chrf_ci=score.chrf_ci,
        bleu_p=score.bleu_p,
        length_ratio=score.length_ratio,
        ms_per_sentence=round(ms, 2),
        scoring_ms_per_sentence=round(1000 * arm.scoring_s / size, 2),
        candidates_per_second=round(arm.drawn / max(arm.generation_s, 1e-9), 1),
        times_beam=round(ms / beam_ms, 2) if beam_ms else None,
        example=arm.translations[:1],
        chrf_p=score.chrf_p,
    )


def pick_findings(picks: Sequence[PickResult], greedy_bleu: float) -> str:
    """A sentence per arm: its leading metric against greedy's, and its cost."""
    parts = []
    for r in picks:
        lead, used = (r.chrf, r.bleu) if r.leading == "chrF" else (r.bleu, r.chrf)
        against = f" (greedy: {greedy_bleu:.2f})" if r.leading == "BLEU" else ""
        cost = f", {r.times_beam:.1f}× {BEAM_BASELINE}'s time" if r.times_beam else ""
        if r.metric in SURFACE:  # the other surface metric is the one that picked
            picked = f"with {r.metric} {used:.2f} (used to pick)"
        else:
            other = "BLEU" if r.leading == "chrF" else "chrF"
            picked = f"and {other} {used:.2f}, picked by {r.metric} (used to pick)"
        parts.append(f"{r.name} reaches {r.leading} {lead:.2f}{against}, {picked}{cost}.")
    if picks:
        parts.append(
            "A metric used to pick overrates its own pick, so each arm is read by one "
            "that did not pick it; no neural judge of another family (MetricX, COMET) "
            "was at hand."
        )
    return " ".join(parts)
