"""The headless event sink: plain, greppable lines for SSH, tmux, pipes and log files.

No colour, no cursor tricks, one event per line, flushed as it happens, so ``tail -f``
and ``| tee train.log`` show progress live. Structured metrics go to ``metrics.jsonl`` in
the run folder (written by the core, not here).
"""

from __future__ import annotations

import sys
from typing import TextIO

from workbench.core.events import EvalDone, Event, Note, Phase, RunDone, Sample, TrainStep
from workbench.core.scores import MISSING, headline, interval_line, legacy_line


def format_seconds(seconds: float | None) -> str:
    """``1h02m03s`` / ``4m05s`` / ``7s``; ``?`` when unknown."""
    if seconds is None:
        return "?"
    seconds = round(seconds)
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours}h{minutes:02d}m{secs:02d}s"
    return f"{minutes}m{secs:02d}s" if minutes else f"{secs}s"


def _num(value: float | None, fmt: str) -> str:
    return "-" if value is None else format(value, fmt)


class HeadlessPrinter:
    """Prints each event as a readable line; remembers 'before' to print the difference."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream or sys.stdout
        #: BLEU and chrF before fine-tuning, per set ("validation", "test").
        self.before: dict[str, tuple[float, float]] = {}
        self.samples_seen = 0

    def line(self, text: str = "") -> None:
        """Write one line and flush, so pipes and tail -f see it now."""
        self.stream.write(text + "\n")
        self.stream.flush()

    def __call__(self, event: Event) -> None:
        if isinstance(event, Phase):
            self.line(f"[{event.name}]" + (f" {event.detail}" if event.detail else ""))
        elif isinstance(event, Note):
            prefix = {"warning": "warning: ", "error": "error: "}.get(event.level, "")
            self.line(f"  {prefix}{event.text}")
        elif isinstance(event, TrainStep):
            total = event.max_steps or 0
            self.line(
                f"  step {event.step:>{len(str(total))}}/{total}  epoch {event.epoch:5.2f}  "
                f"loss {_num(event.loss, '.4f')}  lr {_num(event.learning_rate, '.2e')}  "
                f"grad {_num(event.grad_norm, '.2f')}  "
                f"{_num(event.samples_per_second, '.1f')} samples/s  "
                f"ETA {format_seconds(event.eta_seconds)}"
            )
        elif isinstance(event, EvalDone):
            self._eval(event)
        elif isinstance(event, Sample):
            self._sample(event)
        elif isinstance(event, RunDone):
            self._done(event)

    def _eval(self, event: EvalDone) -> None:
        where = f"{event.split} ({event.set_name}, {event.size:,})"
        if event.stage == "before":
            self.before[event.split] = (event.bleu, event.chrf)
            self.line(f"  before fine-tuning, {where}: BLEU {event.bleu:.2f}   "
                      f"chrF {event.chrf:.2f}")
        elif event.stage == "after":
            bleu0, chrf0 = self.before.get(event.split, (None, None))
            diff = "" if bleu0 is None else f" ({event.bleu - bleu0:+.2f})"
            cdiff = "" if chrf0 is None else f" ({event.chrf - chrf0:+.2f})"
            self.line(f"  after fine-tuning,  {where}: BLEU {event.bleu:.2f}{diff}   "
                      f"chrF {event.chrf:.2f}{cdiff}")
        else:
            self.line(f"  epoch {event.epoch:.0f} done: BLEU {event.bleu:.2f}  "
                      f"chrF {event.chrf:.2f}  eval loss {_num(event.loss, '.4f')}  "
                      f"(validation)")

    def _sample(self, event: Sample) -> None:
        if self.samples_seen == 0:
            self.line("[samples] before / after on test sentences")
        self.samples_seen += 1
        self.line(f"  {self.samples_seen}. source:    {event.source}")
        self.line(f"     reference: {event.reference}")
        self.line(f"     before:    {event.before}   (BLEU {event.bleu_before:.1f})")
        self.line(f"     after:     {event.after}   (BLEU {event.bleu_after:.1f})")

    def _done(self, event: RunDone) -> None:
        s = event.summary
        if event.status != "finished":
            self.line(f"[{event.status}] run folder: {event.run_dir}")
            return
        self.line("[done]")
        for role, note in (("test", "hand this in: never used to choose anything"),
                           ("validation", "chose the best epoch, so optimistic")):
            scores = s.scores(role)
            if scores is None:
                continue
            self.line(f"  {headline(scores)}")
            self.line(f"    {interval_line(scores)}; {note}")
        if s.test is None:  # an older run's numbers, or the dash, never a made-up 0.00
            missing = f"test: BLEU {MISSING} · chrF {MISSING} (not in the summary)"
            self.line(f"  {legacy_line(s) or missing}")
        seconds = MISSING if s.train_seconds is None else format_seconds(s.train_seconds)
        self.line(f"  training {seconds}; best model: {s.best_model or MISSING}")
        self.line(f"  run folder: {event.run_dir} (config.json, metrics.jsonl, summary.json)")
