"""Lines translated by a pick: each line's candidates generated, then one picked.

What ``translate --pick`` and the console run (:mod:`.console_session`): the settings a
user gave (:class:`PickSettings`, checked before any model loads), the picking metric
loaded once (:meth:`PickSettings.picker`), and :func:`pick_translations`, which makes
every line's candidates in batches and ranks each line's own.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from workbench.core.languages import bleu_tokenizer_for
from workbench.core.picking.choices import PICK_METHODS, QE_METRICS, UTILITIES, check_choice
from workbench.core.picking.metrics import metricx_unwired, qe_metric, utility_metric
from workbench.core.picking.picks import Pick, Picker
from workbench.core.translate.candidates import CandidateSettings, generate_candidates
from workbench.errors import WorkbenchError

if TYPE_CHECKING:
    from workbench.core.decoding import DecodeOptions
    from workbench.core.translate.translator import Translator


@dataclass(frozen=True)
class PickSettings:
    """How lines are picked: the method, its metric and the candidates (checked on
    creation, so a mistake is one line before any model loads)."""

    method: str  # "qe" or "mbr"
    utility: str | None = None  # mbr: chrf, bleu, comet or metricx
    utility_model: str | None = None  # the COMET (or MetricX) model of a neural utility
    qe_metric: str = "cometkiwi"  # qe: cometkiwi or metricx
    qe_model: str | None = None  # --qe's model (None: the metric's default)
    pruned: bool = False  # MBR by confidence-based pruning
    candidates: CandidateSettings = field(default_factory=CandidateSettings)
    device: str | None = None

    def __post_init__(self) -> None:
        check_choice("--pick", self.method, PICK_METHODS)
        if self.method == "mbr" and self.utility is None:
            raise WorkbenchError(
                f"--pick mbr needs --utility ({', '.join(UTILITIES)}): the metric that "
                "compares the candidates with each other"
            )
        if self.utility is not None:
            check_choice("--utility", self.utility, UTILITIES)
        check_choice("--qe-metric", self.qe_metric, QE_METRICS)
        # MetricX is refused here, before any model loads, while it is not wired into
        # picking: delete these two lines once metrics.metricx_metric scores.
        if (self.qe_metric if self.method == "qe" else self.utility) == "metricx":
            raise metricx_unwired(reference_free=self.method == "qe")

    def picker(self, translator: Translator) -> Picker:
        """The picker for ``translator``'s lines with its metric loaded (a neural one now:
        one line when it cannot be, as when its engine cannot draw the candidates asked);
        BLEU is tokenized for the target language as the run's BLEU is."""
        self.candidates.check_engine(translator.backend.name)
        if self.method == "qe":
            metric = qe_metric(self.qe_metric, self.qe_model, self.device)
        else:
            tokenize, _ = bleu_tokenizer_for(translator.direction.target_lang)
            metric = utility_metric(
                str(self.utility), tokenize, self.utility_model, device=self.device
            )
        return Picker(self.method, metric, pruned=self.pruned, seed=self.candidates.seed)


@dataclass(frozen=True)
class PickedLine:
    """One line translated by a pick: the pick (None for an empty line) and what the user
    is told about the line, the notices translating it once would give."""

    pick: Pick | None
    notices: tuple[str, ...] = ()


def pick_translations(
    translator: Translator,
    lines: list[str],
    picker: Picker,
    candidates: CandidateSettings,
    base: DecodeOptions | None = None,
) -> list[PickedLine]:
    """Each line's pick among its candidates, with its notices."""
    generated = generate_candidates(translator, lines, candidates, base)
    return [PickedLine(picker.pick(c) if c.texts else None, c.notices) for c in generated]
