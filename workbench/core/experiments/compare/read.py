"""Read run folders into one :class:`Comparison`.

Every number comes from what the runs wrote (``config.json``, ``summary.json``,
``metrics.jsonl``, ``test_translations.jsonl``); nothing is decoded again. The paired
tests need both runs' translations of the *same* sentences scored the same way, so they
are run only when the test sets (sources and references, in order) and the BLEU
tokenizer match; otherwise the comparison says why not and shows each run's own scores.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from workbench.core.config.run_config import DEFAULT_OUTPUT_DIR
from workbench.core.evaluate.metrics import sentence_chrf
from workbench.core.evaluate.segment_statistics import segment_change
from workbench.core.evaluate.significance import randomisation_p, score_before_after
from workbench.core.experiments.table import RunRow, run_row
from workbench.core.live.run_metrics import read_run_metrics
from workbench.core.records.picked_scores import PickedScores
from workbench.core.records.run_records import Sample
from workbench.core.records.scores import LengthBucket, MetricChange, SetScores
from workbench.core.records.summary import RunSummary
from workbench.core.report.contents import EpochRow
from workbench.core.report.read import epoch_rows, train_loss_points
from workbench.core.run_folder.layout import OutputFolder, RunFolder
from workbench.core.run_folder.samples import read_translations
from workbench.core.run_folder.saved_config import SavedConfig, read_saved_config
from workbench.core.run_folder.summary_file import read_summary
from workbench.core.views.numbers import LETTERS
from workbench.errors import WorkbenchError

#: Settings that say where a run wrote, not how it trained.
NOT_COMPARED = ("output_dir",)
#: Settings that change how the test set is decoded (a difference is part of the result).
DECODING_SETTINGS = (
    "num_beams",
    "max_new_tokens",
    "no_repeat_ngram_size",
    "target_label",
    "max_source_length",
)
#: Sentences shown each way per pair of runs.
N_DIFFERENCES = 3
#: Where comparisons are written under the output folder.
COMPARISONS_FOLDER = "comparisons"


@dataclass
class ComparedRun:
    """One run as the comparison sees it."""

    letter: str  # "A" for the first (the baseline of every test), "B", ...
    row: RunRow
    saved: SavedConfig  # config.json: its settings (and, apart, the run's records)
    epochs: list[EpochRow]
    train_loss: list[tuple[float, float]]
    test_rows: list[Sample]  # test_translations.jsonl
    bleu_tokenize: str | None
    by_length: list[LengthBucket] | None = None  # None: the run recorded none
    picked: PickedScores | None = None  # its test set picked against beam (--pick)

    @property
    def run_id(self) -> str:
        """The run folder's name."""
        return self.row.run_id


@dataclass(frozen=True)
class PairedResult:
    """Run ``letter`` against the first run on their shared test set.

    ``scores`` is :class:`SetScores` with the first run as "before" and this run as
    "after": each side's bootstrap interval, the paired difference with its interval and
    the paired-bootstrap p-values. ``*_p_ar`` are approximate randomisation's.
    """

    letter: str
    scores: SetScores
    bleu_p_ar: float
    chrf_p_ar: float


@dataclass(frozen=True)
class Difference:
    """One test sentence where two runs differ, with each run's sentence chrF."""

    source: str
    reference: str
    first: str  # the first run's translation
    other: str
    chrf_first: float
    chrf_other: float

    @property
    def gap(self) -> float:
        """How much better the other run's translation scores (negative: worse)."""
        return round(self.chrf_other - self.chrf_first, 2)


@dataclass
class Comparison:
    """Everything ``compare`` shows."""

    runs: list[ComparedRun]
    #: Settings whose values differ between the runs: name -> one value per run.
    settings: dict[str, list[Any]]
    test_label: str | None  # "test (10% held out, seed 42, 425)" when the runs share it
    paired: list[PairedResult] = field(default_factory=list)
    #: Runs without a paired test against A: letter -> why (another test set, unfinished).
    not_paired: dict[str, str] = field(default_factory=dict)
    #: letter -> (where it is better than the first, where it is worse).
    differences: dict[str, tuple[list[Difference], list[Difference]]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    figures: dict[str, str] = field(default_factory=dict)  # key -> SVG text
    generated: str = ""

    @property
    def first(self) -> ComparedRun:
        """The baseline every test is against."""
        return self.runs[0]


def resolve_run(name: str, output_root: Path) -> Path:
    """A run folder from its name under ``<output>/runs`` or from a path."""
    for path in (OutputFolder(output_root).run(name), Path(name).expanduser()):
        if path.is_dir() and RunFolder(path).is_run:
            return path
    raise WorkbenchError(
        f"no run '{name}' under {OutputFolder(output_root).runs}; give a run "
        "folder or a run id as `workbench runs` lists them"
    )


def read_run(letter: str, run_dir: Path) -> ComparedRun:
    """One run folder read back (what a run killed early lacks stays empty)."""
    folder = RunFolder(run_dir)
    saved = read_saved_config(run_dir) or SavedConfig({})
    summary = read_summary(run_dir) or RunSummary()
    metrics = read_run_metrics(folder.metrics)
    tokenize = saved.value("bleu_tokenize")
    return ComparedRun(
        letter=letter,
        row=run_row(run_dir, saved, summary),
        saved=saved,
        epochs=epoch_rows(summary, metrics),
        train_loss=train_loss_points(metrics),
        test_rows=read_translations(run_dir, "test")[0],
        bleu_tokenize=tokenize if isinstance(tokenize, str) else None,
        by_length=summary.by_length,
        picked=summary.picked,
    )


def differing_settings(runs: list[ComparedRun]) -> dict[str, list[Any]]:
    """The settings whose values are not the same in every run, in config order (only
    settings: the precision and cleaning records config.json holds beside them are not)."""
    names: list[str] = []
    for run in runs:
        names += [k for k in run.saved.settings if k not in names and k not in NOT_COMPARED]
    values = {name: [run.saved.value(name) for run in runs] for name in names}
    return {name: vals for name, vals in values.items() if any(v != vals[0] for v in vals[1:])}


def why_not_paired(first: ComparedRun, other: ComparedRun) -> str:
    """Why these two runs cannot be tested paired ("" when they can)."""
    for run in (first, other):
        if run.row.status != "finished" or not run.test_rows:
            return (
                f"run {run.letter} ({run.run_id}) has no test translations (status: "
                f"{run.row.status}); a paired test needs two finished runs"
            )
    a, b = first.row.test, other.row.test
    if a is not None and b is not None and (a.name, a.size) != (b.name, b.size):
        return (
            f"run {other.letter}'s test set is {b.name} ({b.size:,} sentences) and run "
            f"{first.letter}'s is {a.name} ({a.size:,}); a paired test needs the same "
            "sentences"
        )
    if [(r.source, r.reference) for r in first.test_rows] != [
        (r.source, r.reference) for r in other.test_rows
    ]:
        return (
            f"runs {first.letter} and {other.letter} were tested on different sentences "
            f"({len(first.test_rows):,} and {len(other.test_rows):,}; other data, split "
            "or seed); a paired test needs the same sentences"
        )
    if first.bleu_tokenize != other.bleu_tokenize:
        return (
            f"run {other.letter} scores BLEU with tokenizer '{other.bleu_tokenize}' and "
            f"run {first.letter} with '{first.bleu_tokenize}'; the scores are not "
            "comparable"
        )
    return ""


def differences(
    first: ComparedRun, other: ComparedRun, k: int = N_DIFFERENCES
) -> tuple[list[Difference], list[Difference]]:
    """The k sentences where ``other`` beats the first run most by sentence chrF, and the
    k where it loses most (sentences with equal scores are neither)."""
    rows = [
        Difference(
            source=a.source,
            reference=a.reference,
            first=a.after,
            other=b.after,
            chrf_first=round(sentence_chrf(a.after, a.reference), 2),
            chrf_other=round(sentence_chrf(b.after, b.reference), 2),
        )
        for a, b in zip(first.test_rows, other.test_rows, strict=True)
        if a.after != b.after
    ]
    ranked = sorted(rows, key=lambda d: d.gap)  # stable: ties keep test-set order
    better = [d for d in reversed(ranked) if d.gap > 0][:k]
    worse = [d for d in ranked if d.gap < 0][:k]
    return better, worse


#: The neural metrics a run may have scored each test sentence with: the SetScores field
#: (and the flag), and the metric in a note's words.
NEURAL = {"comet": "COMET", "metricx": "MetricX"}


def paired_result(first: ComparedRun, other: ComparedRun) -> PairedResult:
    """sacreBLEU's paired bootstrap and approximate randomisation, ``other`` vs first; and
    COMET's and MetricX's paired test on the sentences' stored scores when both runs scored
    them with the same model (:func:`neural_change`)."""
    refs = [r.reference for r in first.test_rows]
    base = [r.after for r in first.test_rows]
    system = [r.after for r in other.test_rows]
    tokenize = first.bleu_tokenize or "13a"
    name = first.row.test.name if first.row.test is not None else "test"
    scores = score_before_after(base, system, refs, tokenize, "test", name)
    comet, metricx = (neural_change(first, other, metric) for metric in NEURAL)
    scores = dataclasses.replace(scores, comet=comet, metricx=metricx)
    ar = randomisation_p(base, system, refs, tokenize)
    return PairedResult(
        letter=other.letter, scores=scores, bleu_p_ar=ar["bleu"], chrf_p_ar=ar["chrf"]
    )


def neural_model(run: ComparedRun, metric: str) -> str | None:
    """The model a run scored its test set with by ``metric`` (``comet``, ``metricx``),
    when it did."""
    test = run.row.test
    change = getattr(test, metric) if test is not None else None
    return change.model if change is not None else None


def neural_change(first: ComparedRun, other: ComparedRun, metric: str) -> MetricChange | None:
    """``other``'s test ``metric`` (``comet``, ``metricx``) against the first run's, paired
    on each sentence's score as both runs stored it (nothing is scored again); None unless
    both scored every test sentence with the same model."""
    test = first.row.test
    ours = getattr(test, metric) if test is not None else None
    if ours is None or neural_model(other, metric) != ours.model:
        return None
    columns = [[getattr(r, f"{metric}_after") for r in run.test_rows] for run in (first, other)]
    numbers = [[float(v) for v in c if isinstance(v, int | float)] for c in columns]
    if any(len(n) != len(c) for n, c in zip(numbers, columns, strict=True)):
        return None  # a sentence without its score (a hand-edited file): no paired test
    change = segment_change(numbers[0], numbers[1], ours.metric, ours.model)
    return dataclasses.replace(change, lower_is_better=ours.lower_is_better)


def neural_notes(runs: list[ComparedRun]) -> list[str]:
    """Why COMET or MetricX is not compared, when some runs scored it and not all alike."""
    notes = []
    for metric, name in NEURAL.items():
        models = {run.letter: neural_model(run, metric) for run in runs}
        if not any(models.values()) or len(set(models.values())) == 1:
            continue
        said = "; ".join(f"{letter}: {model or 'none'}" for letter, model in models.items())
        notes.append(
            f"{name} is compared only between runs scored with the same {name} model "
            f"({said}); run the others with --{metric} MODEL, or score their translations "
            "with workbench score"
        )
    return notes


def decoding_notes(settings: dict[str, list[Any]]) -> list[str]:
    """A warning when the runs decoded their test sets differently."""
    changed = [name for name in settings if name in DECODING_SETTINGS]
    if not changed:
        return []
    return [
        f"The runs decode differently ({', '.join(changed)}): each side of a test is "
        "decoded with its own run's settings, so the difference includes the decoding, "
        "not only the training."
    ]


def build_comparison(names: list[str], output_root: str | Path | None = None) -> Comparison:
    """Read the named runs (ids or folders) and compare each with the first."""
    if len(names) < 2:
        raise WorkbenchError("compare needs at least two runs; `workbench runs` lists them")
    if len(names) > len(LETTERS):
        raise WorkbenchError(f"compare takes at most {len(LETTERS)} runs, not {len(names)}")
    root = Path(output_root if output_root is not None else DEFAULT_OUTPUT_DIR).expanduser()
    folders = [resolve_run(name, root) for name in names]
    seen = [f.resolve() for f in folders]
    if len(set(seen)) < len(seen):
        raise WorkbenchError("the same run is named twice; compare different runs")
    runs = [read_run(LETTERS[n], folder) for n, folder in enumerate(folders)]
    settings = differing_settings(runs)
    comparison = Comparison(
        runs=runs,
        settings=settings,
        test_label=None,
        notes=decoding_notes(settings) + neural_notes(runs),
        generated=time.strftime("%Y-%m-%d %H:%M"),
    )
    first = runs[0]
    for other in runs[1:]:
        reason = why_not_paired(first, other)
        if reason:
            comparison.not_paired[other.letter] = reason
            continue
        comparison.paired.append(paired_result(first, other))
        comparison.differences[other.letter] = differences(first, other)
    if comparison.paired and first.row.test is not None:
        comparison.test_label = first.row.test.label
    return comparison


def default_folder(comparison: Comparison) -> Path:
    """``<output>/comparisons/<first>_vs_<second>[_vs_…]`` next to the runs."""
    root = RunFolder(Path(comparison.first.row.run_dir)).output_root
    return root / COMPARISONS_FOLDER / "_vs_".join(run.run_id for run in comparison.runs)
