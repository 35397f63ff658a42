"""A comparison's figures and tables as cells of text, shared by its terminal, markdown
and HTML forms."""

from __future__ import annotations

from workbench.core.config.settings import setting_value
from workbench.core.experiments.compare.ranked import objective_of, rank_marked, rank_marked_name
from workbench.core.experiments.compare.read import ComparedRun, Comparison, Difference
from workbench.core.experiments.table import after_cells, training_cells
from workbench.core.records.scores import N_BOOTSTRAP, N_PERMUTATIONS
from workbench.core.views.numbers import MISSING
from workbench.core.views.score_text import (
    BY_LENGTH_COLUMNS,
    by_length_cells,
    change_cells,
    delta_text,
    format_p,
    length_header,
    with_ci,
)
from workbench.core.views.svg import Series, line_chart_svg

COMPARE_MD = "compare.md"
COMPARE_HTML = "compare.html"
#: Figure files written next to compare.md (the HTML inlines the same SVG text).
FIGURE_FILES = {
    "bleu": "compare_bleu.svg",
    "val_loss": "compare_val_loss.svg",
    "train_loss": "compare_train_loss.svg",
}
#: What each figure shows: (title, y label).
FIGURE_TITLES = {
    "bleu": ("Validation BLEU per epoch", "BLEU"),
    "val_loss": ("Validation loss per epoch", "loss"),
    "train_loss": ("Training loss per logging step", "loss"),
}


def run_label(run: ComparedRun, comparison: Comparison, most: int = 24) -> str:
    """``B epochs=8``: the run's letter and the settings it does not share with the others."""
    index = comparison.runs.index(run)
    changes = ", ".join(
        f"{name}={setting_value(values[index])}" for name, values in comparison.settings.items()
    )
    text = f"{run.letter} {changes}".strip()
    return text if len(text) <= most else run.letter  # the settings table says the rest


def curves(comparison: Comparison) -> dict[str, list[tuple[str, list[tuple[float, float]]]]]:
    """Each figure's series: one line per run, labelled as :func:`run_label`."""
    out: dict[str, list[tuple[str, list[tuple[float, float]]]]] = {k: [] for k in FIGURE_FILES}
    for run in comparison.runs:
        label = run_label(run, comparison)
        out["bleu"].append((label, [(r.epoch, r.bleu) for r in run.epochs if r.bleu is not None]))
        out["val_loss"].append(
            (label, [(r.epoch, r.val_loss) for r in run.epochs if r.val_loss is not None])
        )
        out["train_loss"].append((label, list(run.train_loss)))
    return out


def draw_comparison_figures(comparison: Comparison) -> dict[str, str]:
    """The overlaid curves as SVG."""
    return {
        key: line_chart_svg(
            [Series(label, points) for label, points in series],
            title=FIGURE_TITLES[key][0],
            x_label="epoch",
            y_label=FIGURE_TITLES[key][1],
        )
        for key, series in curves(comparison).items()
    }


# --------------------------------------------------------------------------- tables

RUN_HEADER = [
    "Run",
    "Run id",
    "Status",
    "Objective",
    "Epochs",
    "Steps",
    "Training time",
    "Best epoch",
    "Val BLEU after (95% CI)",
    "Test BLEU after (95% CI)",
]


def run_rows(comparison: Comparison) -> list[list[str]]:
    """Who each run is and what it scored on its own (from its summary)."""
    rows = []
    for run in comparison.runs:
        row = run.row
        rows.append(
            [
                run.letter,
                row.run_id,
                row.status,
                objective_of(run),
                *training_cells(row),
                *after_cells(row),
            ]
        )
    return rows


def settings_header(comparison: Comparison) -> list[str]:
    """``Setting, A, B, …``."""
    return ["Setting", *(run.letter for run in comparison.runs)]


def comparison_settings_rows(comparison: Comparison) -> list[list[str]]:
    """One row per setting that differs, one column per run."""
    return [
        [name, *(setting_value(v) for v in values)] for name, values in comparison.settings.items()
    ]


TEST_HEADER = [
    "Run",
    "BLEU (95% CI)",
    "chrF (95% CI)",
    "BLEU vs A (95% CI)",
    "p (bs)",
    "p (ar)",
    "chrF vs A (95% CI)",
    "p (bs)",
    "p (ar)",
]


def test_header(comparison: Comparison) -> list[str]:
    """:data:`TEST_HEADER`, BLEU and chrF marked where they ranked a run's candidates."""
    bleu, chrf = (rank_marked_name(metric, comparison) for metric in ("BLEU", "chrF"))
    return [cell.replace("BLEU", bleu).replace("chrF", chrf) for cell in TEST_HEADER]


def test_rows(comparison: Comparison) -> list[list[str]]:
    """Each run's test BLEU and chrF with intervals and its paired tests against A."""
    if not comparison.paired:
        return []
    first = comparison.paired[0].scores
    rows = [
        [
            "A",
            with_ci(first.bleu_before, first.bleu_before_ci),
            with_ci(first.chrf_before, first.chrf_before_ci),
            "baseline",
            "",
            "",
            "",
            "",
            "",
        ]
    ]
    for result in comparison.paired:
        s = result.scores
        rows.append(
            [
                result.letter,
                with_ci(s.bleu_after, s.bleu_after_ci),
                with_ci(s.chrf_after, s.chrf_after_ci),
                delta_text(s.bleu_delta, s.bleu_delta_ci),
                format_p(s.bleu_p, s.n_bootstrap),
                format_p(result.bleu_p_ar, N_PERMUTATIONS),
                delta_text(s.chrf_delta, s.chrf_delta_ci),
                format_p(s.chrf_p, s.n_bootstrap),
                format_p(result.chrf_p_ar, N_PERMUTATIONS),
            ]
        )
    return rows


#: Every metric of each run against A, one row each, read as humans would read it.
METRICS_HEADER = ["Run", "Metric", "A (95% CI)", "Run (95% CI)", "vs A (95% CI)", "p", "Humans"]
METRICS_CAPTION = (
    "Every metric of each run against A on the same test sentences. BLEU, chrF, chrF++ and "
    "TER: sacreBLEU's paired bootstrap; COMET and MetricX (lower is better): comet-compare's "
    "paired t-test on each sentence's score as the runs stored it, with a bootstrap "
    "interval. Humans: how often a "
    "delta of that size agrees with human judgement of which system is better (Kocmi et "
    "al. 2024's fitted curve; BLEU never reaches 90%; no curve for chrF++, TER and MetricX-24)."
)


def metrics_rows(comparison: Comparison) -> list[list[str]]:
    """One row per run and metric: A's score, the run's, the change, its test, the reading
    (none on a metric that ranked either run's candidates: :mod:`.ranked`)."""
    rows = []
    for result in comparison.paired:
        pair = [run for run in comparison.runs if run.letter in ("A", result.letter)]
        for change in result.scores.changes:
            cells = change_cells(change, result.scores.n_bootstrap)
            cells[0], ranked = rank_marked(change, pair)
            if ranked:
                cells[-1] = MISSING
            rows.append([result.letter, *cells])
    return rows


def test_caption(comparison: Comparison) -> str:
    """What the test table is: which set, which tests, against which run."""
    decoding = "".join(f" {note}" for note in comparison.notes)
    return (
        f"{comparison.test_label}: each run's best model, decoded as its own settings "
        f"say.{decoding} Intervals are sacreBLEU's paired bootstrap ({N_BOOTSTRAP} resamples); "
        f"p-values test each run against run A with sacreBLEU's paired bootstrap (bs) "
        f"and approximate randomisation (ar, {N_PERMUTATIONS} shuffles)."
    )


def own_score(run: ComparedRun) -> str:
    """A run's test BLEU from its own summary, with the set it comes from."""
    test = run.row.test
    if test is None:
        return f"{run.letter}: test BLEU {MISSING}"
    return f"{run.letter}: {test.label} BLEU {with_ci(test.bleu_after, test.bleu_after_ci)}"


def not_paired_lines(comparison: Comparison) -> list[str]:
    """For each run without a paired test: why, and its own test score instead."""
    if not comparison.not_paired:
        return []
    lines = [
        f"No paired test of {letter} against A: {reason}."
        for letter, reason in comparison.not_paired.items()
    ]
    unpaired = [
        run for run in comparison.runs if run.letter in comparison.not_paired or run.letter == "A"
    ]
    return [
        *lines,
        "Their own test scores, not comparable with each other: "
        + "; ".join(own_score(run) for run in unpaired)
        + ".",
    ]


BY_LENGTH_CAPTION = (
    "Corpus BLEU and chrF of each run's own test sentences by the length of their source, "
    "before → after fine-tuning (change), as each run's summary holds them; "
    f"{MISSING}: the run recorded none."
)


def by_length_header(comparison: Comparison) -> list[str]:
    """``Run, Source length (words), …``; the unit in the cells when the runs differ in it."""
    units = {b.unit for run in comparison.runs for b in run.by_length or []}
    return ["Run", length_header(units.pop() if len(units) == 1 else None), *BY_LENGTH_COLUMNS]


def by_length_rows(comparison: Comparison) -> list[list[str]]:
    """Each run's test scores per source-length bucket (one row of dashes for a run that
    recorded none)."""
    mixed = len({b.unit for run in comparison.runs for b in run.by_length or []}) > 1
    rows = []
    for run in comparison.runs:
        if not run.by_length:
            rows.append([run.letter, *(MISSING for _ in range(1 + len(BY_LENGTH_COLUMNS)))])
        rows += [[run.letter, *by_length_cells(b, with_unit=mixed)] for b in run.by_length or []]
    return rows


DIFFERENCE_HEADER = ["Source", "Reference", "A", "chrF A", "Other run", "chrF other"]


def difference_rows(items: list[Difference]) -> list[list[str]]:
    """The sentences of one direction, with each side's sentence chrF."""
    return [
        [d.source, d.reference, d.first, f"{d.chrf_first:.1f}", d.other, f"{d.chrf_other:.1f}"]
        for d in items
    ]


def difference_sections(comparison: Comparison) -> list[tuple[str, str, list[list[str]]]]:
    """``(letter, title, rows)`` for each run against A, better then worse."""
    sections = []
    for letter, (better, worse) in comparison.differences.items():
        sections.append(
            (letter, f"Where {letter} beats A most (sentence chrF)", difference_rows(better))
        )
        sections.append(
            (letter, f"Where {letter} loses to A most (sentence chrF)", difference_rows(worse))
        )
    return sections
