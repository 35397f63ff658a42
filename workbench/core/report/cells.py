"""The run report's facts and tables as cells of text, shared by its markdown and its
HTML (which escape them)."""

from __future__ import annotations

from workbench.core.config.presets import SCRATCH_MODEL
from workbench.core.config.settings import setting_value
from workbench.core.records.scores import MetricChange, SetScores
from workbench.core.records.summary import RunSummary
from workbench.core.report.contents import RunReport
from workbench.core.views.human_agreement import CITATION, agreement_readings
from workbench.core.views.judged_changes import judged_rows, marked_label
from workbench.core.views.numbers import MISSING, number
from workbench.core.views.ranked_text import ROLE, ranked_verdict
from workbench.core.views.score_text import (
    BY_LENGTH_COLUMNS,
    before_after,
    by_length_cells,
    change_before_after,
    change_cells,
    changed_cells,
    length_header,
    metric_label,
    published_text,
)
from workbench.core.views.training_text import averaging_text, early_stopping_text

JUDGEMENT = "Judgement (one line)"


def epoch_label(epoch: float) -> str:
    """``3`` for a whole epoch, ``2.5`` for a partial one."""
    return f"{epoch:g}"


def model_text(model: str) -> str:
    """The model setting in words (``scratch`` means nothing to a reader of the report)."""
    if model == SCRATCH_MODEL:
        return "a small MarianMT built from scratch by the workbench (demo preset)"
    return model


def ranker_of(summary: RunSummary) -> str | None:
    """The metric that ranked the run's training candidates (``--objective``), if any."""
    return summary.objective.ranker if summary.objective is not None else None


def ranked_label(change: MetricChange, ranker: str | None) -> str:
    """A metric's label, marked ``(used to rank)`` and kin in a run trained on ranked
    candidates."""
    return marked_label(change, ranker, ROLE) if ranker else metric_label(change)


def judged_readings(scores: SetScores, ranker: str | None) -> list[tuple[str, float]]:
    """The deltas read as humans would: every metric's, or only the lead judge's in a run
    trained on candidates ``ranker`` ranked (never the ranker's own)."""
    lead = ranked_verdict(scores, ranker).lead if ranker else None
    return [(c.metric, c.delta) for c in scores.changes if lead in (None, c.metric)]


def key_facts(report: RunReport) -> list[tuple[str, str]]:
    """The key facts of the run, label and value, for the top of both documents."""
    s = report.summary
    ranker = ranker_of(s)
    decoding = vars(s.decoding) if s.decoding is not None else {}
    decode_text = ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in decoding.items())
    rows = [
        ("Run", report.name),
        ("Status", report.status),
        ("Model", model_text(str(s.model or report.saved.value("model") or "?"))),
        (
            "Data",
            f"{s.data or report.saved.value('data') or '?'}: "
            f"{number(s.train_pairs)} training / {number(s.validation_pairs)} "
            f"validation / {number(s.test_pairs)} test pairs",
        ),
    ]
    for role in ("test", "validation"):
        scores = s.scores(role)
        if scores is not None:
            bleu = ranked_label(scores.change("bleu"), ranker)
            rows.append((f"{bleu} before → after, {scores.label}", before_after(scores, "bleu")))
            rows += [
                (
                    f"{ranked_label(neural, ranker)} before → after, {scores.label}",
                    change_before_after(neural, scores.n_bootstrap),
                )
                for neural in (scores.comet, scores.metricx)
                if neural is not None
            ]
            reading = agreement_readings(judged_readings(scores, ranker))
            if role == "test" and reading is not None:
                rows.append((f"What humans would say ({CITATION})", reading))
        if role == "test":
            rows += baseline_rows(s)
    if s.early_stopping:
        rows.append(("Early stopping", early_stopping_text(s.early_stopping)))
    if s.averaging:
        rows.append(("Checkpoint averaging (validation)", averaging_text(s.averaging)))
    rows += [
        ("BLEU tokenizer", s.bleu_tokenize or "?"),
        ("Before/after decoding", decode_text or "?"),
        (
            "Precision",
            ", ".join(
                f"{k.replace('_', ' ')} {setting_value(v)}" for k, v in vars(s.precision).items()
            )
            if s.precision
            else MISSING,
        ),
        ("Training", f"{number(s.global_step)} steps in {number(s.train_seconds, 1)} s"),
        ("Best checkpoint", s.best_checkpoint or MISSING),
    ]
    return rows


def baseline_rows(summary: RunSummary) -> list[tuple[str, str]]:
    """The test set's "before" beside the model's published score, with where the figure
    is from, and the warning when they are far apart (none where nothing is published)."""
    b = summary.baseline
    if b is None:  # nothing published, or a partial summary: nothing to show
        return []
    test_set = b.test_set or "?"
    rows = [
        (
            f"BLEU before vs published, {test_set}",
            f"{b.before_bleu:.2f} · {published_text(b.bleu, b.source or '?', test_set)}: "
            f"{b.difference:+.2f} (figure from {b.url or '?'})",
        )
    ]
    if b.warning:
        rows.append(("Before far from published", b.warning))
    return rows


def report_settings_rows(report: RunReport) -> list[tuple[str, str, str]]:
    """(setting, value, the preset's value where this run changed it)."""
    rows = []
    for key, value in report.saved.settings.items():
        default = report.preset_defaults.value(key, value)
        changed = "" if default == value or key == "preset" else setting_value(default)
        rows.append((key, setting_value(value), changed))
    return rows


def epoch_table(report: RunReport) -> tuple[list[str], list[list[str]]]:
    """Header and rows of the per-epoch table (the best epoch marked)."""
    header = ["Epoch", "Step", "Training loss", "Validation loss", "BLEU", "chrF", "Best"]
    rows = [
        [
            epoch_label(r.epoch),
            number(r.step),
            number(r.train_loss, 3),
            number(r.val_loss, 3),
            number(r.bleu),
            number(r.chrf),
            "✓" if r.best else "",
        ]
        for r in report.epochs
    ]
    return header, rows


BEFORE_AFTER_HEADER = [
    "Set",
    "Metric",
    "Before (95% CI)",
    "After (95% CI)",
    "Change (95% CI)",
    "p",
    "Humans agree",
]


def before_after_rows(report: RunReport) -> list[list[str]]:
    """Every metric before and after fine-tuning on the test and the validation set, and
    how often humans agree with a change that size (Kocmi et al. 2024); in a run trained
    on ranked candidates, judged as :func:`~workbench.core.views.judged_changes.judged_rows`
    says (the ranker marked, the judges first, the reading on the lead judge only)."""
    sets: list[SetScores | None] = [report.summary.test, report.summary.validation]
    ranker = ranker_of(report.summary)
    return [
        [scores.label, *cells]
        for scores in sets
        if scores is not None
        for cells in (
            judged_rows(scores.changes, scores.n_bootstrap, ranker, ROLE)
            if ranker
            else [change_cells(change, scores.n_bootstrap) for change in scores.changes]
        )
    ]


def sample_rows(report: RunReport) -> list[list[str]]:
    """The before/after samples: source, reference, both outputs and sentence BLEU."""
    return [
        [x.source, x.reference, x.before, x.after, number(x.bleu_before), number(x.bleu_after)]
        for x in report.summary.samples or []
    ]


SAMPLE_HEADER = ["Source", "Reference", "Before", "After", "BLEU before", "BLEU after"]
#: Where the run's summary holds no by-length scores (a run that did not finish).
NO_BREAKDOWN = (
    "This run's summary holds no scores by source length (a run records them when it finishes)."
)


def by_length_table(report: RunReport) -> tuple[list[str], list[list[str]]]:
    """Header and rows of the test set's scores by source length ([] when not recorded)."""
    buckets = report.summary.by_length
    if not buckets:
        return [], []
    return [length_header(buckets[0].unit), *BY_LENGTH_COLUMNS], [
        by_length_cells(b) for b in buckets
    ]


def breakdown_note(report: RunReport) -> str:
    """Which set the breakdown is of, and how it is scored."""
    test = report.summary.test
    buckets = report.summary.by_length or []
    unit = buckets[0].unit if buckets else "words"
    return (
        f"{test.label if test is not None else 'test'}: its sentences grouped by the length "
        f"of their source in {unit}, each group scored before → after fine-tuning as the "
        f"headline is (sacreBLEU corpus BLEU with tokenizer "
        f"{report.summary.bleu_tokenize or '?'}, and chrF; the change in brackets). Below, "
        "the test sentences whose sentence chrF rose and fell most."
    )


def changed_tables(report: RunReport) -> list[tuple[str, list[list[str]], str]]:
    """(title, rows, what to say when there are none) of the test sentences whose chrF
    rose most, then fell most ([] when not recorded)."""
    most = report.summary.most_changed
    if most is None:
        return []
    changed = (most.rose, most.fell)
    return [
        (
            f"Test sentences whose sentence chrF {way} most",
            [changed_cells(c) for c in sentences],
            f"None: no test sentence's chrF {way}.",
        )
        for way, sentences in zip(("rose", "fell"), changed, strict=True)
    ]


#: The console table's column of reference-free scores, when any line has one.
QUALITY = "QE (no reference)"


def console_header(report: RunReport) -> list[str]:
    """The console table's columns: the QE score's only when a line was scored
    (``interact --qe``), the judgement last, to fill in."""
    quality = [QUALITY] if any(c.quality for c in report.console) else []
    return ["Time", "Model", "Source", "Translation", "Tried", *quality, JUDGEMENT]


def console_rows(report: RunReport) -> list[list[str]]:
    """The console translations, each once with how often it was tried, its QE score
    where there is one, and the judgement made in the tool (empty to fill in)."""
    scored = any(c.quality for c in report.console)
    return [
        [
            c.time.replace("T", " "),
            c.role or c.model,
            c.source,
            c.translation,
            f"{c.count}×",
            *([c.quality or MISSING] if scored else []),
            c.judgement,
        ]
        for c in report.console
    ]


def decoding_note(report: RunReport) -> str:
    """Which set is which, and why per-epoch BLEU and before/after BLEU differ."""
    beams = report.saved.value("eval_num_beams") or 1
    test = report.summary.test
    validation = report.summary.validation
    sets = ""
    if test:
        sets = (
            f"The test set ({test.name}, {test.size:,} pairs) was used for these "
            "before/after scores only, never to choose the epoch or the recipe: hand in "
            "its numbers. "
        )
    if validation:
        sets += (
            f"The validation set ({validation.name}, {validation.size:,} "
            "pairs) chose the best epoch, so its after-score is optimistic. "
        )
    return (
        sets + "Intervals and p-values are sacreBLEU's paired bootstrap (1000 "
        "resamples; p tests after against before); COMET's and MetricX's (0-25, lower is "
        "better) intervals are a bootstrap over their sentence scores and their p "
        "comet-compare's paired t-test. Per-epoch scores use "
        f"{'greedy decoding' if beams == 1 else f'{beams} beams'} on the validation set "
        "(cheaper during training); before and after use the decoding shown above, the "
        "fine-tuned model reloaded from its saved folder."
    )
