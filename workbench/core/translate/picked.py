"""Lines translated by a pick: each line's candidates generated, then one picked.

What ``translate --pick`` and the console run (:mod:`.console_session`): the settings a
user gave (:class:`PickSettings`, checked before any model loads), the picking metric
loaded once (:meth:`PickSettings.picker`), and :func:`pick_translations`, which makes
every line's candidates in batches and ranks each line's own.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from workbench.core.config.settings import DEFAULT_QE
from workbench.core.data.sources import looks_like_local_path
from workbench.core.languages import bleu_tokenizer_for
from workbench.core.picking.choices import (
    PICK_METHODS,
    QE_METRICS,
    UTILITIES,
    check_choice,
)
from workbench.core.picking.metrics import (
    DEFAULT_COMET_UTILITY,
    check_metricx_model,
    metricx_settings,
    qe_metric,
    utility_metric,
)
from workbench.core.picking.picks import Pick, Picker
from workbench.core.translate.candidates import CandidateSettings, generate_candidates
from workbench.core.translate.quality import QualityEstimator
from workbench.errors import WorkbenchError

if TYPE_CHECKING:
    from workbench.core.decoding import DecodeOptions
    from workbench.core.translate.translator import Translator


#: Each picking setting with its value when not given: one given without ``--pick`` (or
#: for the other method) would change nothing, so it is one line.
UNSET: dict[str, object] = {
    "candidates": None,
    "candidates_from": "sample",
    "epsilon": None,
    "top_p": 1.0,
    "temperature": 1.0,
    "utility": None,
    "utility_model": None,
    "fast_mbr": False,
    "qe_metric": "cometkiwi",
}
#: The settings that draw candidates, which ``train --objective best|cpo|dpo`` uses too.
DRAWING = ("candidates", "candidates_from", "epsilon", "top_p", "temperature")


class PickRequest(Protocol):
    """What a user asked a pick to be: ``translate``'s and ``interact``'s parsed flags, or a
    run's :class:`~workbench.core.config.run_config.RunConfig` (``train --pick``), whose
    settings have the flags' names (read-only: a frozen config is one too)."""

    @property
    def pick(self) -> str | None: ...  # noqa: D102
    @property
    def candidates(self) -> int | None: ...  # noqa: D102
    @property
    def candidates_from(self) -> str: ...  # noqa: D102
    @property
    def epsilon(self) -> float | None: ...  # noqa: D102
    @property
    def top_p(self) -> float: ...  # noqa: D102
    @property
    def temperature(self) -> float: ...  # noqa: D102
    @property
    def seed(self) -> int: ...  # noqa: D102
    @property
    def utility(self) -> str | None: ...  # noqa: D102
    @property
    def utility_model(self) -> str | None: ...  # noqa: D102
    @property
    def fast_mbr(self) -> bool: ...  # noqa: D102
    @property
    def qe_metric(self) -> str: ...  # noqa: D102
    @property
    def metricx_tokenizer(self) -> str | None: ...  # noqa: D102
    @property
    def metricx_max_length(self) -> int | None: ...  # noqa: D102


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
    metricx_tokenizer: str | None = None  # how a MetricX picker is read (None: its own)
    metricx_max_length: int | None = None

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

    @classmethod
    def requested(cls, asked: PickRequest, qe_model: str | None) -> PickSettings | None:
        """The settings ``asked`` for, checked (None: no pick asked); a picking setting
        given without ``--pick`` is one line, since it would change nothing (a drawing
        setting is not, in a run whose ``--objective`` draws candidates to train on)."""
        given = [flag for flag, unset in UNSET.items() if getattr(asked, flag) != unset]
        if getattr(asked, "objective", "sft") != "sft":  # its candidates are drawn so too
            given = [flag for flag in given if flag not in DRAWING]
        if asked.pick is None:
            if given:
                raise WorkbenchError(
                    f"--{given[0].replace('_', '-')} chooses how a pick is made; "
                    "add --pick qe or --pick mbr"
                )
            return None
        others = {"qe": ("utility", "utility_model", "fast_mbr"), "mbr": ("qe_metric",)}
        misplaced = [f for f in given if f in others.get(asked.pick, ())]
        if misplaced:
            other = "mbr" if asked.pick == "qe" else "qe"
            raise WorkbenchError(
                f"--{misplaced[0].replace('_', '-')} is for --pick {other}, not --pick "
                f"{asked.pick}; leave it out"
            )
        candidates = CandidateSettings.asked(asked)
        return cls(
            asked.pick,
            utility=asked.utility,
            utility_model=asked.utility_model,
            qe_metric=asked.qe_metric,
            qe_model=qe_model,
            pruned=asked.fast_mbr,
            candidates=candidates,
            metricx_tokenizer=asked.metricx_tokenizer,
            metricx_max_length=asked.metricx_max_length,
        )

    @property
    def described(self) -> str:
        """The pick in a few words, before its metric loads: ``mbr by chrf``, ``qe by
        cometkiwi``, ``pruned mbr by bleu``."""
        method = f"pruned {self.method}" if self.pruned else self.method
        return f"{method} by {self.utility if self.method == 'mbr' else self.qe_metric}"

    @property
    def neural_model(self) -> tuple[str, str | None, bool] | None:
        """The neural metric that picks, as ``(kind, model, reference_free)`` with kind
        ``comet`` or ``metricx`` (None: chrF or BLEU pick)."""
        if self.method == "qe":
            kind = "metricx" if self.qe_metric == "metricx" else "comet"
            return kind, self.qe_model, True
        if self.utility in ("comet", "metricx"):
            return str(self.utility), self.utility_model, False
        return None

    def check_model(self) -> None:
        """The picking metric's model checked from its files alone, before anything slow
        (a run checks it before it trains): a missing folder, a MetricX checkpoint that
        cannot score that way or lacks its tokenizer, a COMET folder of the wrong kind.
        A COMET Hub id is asked when the picker loads."""
        neural = self.neural_model
        if neural is None:
            return
        kind, model, reference_free = neural
        if kind == "metricx":
            reading = (self.metricx_tokenizer, self.metricx_max_length)
            check_metricx_model(metricx_settings(model, reading=reading), reference_free)
        elif reference_free:
            QualityEstimator(model or DEFAULT_QE).check()
        elif model and looks_like_local_path(model) and not Path(model).expanduser().exists():
            raise WorkbenchError(
                f"COMET model folder '{Path(model).expanduser()}' does not exist; "
                f"--utility-model takes a COMET folder or a Hub id such as {DEFAULT_COMET_UTILITY}"
            )

    def picker(self, translator: Translator) -> Picker:
        """The picker for ``translator``'s lines with its metric loaded (a neural one now:
        one line when it cannot be, as when its engine cannot draw the candidates asked);
        BLEU is tokenized for the target language as the run's BLEU is."""
        self.candidates.check_engine(translator.backend.name)
        if self.method == "qe":
            reading = (self.metricx_tokenizer, self.metricx_max_length)
            metric = qe_metric(self.qe_metric, self.qe_model, self.device, reading)
        else:
            tokenize, _ = bleu_tokenizer_for(translator.direction.target_lang)
            metric = utility_metric(
                str(self.utility),
                tokenize,
                self.utility_model,
                device=self.device,
                reading=(self.metricx_tokenizer, self.metricx_max_length),
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
