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
from workbench.core.picking.metrics import QE_METRICS, UTILITIES, qe_metric, utility_metric
from workbench.core.picking.picks import PICK_METHODS, Pick, Picker
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
        if self.method not in PICK_METHODS:
            raise WorkbenchError(
                f"--pick must be one of {', '.join(PICK_METHODS)}, got '{self.method}'"
            )
        if self.method == "mbr" and self.utility is None:
            raise WorkbenchError(
                f"--pick mbr needs --utility ({', '.join(UTILITIES)}): the metric that "
                "compares the candidates with each other"
            )
        if self.utility is not None and self.utility not in UTILITIES:
            raise WorkbenchError(
                f"--utility must be one of {', '.join(UTILITIES)}, got '{self.utility}'"
            )
        if self.qe_metric not in QE_METRICS:
            raise WorkbenchError(
                f"--qe-metric must be one of {', '.join(QE_METRICS)}, got '{self.qe_metric}'"
            )

    @property
    def described(self) -> str:
        """The pick in a few words, before its metric loads: ``mbr by chrf``, ``qe by
        cometkiwi``, ``pruned mbr by bleu``."""
        method = f"pruned {self.method}" if self.pruned else self.method
        return f"{method} by {self.utility if self.method == 'mbr' else self.qe_metric}"

    def picker(self, target_lang: str | None) -> Picker:
        """The picker with its metric loaded (a neural one now: one line when it cannot
        be); BLEU is tokenized for ``target_lang`` as the run's BLEU is."""
        if self.method == "qe":
            metric = qe_metric(self.qe_metric, self.qe_model, self.device)
        else:
            tokenize, _ = bleu_tokenizer_for(target_lang)
            metric = utility_metric(
                str(self.utility), tokenize, self.utility_model, device=self.device
            )
        return Picker(self.method, metric, pruned=self.pruned, seed=self.candidates.seed)


def pick_translations(
    translator: Translator,
    lines: list[str],
    picker: Picker,
    candidates: CandidateSettings,
    base: DecodeOptions | None = None,
) -> list[Pick | None]:
    """Each line's pick among its candidates (None for an empty line)."""
    generated = generate_candidates(translator, lines, candidates, base)
    return [picker.pick(c) if c.texts else None for c in generated]
