"""Events as plain lines: the one wording of a run's progress for ``train --headless`` and
the TUI's log."""

from __future__ import annotations

from workbench.core.events import (
    DataProgress,
    EvalDone,
    Event,
    HubRetry,
    Note,
    Phase,
    PreferenceProgress,
    RunDone,
    Sample,
    SampleProgress,
    ScoreProgress,
    TrainStep,
)
from workbench.core.records.scores import SetScores
from workbench.core.records.summary import RunSummary, best_epoch, selected_by
from workbench.core.views.numbers import MISSING, format_bytes, format_seconds, number
from workbench.core.views.ranked_text import ceiling_lines, ranked_headline, ranked_more
from workbench.core.views.score_text import (
    agreement_of,
    headline,
    interval_line,
    more_lines,
    published_text,
)

#: What each set is for, said under its scores at the end of a run.
SET_ROLES = (
    ("test", "hand this in: never used to choose anything"),
    ("validation", "chose the best epoch, so optimistic"),
)


class EventText:
    """Events as plain lines: the one wording for ``train --headless`` and the TUI's log.

    Remembers each set's "before" scores to print the change next to "after", and numbers
    the samples as they come.
    """

    def __init__(self) -> None:
        #: BLEU and chrF before fine-tuning, per set ("validation", "test").
        self.before: dict[str, tuple[float, float]] = {}
        self.samples_seen = 0

    def lines(self, event: Event) -> list[str]:
        """The lines that say what ``event`` means (none for an event with nothing to say)."""
        if isinstance(event, Phase):
            return [f"[{event.name}]" + (f" {event.detail}" if event.detail else "")]
        if isinstance(event, Note):
            prefix = {"warning": "warning: ", "error": "error: "}.get(event.level, "")
            return [f"  {prefix}{event.text}"]
        if isinstance(event, TrainStep):
            total = event.max_steps or 0
            return [
                f"  step {event.step:>{len(str(total))}}/{total}  epoch {event.epoch:5.2f}  "
                # A logged loss is missing only when it was NaN or infinite.
                f"loss {number(event.loss, spec='.4f', missing='nan/inf')}  "
                f"lr {number(event.learning_rate, spec='.2e')}  "
                f"grad {number(event.grad_norm, spec='.2f')}  "
                f"{number(event.samples_per_second, spec='.1f')} samples/s  "
                f"ETA {format_seconds(event.eta_seconds)}"
            ]
        if isinstance(event, EvalDone):
            return [self._eval(event)]
        if isinstance(event, Sample):
            return self._sample(event)
        if isinstance(event, SampleProgress):
            return [sample_progress_line(event)]
        if isinstance(event, DataProgress):
            return [data_progress_line(event)]
        if isinstance(event, ScoreProgress):
            return [score_progress_line(event)]
        if isinstance(event, PreferenceProgress):
            return [preference_progress_line(event)]
        if isinstance(event, HubRetry):
            return [
                f"  hub: {event.reason} from {event.url}; try {event.attempt + 1} of "
                f"{event.tries} in {event.wait_seconds:.1f} s"
            ]
        return self._done(event)

    def _eval(self, event: EvalDone) -> str:
        where = f"{event.split} ({event.set_name}, {event.size:,})"
        if event.stage == "before":
            self.before[event.split] = (event.bleu, event.chrf)
            published = (
                ""
                if event.published_bleu is None
                else " · "
                + published_text(event.published_bleu, event.published_source, event.set_name)
            )
            return (
                f"  before fine-tuning, {where}: BLEU {event.bleu:.2f}   "
                f"chrF {event.chrf:.2f}{published}"
            )
        if event.stage == "after":
            bleu0, chrf0 = self.before.get(event.split, (None, None))
            diff = "" if bleu0 is None else f" ({event.bleu - bleu0:+.2f})"
            cdiff = "" if chrf0 is None else f" ({event.chrf - chrf0:+.2f})"
            return (
                f"  after fine-tuning,  {where}: BLEU {event.bleu:.2f}{diff}   "
                f"chrF {event.chrf:.2f}{cdiff}"
            )
        comet = "" if event.comet is None else f"  COMET {event.comet:.2f}"
        return (
            f"  epoch {event.epoch:.0f} done: BLEU {event.bleu:.2f}  "
            f"chrF {event.chrf:.2f}{comet}  eval loss {number(event.loss, spec='.4f')}  "
            "(validation)"
        )

    def _sample(self, event: Sample) -> list[str]:
        lines = [] if self.samples_seen else ["[samples] before / after on test sentences"]
        self.samples_seen += 1
        return [
            *lines,
            f"  {self.samples_seen}. source:    {event.source}",
            f"     reference: {event.reference}",
            f"     before:    {event.before}   (BLEU {event.bleu_before:.1f})",
            f"     after:     {event.after}   (BLEU {event.bleu_after:.1f})",
        ]

    def _done(self, event: RunDone) -> list[str]:
        s = event.summary
        if event.status != "finished":
            return [f"[{event.status}] run folder: {event.run_dir}"]
        lines = ["[done]"]
        for role, note in SET_ROLES:
            scores = s.scores(role)
            if scores is not None:
                first, *more = set_lines(s, scores, note)
                lines += [f"  {first}", *(f"    {line}" for line in more)]
        if s.test is None:  # the dash, never a made-up 0.00
            lines.append(f"  test: BLEU {MISSING} · chrF {MISSING} (not in the summary)")
        seconds = MISSING if s.train_seconds is None else format_seconds(s.train_seconds)
        return [
            *lines,
            f"  training {seconds}; {best_epoch_text(s)} (by validation {selected_by(s)}); "
            f"best model: {s.best_model or MISSING}",
            f"  run folder: {event.run_dir} (config.json, metrics.jsonl, summary.json)",
        ]


def set_lines(summary: RunSummary, scores: SetScores, note: str) -> list[str]:
    """A set's lines in the summary: its headline, the intervals, the other metrics and
    the Kocmi reading; for a run trained on ranked candidates (``--objective``), the
    ranker marked and never first, and the test set's ceiling
    (:mod:`~workbench.core.views.ranked_text`)."""
    ranked = summary.objective
    if ranked is None or ranked.ranker is None:
        agreement = agreement_of(scores)
        more = [*more_lines(scores), *([agreement] if agreement else [])]
        return [headline(scores), f"{interval_line(scores)}; {note}", *more]
    lines = [ranked_headline(scores, ranked.ranker), f"{interval_line(scores)}; {note}"]
    lines += ranked_more(scores, ranked.ranker)
    return lines + (ceiling_lines(ranked, scores) if scores.role == "test" else [])


def best_epoch_text(summary: RunSummary) -> str:
    """``best epoch 4``, and whether the published model is instead an average of
    checkpoints (``--average-checkpoints``)."""
    best = best_epoch(summary)
    averaged = summary.averaging is not None and summary.averaging.kept == "averaged"
    return f"best epoch {MISSING if best is None else f'{best:g}'}" + (
        ", model averaged over checkpoints" if averaged else ""
    )


#: The progress events a progress bar follows while data is read, ranked or scored.
DataStatusEvent = SampleProgress | DataProgress | ScoreProgress | PreferenceProgress


def data_status(event: DataStatusEvent) -> tuple[int, int, str]:
    """(done, total, status) for a progress bar while data is read or scored: a Hub
    sample's row groups, the pairs being prepared, the training sources being ranked or
    the sentences COMET encodes, in the headless line's words."""
    if isinstance(event, SampleProgress):
        done, total = event.row_groups, event.row_groups_total
        return done, total, f"data · {done:,}/{total:,} row groups"
    if isinstance(event, ScoreProgress):
        return event.done, event.total, score_progress_line(event).strip()
    if isinstance(event, PreferenceProgress):
        return event.done, event.total, preference_progress_line(event).strip()
    return event.done, event.total, data_progress_line(event).strip()


def preference_progress_line(event: PreferenceProgress) -> str:
    """``  preferences: ranking 48/144 sources · 3.2 sources/s · ETA 30s``."""
    eta = f" · ETA {format_seconds(event.eta_seconds)}" if event.done < event.total else ""
    return (
        f"  preferences: {event.stage} {event.done:,}/{event.total:,} sources · "
        f"{event.per_second:,.1f} sources/s{eta}"
    )


def score_progress_line(event: ScoreProgress) -> str:
    """``  COMET-22: 1,200/3,981 texts encoded · 85 texts/s · ETA 33s``."""
    eta = f" · ETA {format_seconds(event.eta_seconds)}" if event.done < event.total else ""
    return (
        f"  {event.metric}: {event.done:,}/{event.total:,} texts encoded · "
        f"{event.per_second:,.0f} texts/s{eta}"
    )


def data_progress_line(event: DataProgress) -> str:
    """``  data: cleaning and tokenizing 400,000/1,000,000 pairs · 21,300 pairs/s · ETA 28s``."""
    of = f"/{event.total:,}" if event.total else ""
    eta = f" · ETA {format_seconds(event.eta_seconds)}" if event.total else ""
    return (
        f"  data: {event.stage} {event.done:,}{of} pairs · "
        f"{event.pairs_per_second:,.0f} pairs/s{eta}"
    )


def sample_progress_line(event: SampleProgress) -> str:
    """``  sample: 4/6 row groups, 12.3 KiB of 18.0 KiB (2 kept from an earlier try)``."""
    kept = f" ({event.kept:,} kept from an earlier try)" if event.kept else ""
    return (
        f"  sample: {event.row_groups:,}/{event.row_groups_total:,} row groups, "
        f"{format_bytes(event.bytes)} of {format_bytes(event.bytes_total)}{kept}"
    )
