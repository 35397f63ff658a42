"""Any system's output scored: ``workbench score``, for translations made anywhere.

The files are plain text, one segment a line, as ``sacrebleu``, ``comet-score`` and
``comet-compare`` take them (each line stripped, as comet-score strips it). Every
hypothesis file is scored with the metrics asked for, each with its 95% interval; with two
or more, every file after the first is compared with the first on the same segments:
sacreBLEU's paired bootstrap for BLEU, chrF, chrF++ and TER (``sacrebleu --paired-bs``),
and for COMET and QE a bootstrap over segments with comet-compare's paired t-test. Every
segment's score of every metric is kept for ``--json``. Nothing is chosen on these
numbers: they are reported.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from workbench.core.comet.files import locate
from workbench.core.comet.scorer import points
from workbench.core.config.settings import DEFAULT_METRICX
from workbench.core.data.writing_systems import script_share
from workbench.core.evaluate.metricx_scores import check_metricx, metricx_scores
from workbench.core.evaluate.resampling import corpus_score_with_interval
from workbench.core.evaluate.segment_statistics import mean, segment_change, segment_interval
from workbench.core.evaluate.set_scorers import ScoreProgressSink
from workbench.core.evaluate.significance import (
    SACREBLEU_METRICS,
    UNBOUNDED,
    bounded,
    paired_changes,
    sacrebleu_metrics,
)
from workbench.core.events import EventSink, Note
from workbench.core.languages import bleu_tokenizer_for
from workbench.core.metricx.scorer import MetricXSettings
from workbench.core.records.scores import N_BOOTSTRAP, MetricChange
from workbench.core.records.system_scores import MetricScore, ScoreReport, SystemResult
from workbench.errors import WorkbenchError

#: ``--metrics`` names, in the order results are shown: sacreBLEU's four, then the models.
METRICS = ("bleu", "chrf", "chrf++", "ter", "comet", "qe", "metricx", "metricx-qe")
#: ``--metrics`` name -> sacreBLEU's metric as :data:`SACREBLEU_METRICS` names it.
SACREBLEU_NAMES = dict(zip(METRICS[:4], SACREBLEU_METRICS, strict=True))
#: What each metric needs besides the hypotheses.
NEEDS: dict[str, tuple[str, ...]] = {m: ("ref",) for m in ("bleu", "chrf", "chrf++", "ter")}
NEEDS |= {"comet": ("ref", "src"), "qe": ("src",), "metricx": ("ref",), "metricx-qe": ("src",)}
#: Languages whose references pick a BLEU tokenizer other than 13a, checked in this order.
UNSPACED = ("zh", "ja", "ko")


@dataclass(frozen=True)
class ScoreRequest:
    """What ``workbench score`` was asked."""

    hypotheses: list[Path]
    references: Path | None
    sources: Path | None
    metrics: tuple[str, ...]
    comet_model: str
    qe_model: str
    tokenize: str | None = None  # None: from --target-lang, else from the references' script
    target_lang: str | None = None
    n_bootstrap: int = N_BOOTSTRAP
    metricx: MetricXSettings = field(default_factory=lambda: MetricXSettings(DEFAULT_METRICX))


def parse_metrics(text: str) -> tuple[str, ...]:
    """``bleu,chrf,comet`` as the metrics' names, in :data:`METRICS` order; one line for a
    name that is none of them."""
    asked = [m.strip().lower() for m in text.split(",") if m.strip()]
    unknown = [m for m in asked if m not in METRICS]
    if unknown or not asked:
        raise WorkbenchError(
            f"unknown metric {unknown[0]!r} in --metrics; choose from {', '.join(METRICS)}"
            if unknown
            else f"--metrics names no metric; choose from {', '.join(METRICS)}"
        )
    return tuple(m for m in METRICS if m in asked)


def read_segments(path: Path, what: str) -> list[str]:
    """A file's lines, each stripped (a CR too); one line when it is missing, unreadable
    or empty."""
    if not path.is_file():
        raise WorkbenchError(
            f"{what} file '{path}' does not exist; give a text file, one segment a line"
        )
    try:
        # On "\n" alone, as sacreBLEU and comet-score read a file: splitlines() would also
        # split inside a segment on U+2028, U+0085 or a form feed.
        lines = path.read_text(encoding="utf-8").split("\n")
        if lines and lines[-1] == "":
            lines.pop()
    except UnicodeDecodeError as err:
        raise WorkbenchError(
            f"{what} file '{path}' is not UTF-8 text (byte {err.start}); save it as UTF-8"
        ) from None
    if not lines:
        raise WorkbenchError(f"{what} file '{path}' is empty; give one segment a line")
    return [line.strip() for line in lines]


def pick_tokenizer(request: ScoreRequest, references: Sequence[str]) -> tuple[str, str]:
    """The BLEU tokenizer, and why: as given, from ``--target-lang``, or from the
    references' script (sacreBLEU's own default, 13a, scores Chinese as one word a line)."""
    if request.tokenize:
        return request.tokenize, "--tokenize"
    if request.target_lang:
        return bleu_tokenizer_for(request.target_lang)[0], f"--target-lang {request.target_lang}"
    sample = "".join(references[:2000])
    for lang in UNSPACED:
        share = script_share(sample, lang)
        if share is not None and share > 0.5:
            return bleu_tokenizer_for(lang)[0], f"the references are mostly {lang} script"
    return "13a", "sacreBLEU's default; the references are written with spaces"


def check_request(request: ScoreRequest) -> None:
    """One line for a metric asked without the file it needs."""
    given = {"ref": request.references, "src": request.sources}
    flags = {"ref": "--ref", "src": "--src"}
    for metric in request.metrics:
        missing = [flags[n] for n in NEEDS[metric] if given[n] is None]
        if missing:
            raise WorkbenchError(
                f"{metric} needs {' and '.join(missing)}: "
                + ("the reference translations" if "--ref" in missing else "the source sentences")
                + f", one a line; give {' '.join(missing)} FILE, or leave {metric} out of --metrics"
            )


def score_outputs(request: ScoreRequest, emit: EventSink | None = None) -> ScoreReport:
    """Every hypothesis file scored as ``request`` asks, all on the same segments."""
    check_request(request)
    hypotheses = [read_segments(p, "hypothesis") for p in request.hypotheses]
    references = read_segments(request.references, "reference") if request.references else None
    sources = read_segments(request.sources, "source") if request.sources else None
    n = len(hypotheses[0])
    pairs = zip(request.hypotheses, hypotheses, strict=True)
    counts: list[tuple[Path | None, int, str]] = [(p, len(h), "hypothesis") for p, h in pairs]
    if references is not None:
        counts.append((request.references, len(references), "reference"))
    if sources is not None:
        counts.append((request.sources, len(sources), "source"))
    for path, count, what in counts:
        if count != n:
            raise WorkbenchError(
                f"{what} file '{path}' has {count:,} lines but '{request.hypotheses[0]}' has "
                f"{n:,}; every file must have one line per segment, in the same order"
            )

    for metric, model in (("comet", request.comet_model), ("qe", request.qe_model)):
        if metric in request.metrics:  # its hparams.yaml now: a bad model fails first
            locate(model).declared_settings()
    modes = [m for m in ("metricx", "metricx-qe") if m in request.metrics]
    if modes:
        check_metricx(request.metricx, modes)
    scores: list[list[MetricScore]] = [[] for _ in hypotheses]
    changes: list[list[MetricChange]] = [[] for _ in hypotheses]
    tokenize, reason = (None, "")
    signatures: dict[str, str] = {}
    sacrebleu = [SACREBLEU_NAMES[m] for m in request.metrics if m in SACREBLEU_NAMES]
    if sacrebleu and references is not None:
        tokenize, reason = pick_tokenizer(request, references)
        signatures = _sacrebleu(hypotheses, references, tokenize, sacrebleu, request, scores)
        for i, system in enumerate(hypotheses[1:], start=1):
            paired = paired_changes(
                hypotheses[0], system, references, tokenize, request.n_bootstrap
            )
            changes[i] += [paired.changes[m] for m in sacrebleu]
    for metric, model in (("comet", request.comet_model), ("qe", request.qe_model)):
        if metric in request.metrics and sources is not None:
            refs = references if metric == "comet" else None
            _neural(model, sources, hypotheses, refs, request, scores, changes, emit)
    if modes:  # MetricX-24 reads an empty source where none is given
        given = sources if sources is not None else [""] * n
        more_scores, more_changes = metricx_scores(
            request.metricx, modes, given, hypotheses, references, request.n_bootstrap, emit
        )
        for system_scores, added_scores in zip(scores, more_scores, strict=True):
            system_scores += added_scores
        for system_changes, added_changes in zip(changes, more_changes, strict=True):
            system_changes += added_changes
    systems = [
        SystemResult(str(path), s, c)
        for path, s, c in zip(request.hypotheses, scores, changes, strict=True)
    ]
    return ScoreReport(
        segments=n,
        references=str(request.references) if request.references else None,
        sources=str(request.sources) if request.sources else None,
        tokenize=tokenize,
        tokenize_reason=reason,
        signatures=signatures,
        systems=systems,
        n_bootstrap=request.n_bootstrap,
    )


def _sacrebleu(
    hypotheses: list[list[str]],
    references: list[str],
    tokenize: str,
    names: list[str],
    request: ScoreRequest,
    scores: list[list[MetricScore]],
) -> dict[str, str]:
    """Each system's corpus score with sacreBLEU's bootstrap interval, and each segment's
    sentence score; sacreBLEU's signatures, by metric."""
    signatures = {}
    for name in names:
        for system, out in zip(hypotheses, scores, strict=True):
            metric = sacrebleu_metrics(tokenize)[name]
            score = corpus_score_with_interval(metric, system, [references], request.n_bootstrap)
            # Sentence BLEU smoothed as sacreBLEU's sentence_bleu smooths it.
            sentence = sentence_metric(name, tokenize)
            centre = float(getattr(score, "_mean", score.score))
            half = float(getattr(score, "_ci", 0.0))
            ci = bounded([centre - half, centre + half], UNBOUNDED if name == "TER" else 100.0)
            segments = [
                round(float(sentence.sentence_score(h, [r]).score), 2)
                for h, r in zip(system, references, strict=True)
            ]
            out.append(MetricScore(name, round(score.score, 2), ci, segments))
            signatures[name] = str(metric.get_signature().format())
    return signatures


def sentence_metric(name: str, tokenize: str) -> Any:
    """sacreBLEU's metric ``name`` for one sentence at a time (BLEU with effective order,
    as ``sacrebleu.sentence_bleu`` has it)."""
    if name == "BLEU":
        from sacrebleu.metrics import BLEU

        return BLEU(tokenize=tokenize, effective_order=True)
    return sacrebleu_metrics(tokenize)[name]


def _neural(
    model: str,
    sources: list[str],
    hypotheses: list[list[str]],
    references: list[str] | None,
    request: ScoreRequest,
    scores: list[list[MetricScore]],
    changes: list[list[MetricChange]],
    emit: EventSink | None,
) -> None:
    """One COMET model's segment scores (×100) for every system, loaded once, the shared
    sources (and references) encoded once; the scorer is let go of afterwards."""
    from workbench.core.comet.scorer import load_scorer

    if emit is not None:
        emit(Note(f"loading COMET model {model}"))
    scorer = load_scorer(model)
    name = scorer.metric
    progress: Callable[[int, int], None] | None = ScoreProgressSink(name, emit) if emit else None
    scored = [points(s) for s in scorer.score_systems(sources, hypotheses, references, progress)]
    for segments, system in zip(scored, scores, strict=True):
        interval = segment_interval(segments, request.n_bootstrap)
        system.append(MetricScore(name, round(mean(segments), 2), interval, segments, model))
    for segments, against in zip(scored[1:], changes[1:], strict=True):
        against.append(segment_change(scored[0], segments, name, model, request.n_bootstrap))
