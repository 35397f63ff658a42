"""``workbench sweep``: a grid or a TPE search over run settings, one run folder per trial.

A thin adapter over :mod:`workbench.core.experiments.sweep`: the flags (the run settings of
``workbench train`` plus what to sweep), the plain progress lines, and the runs table at
the end. Only argparse at import; Optuna and torch are imported inside :func:`run`.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from workbench.cli.flags import add_run_options
from workbench.cli.options import Flag, add_command
from workbench.core.experiments.sweep import DEFAULT_HEARTBEAT, GRACE_FACTOR  # no optuna, no torch

if TYPE_CHECKING:
    from collections.abc import Callable

    from workbench.cli.options import Subparsers
    from workbench.core.events import Event
    from workbench.core.experiments.sweep import SweepEvent, SweepResult

FLAGS: tuple[Flag, ...] = (
    (
        "--grid",
        {
            "action": "append",
            "default": [],
            "metavar": "NAME=V1,V2",
            "help": "run every value (several --grid: every combination), e.g. "
            "--grid lr=5e-4,1e-3 --grid epochs=10,20",
        },
    ),
    (
        "--search",
        {
            "action": "append",
            "default": [],
            "metavar": "NAME=KIND:LOW:HIGH",
            "help": "sample with Optuna's TPE; KIND is loguniform, uniform, int, or "
            "choice:A,B; e.g. --search lr=loguniform:1e-5:1e-3",
        },
    ),
    (
        "--trials",
        {
            "type": int,
            "default": None,
            "metavar": "N",
            "help": "trials of a --search, all workers together (default: 8)",
        },
    ),
    (
        "--name",
        {
            "default": None,
            "help": "the study's name (default: the preset, the swept settings and a "
            "hash of the sweep and every run setting, so the same command "
            "finds it again)",
        },
    ),
    (
        "--storage",
        {
            "default": None,
            "metavar": "URL",
            "help": "Optuna database URL, e.g. postgresql://user:pw@host/db, shared "
            "by workers on several machines (default: "
            "sqlite:///<output-dir>/sweeps/<name>.db)",
        },
    ),
    (
        "--heartbeat",
        {
            "type": int,
            "default": DEFAULT_HEARTBEAT,
            "metavar": "SECONDS",
            "help": "how often a worker tells the study its trial is alive; a trial "
            f"silent {GRACE_FACTOR}x as long is taken as killed and run "
            f"again, and a worker whose heartbeats have not reached the study for "
            f"{GRACE_FACTOR - 1}x as long stops writing its run (default: {DEFAULT_HEARTBEAT})",
        },
    ),
    (
        "--verbose",
        {
            "action": "store_true",
            "help": "every line of every run (default: the epochs and each result)",
        },
    ),
)


def add_parser(subparsers: Subparsers) -> None:
    """Register ``workbench sweep`` on the CLI's subparsers."""
    parser = add_command(
        subparsers,
        "sweep",
        help="many runs over a grid or a search, chosen by validation BLEU",
        description="Run one trial per setting (each a normal run folder), the objective "
        "being validation BLEU. The study is kept in a database: run the same "
        "command again to continue a stopped sweep, or on several machines "
        "with one --storage to share the work.",
        flags=FLAGS,
    )
    add_run_options(parser)


class SweepPrinter:
    """The sweep's lines, and of each run its phases, per-epoch validation and warnings
    (every line with ``verbose``): a demo trial decodes for minutes before its first epoch,
    and a phase line says it is alive."""

    def __init__(self, verbose: bool) -> None:
        from workbench.cli.headless import HeadlessPrinter

        self.verbose = verbose
        self.runs = HeadlessPrinter()
        self.line = self.runs.line

    def __call__(self, event: SweepEvent | Event) -> None:
        """Print a sweep event's lines, and of a trial's own events those ``verbose`` asks for."""
        from workbench.core.events import EvalDone, Note, Phase
        from workbench.core.experiments.sweep import (
            SweepNote,
            TrialEnded,
            TrialStarted,
            sweep_lines,
        )

        if isinstance(event, TrialStarted | TrialEnded | SweepNote):
            for text in sweep_lines(event):
                self.line(text)
        elif self.verbose:
            self.runs(event)
        elif (
            (isinstance(event, EvalDone) and event.stage == "epoch")
            or isinstance(event, Phase)
            or (isinstance(event, Note) and event.level != "info")
        ):
            for text in self.runs.text.lines(event):
                self.line("  " + text)


def run(args: argparse.Namespace) -> int:
    """Run this worker of the sweep to its end; print the sweep's runs and the best."""
    from workbench.cli.flags import config_from_args
    from workbench.cli.train import stop_on_signals
    from workbench.core.experiments.sweep import import_optuna, make_plan, run_sweep
    from workbench.core.experiments.sweep.space import default_name, parse_space
    from workbench.errors import without_passwords

    base = config_from_args(args)
    space = parse_space(base, args.grid, args.search)
    plan = make_plan(
        base,
        space,
        args.name or default_name(base, space),
        args.storage,
        args.trials,
        args.heartbeat,
    )
    import_optuna()  # before any line: one sentence when it is not installed
    printer = SweepPrinter(args.verbose)
    what = (
        f"grid of {plan.trials} points"
        if space.mode == "grid"
        else f"TPE search of {plan.trials} trials"
    )
    printer.line(
        f"sweep {plan.name}: {what} over {space.spec().split(' ', 1)[1]}, "
        f"objective validation BLEU; study {without_passwords(plan.storage_url)}"
    )
    stop = stop_on_signals(printer.line)
    result = run_sweep(plan, printer, stop)
    print_result(result, printer.line)
    if result.status == "finished":
        compare_best(result, base.output_dir, printer.line)
        return 0
    printer.line(
        "sweep stopped; run the same command again to continue (finished trials "
        "are kept, a stopped one continues from its checkpoint)"
    )
    return 130


def print_result(result: SweepResult, line: Callable[[str], None]) -> None:
    """The sweep's runs in ``workbench runs`` lines (trial order), then the best trial."""
    from pathlib import Path

    from workbench.core.experiments.sweep.space import point_text
    from workbench.core.experiments.table import RUN_ROW_HEADER, run_row, run_row_line

    line("")
    line(f"trials ({len(result.trials)}); {RUN_ROW_HEADER}")
    last_of_run = {row.run_dir: row.number for row in result.trials if row.run_dir}
    for row in result.trials:
        folder = Path(row.run_dir) if row.run_dir else None
        later = last_of_run.get(row.run_dir) if row.run_dir else None
        if folder is not None and later is not None and later != row.number:
            text = (
                f"{row.status}  {point_text(row.params)}  → run {folder.name}, "
                f"continued by trial #{later}"
            )
        elif folder is not None and folder.is_dir():
            text = run_row_line(run_row(folder))
            if row.status not in ("finished", "running"):  # the study's word on it
                text += f"  [trial {row.status}" + (f": {row.reason}]" if row.reason else "]")
        else:
            text = f"{row.status}  {point_text(row.params)}" + (
                f"  ({row.reason})" if row.reason else ""
            )
        line(f"#{row.number}  {text}")
    best = result.best
    if best is None:
        line("no trial has finished yet")
        return
    line(
        f"best: trial #{best.number}  {point_text(best.params)}  val BLEU {best.value:.2f}  "
        f"run folder {best.run_dir}"
    )
    if result.published:
        line(f"its model is published to {result.published} (workbench interact uses it)")


def compare_best(result: SweepResult, output_dir: str, line: Callable[[str], None]) -> None:
    """``workbench compare`` of the best run (A) against the others, best first."""
    from workbench.cli.compare import show_comparison
    from workbench.core.experiments.sweep import runs_to_compare

    runs, left_out = runs_to_compare(result)
    if len(runs) < 2:
        return
    line("")
    if left_out:
        line(
            f"comparing the best {len(runs)} runs ({left_out} more left out: "
            "workbench compare takes any of them)"
        )
    show_comparison(runs, output_dir)
