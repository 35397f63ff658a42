"""The metrics a pick is ranked by, each a small object: a name, which way is better, and
one batch scoring function.

QE reranking scores each candidate against its source alone (a reference-free metric:
CometKiwi, MetricX-QE); MBR scores each candidate against every other one as if that one
were the reference (a utility: chrF, BLEU, COMET, MetricX). Both only call
:attr:`PickingMetric.score` on batches, so a metric is whatever can score ``(sources,
hypotheses, references)`` segment by segment; MetricX's lower-is-better scale is the
metric's ``higher_is_better`` False, which the pick and MBR read.

chrF is sacreBLEU's sentence chrF with its defaults (character 6-grams, no word n-grams,
β = 2, whitespace ignored), on its 0–100 scale. BLEU is sacreBLEU's sentence BLEU
(``effective_order=True``, exponential smoothing, as ``sacrebleu.sentence_bleu``) with the
tokenizer of the target language that the run's corpus BLEU uses (``zh`` for Chinese,
``13a`` by default).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from workbench.core.config.settings import DEFAULT_QE
from workbench.core.picking.choices import QE_METRICS, UTILITIES, check_choice
from workbench.errors import WorkbenchError

if TYPE_CHECKING:
    from workbench.core.metricx.scorer import MetricXSettings

#: ``score(sources, hypotheses, references)``: one score per segment; references None
#: for a reference-free metric.
BatchScore = Callable[[Sequence[str], Sequence[str], "Sequence[str] | None"], list[float]]

#: How a MetricX model is read: its tokenizer and input length (None: the model's own).
MetricXReading = tuple["str | None", "int | None"]
#: The reference-based COMET model an MBR with ``--utility comet`` compares candidates by.
DEFAULT_COMET_UTILITY = "Unbabel/wmt22-comet-da"


@dataclass(frozen=True)
class PickingMetric:
    """A metric as a pick uses it: its name, its direction and a batch scoring function.

    ``family`` groups metrics that share a model (``comet`` for COMET-22 and CometKiwi,
    ``metricx``, ``surface`` for chrF and BLEU): a pick's verdict must come from another
    family than the one that picked (metric bias)."""

    name: str  # as a table shows it: "chrF", "BLEU", "COMET-22", "CometKiwi-22"
    higher_is_better: bool
    reference_free: bool
    family: str
    score: BatchScore

    def better(self, a: float, b: float) -> bool:
        """Whether score ``a`` is strictly better than ``b`` by this metric."""
        return a > b if self.higher_is_better else a < b


def chrf_metric() -> PickingMetric:
    """sacreBLEU's sentence chrF with its defaults (0–100)."""
    from sacrebleu.metrics.chrf import CHRF

    return sentence_metric("chrF", CHRF())


def bleu_metric(tokenize: str = "13a") -> PickingMetric:
    """sacreBLEU's sentence BLEU (effective order, exponential smoothing) with ``tokenize``."""
    from sacrebleu.metrics.bleu import BLEU

    return sentence_metric("BLEU", BLEU(tokenize=tokenize, effective_order=True))


def sentence_metric(name: str, scorer: Any) -> PickingMetric:
    """A sacreBLEU metric (``scorer``: a ``CHRF`` or ``BLEU``) scored sentence by sentence
    against one reference each: a surface utility, higher is better."""

    def score(_: Sequence[str], hyps: Sequence[str], refs: Sequence[str] | None) -> list[float]:
        return [
            scorer.sentence_score(h, [r]).score for h, r in zip(hyps, _needed(refs), strict=True)
        ]

    return PickingMetric(name, True, False, "surface", score)


def comet_metric(model: str, reference_free: bool, device: str | None = None) -> PickingMetric:
    """A COMET model (our own inference, :mod:`workbench.core.comet`) on the ×100 scale:
    ``reference_free`` asks for a QE model (CometKiwi), else one that reads a reference
    (COMET-22, an MBR utility). The wrong kind is one line, at load."""
    from workbench.core.comet.scorer import load_scorer, points

    scorer = load_scorer(model, device=device)
    if scorer.needs_reference == reference_free:
        wanted = (
            f"a reference-free model such as {DEFAULT_QE}"
            if reference_free
            else (f"a model that reads a reference, such as {DEFAULT_COMET_UTILITY}")
        )
        kind = "against a reference" if scorer.needs_reference else "without a reference"
        raise WorkbenchError(
            f"COMET model '{model}' scores {kind}; "
            f"{'--qe' if reference_free else '--utility-model'} takes {wanted}"
        )

    def score(srcs: Sequence[str], hyps: Sequence[str], refs: Sequence[str] | None) -> list[float]:
        scores = points(scorer.score(srcs, hyps, None if reference_free else _needed(refs)))
        scorer.forget()  # a long session keeps no encodings between lines
        return scores

    return PickingMetric(scorer.metric, True, reference_free, "comet", score)


def metricx_settings(
    model: str | None, device: str | None = None, reading: MetricXReading | None = None
) -> MetricXSettings:
    """The MetricX model a pick reads: ``model``, or MetricX-24's default for None or for
    ``--qe`` alone (which names CometKiwi), read with ``reading``'s tokenizer and length."""
    from workbench.core.config.settings import DEFAULT_METRICX
    from workbench.core.metricx.scorer import MetricXSettings

    name = DEFAULT_METRICX if model in (None, DEFAULT_QE) else str(model)
    tokenizer, max_length = reading or (None, None)
    return MetricXSettings(name, tokenizer, max_length, device=device)


def check_metricx_model(settings: MetricXSettings, reference_free: bool) -> None:
    """The MetricX model found, able to score that way, and its tokenizer found, from its
    files alone (no weight read): one line before anything slow."""
    from workbench.core.metricx.files import locate, tokenizer_location

    source = locate(settings.model)
    source.check_mode(qe=reference_free)
    tokenizer_location(source, settings.tokenizer)


def metricx_metric(
    model: str | None,
    reference_free: bool,
    device: str | None = None,
    reading: MetricXReading | None = None,
) -> PickingMetric:
    """MetricX (our own inference, :mod:`workbench.core.metricx`; 0-25, lower is better):
    against a reference (an MBR utility), or as MetricX-QE without one. ``model`` None, or
    ``--qe`` alone (which names CometKiwi), is MetricX-24's default checkpoint. A
    checkpoint that cannot score that way (MetricX-23 keeps its QE and reference models
    apart) is one line, before its weights are read."""
    from workbench.core.metricx.scorer import load_metricx

    settings = metricx_settings(model, device, reading)
    check_metricx_model(settings, reference_free)
    scorer = load_metricx(settings)

    def score(srcs: Sequence[str], hyps: Sequence[str], refs: Sequence[str] | None) -> list[float]:
        return scorer.score(srcs, hyps, None if reference_free else _needed(refs))

    return PickingMetric(scorer.metric(qe=reference_free), False, reference_free, "metricx", score)


def utility_metric(
    name: str,
    bleu_tokenize: str,
    model: str | None = None,
    device: str | None = None,
    reading: MetricXReading | None = None,
) -> PickingMetric:
    """The MBR utility ``--utility`` names (``model``: the neural one's, else its default)."""
    check_choice("--utility", name, UTILITIES)
    if name == "chrf":
        return chrf_metric()
    if name == "bleu":
        return bleu_metric(bleu_tokenize)
    if name == "comet":
        return comet_metric(model or DEFAULT_COMET_UTILITY, reference_free=False, device=device)
    return metricx_metric(model, reference_free=False, device=device, reading=reading)


def qe_metric(
    name: str,
    model: str | None = None,
    device: str | None = None,
    reading: MetricXReading | None = None,
) -> PickingMetric:
    """The reference-free metric ``--qe-metric`` names (``model``: ``--qe``'s, else its
    default)."""
    check_choice("--qe-metric", name, QE_METRICS)
    if name == "cometkiwi":
        return comet_metric(model or DEFAULT_QE, reference_free=True, device=device)
    return metricx_metric(model, reference_free=True, device=device, reading=reading)


def _needed(refs: Sequence[str] | None) -> Sequence[str]:
    if refs is None:
        raise ValueError("this metric scores against a reference")
    return refs
