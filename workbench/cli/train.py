"""``workbench train``: a fine-tuning run with plain progress lines, here or (``--detach``)
in a process of its own that outlives this terminal.

Only argparse and the config load at import; the run itself is
:func:`workbench.core.train.run_training.run_training`, imported inside the command. With
``--detach`` this process checks the settings, makes (or, with ``--resume``, picks) the
run folder, starts the run detached (:mod:`workbench.core.live.detach`), waits until it
holds the folder, and prints where it is and how to follow and stop it -- within seconds.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING

from workbench.cli.flags import add_run_options, config_from_args
from workbench.cli.options import Flag, add_command
from workbench.core.config.build import build_config
from workbench.core.config.presets import DEFAULT_PRESET
from workbench.core.config.run_config import RunConfig
from workbench.core.config.settings import setting_value
from workbench.errors import WorkbenchError

if TYPE_CHECKING:
    from workbench.cli.options import Subparsers

#: ``train --plan-only``'s exit status for a run that does not fit (2 is a mistake in
#: the flags, as for every command).
DOES_NOT_FIT = 4

#: What ``train`` takes besides the run settings.
TRAIN_SWITCHES: tuple[Flag, ...] = (
    (
        "--headless",
        {"action": "store_true", "help": "plain progress lines on stdout (SSH, tmux, pipes)"},
    ),
    (
        "--resume",
        {
            "action": "store_true",
            "help": "continue the newest unfinished run from its last complete checkpoint",
        },
    ),
    (
        "--no-interact",
        {"action": "store_true", "help": "do not open the translation console after training"},
    ),
    (
        "--detach",
        {
            "action": "store_true",
            "help": "run in the background, in a process of its own that outlives this "
            "terminal (its lines go to train.log in the run folder); prints the run folder "
            "and the commands to follow and stop it",
        },
    ),
    (
        "--plan-only",
        {
            "action": "store_true",
            "help": "print the memory plan for these flags and exit without loading a weight "
            "(the model's config.json alone: size a GPU or a cluster from a laptop); exit "
            f"status 0 when the run fits, {DOES_NOT_FIT} when it does not",
        },
    ),
    # What --detach starts: the run's own folder, made by the caller, and no printing
    # (its standard output is the run's train.log, which the run writes itself).
    ("--run-dir", {"help": argparse.SUPPRESS}),
    ("--detached", {"action": "store_true", "help": argparse.SUPPRESS}),
)


def train_description() -> str:
    """``train --help``'s opening: what a run without flags does, and where to see the rest."""
    c = build_config(DEFAULT_PRESET)
    return (
        f"Fine-tune a model. Without flags, the {DEFAULT_PRESET} preset: {c.model} on "
        f"{c.samples:,} pairs of {c.data}, batch {c.batch_size}, "
        f"lr {setting_value(c.learning_rate)}, {c.epochs:g} epochs, "
        f"max length {c.max_source_length}/{c.max_target_length}. "
        "`workbench presets NAME` prints every value a run of a preset uses."
    )


def add_parser(sub: Subparsers) -> None:
    """Register ``train`` on the CLI's subparsers."""
    train = add_command(
        sub,
        "train",
        help="fine-tune a model (plain lines with --headless)",
        description=train_description(),
        flags=TRAIN_SWITCHES,
    )
    add_run_options(train)


def run(args: argparse.Namespace) -> int:
    """Run a fine-tuning job with the headless printer; Ctrl-C/SIGTERM stop cleanly."""
    config = config_from_args(args)
    if args.plan_only:
        return plan_only(config)
    if args.detach:
        from workbench.core.train import distributed

        if config.shard:
            from workbench.core.train.sharding import LAUNCH

            raise WorkbenchError(
                "--shard runs under a launcher (torchrun or accelerate launch), and --detach "
                "starts one process of its own; detach the launcher instead (for example "
                f"`nohup {LAUNCH} &`), or drop --detach"
            )

        if distributed.is_distributed():
            raise WorkbenchError(
                "--detach starts one process of its own, so it cannot run under torchrun "
                "or accelerate launch; detach the launcher instead (for example with "
                "`nohup torchrun … &` or `systemd-run --user`)"
            )

        return run_detached(args, config)
    from workbench.cli.headless import HeadlessPrinter
    from workbench.cli.interact import run_console
    from workbench.core.train import distributed
    from workbench.core.train.run_training import run_training

    # Under torchrun / accelerate launch every rank runs this; only rank 0 speaks
    # (run_training drops the other ranks' events itself).
    main = distributed.is_main()
    printer = HeadlessPrinter(quiet=args.detached)
    if not args.headless and main:
        printer.line("(plain output; the full-screen view is `workbench tui`)")
    stop = stop_on_signals(printer.line if main else None, printer.lose_terminal)
    run_dir = Path(args.run_dir) if args.run_dir else None
    # A given folder with a config.json is continued as it is: that is the resume.
    resume = args.resume and run_dir is None
    result = run_training(config, printer, stop, resume=resume, run_dir=run_dir)
    if result.status != "finished":
        return 130 if result.status == "stopped" else 1
    interactive = sys.stdin.isatty() and sys.stdout.isatty() and not printer.terminal_gone
    if not args.no_interact and not interactive and main:
        printer.line(console_skipped_line(str(result.summary.best_model)))
    if not args.no_interact and interactive and main:
        signal.signal(signal.SIGINT, signal.default_int_handler)
        from workbench.core.run_folder.layout import OutputFolder
        from workbench.core.translate.console_session import ConsoleModel, ConsoleSession

        model = ConsoleModel(str(result.summary.best_model))
        history = OutputFolder(Path(config.output_dir)).history
        return run_console(ConsoleSession({"model": model}, history))
    return 0


def plan_only(config: RunConfig) -> int:
    """Print the run's memory plan, and whether it fits, without loading a weight."""
    from workbench.core.train.run_plan import plan_only as plan_run_only
    from workbench.core.views.memory_text import plan_only_lines

    planned = plan_run_only(config)
    for line in plan_only_lines(planned.plan, planned.scorers, config.model):
        print(line)
    return 0 if planned.plan.fits else DOES_NOT_FIT


def run_detached(args: argparse.Namespace, config: RunConfig) -> int:
    """Start the run detached and print the lines that find it again."""
    from workbench.core.live.detach import start_detached_run
    from workbench.core.run_folder.output_folder import new_run_dir
    from workbench.core.run_folder.saved_config import saved_config
    from workbench.core.train.checkpoints import run_to_resume
    from workbench.core.train.preflight import check_writable, preflight
    from workbench.core.views.live_text import detached_lines

    output_root = Path(config.output_dir).expanduser()
    check_writable(output_root)
    # An offline Hub or a wrong path fails here, in one line, not in the log.
    if args.resume:
        run_dir = run_to_resume(output_root)
        preflight(saved_config(run_dir, config.preset))
    else:
        preflight(config)
        run_dir = new_run_dir(output_root, config.preset)
    train_args = [a for a in args.argv[1:] if a != "--detach"]  # argv[0] is "train"
    process = start_detached_run(train_args, run_dir)
    for line in detached_lines(run_dir, process.pid, config.output_dir):
        print(line)
    return 0


def console_skipped_line(model_dir: str) -> str:
    """What a run without a terminal says instead of opening the translation console."""
    return (
        "translation console skipped (no terminal); open it with "
        f"`workbench interact --model {model_dir}`"
    )


def stop_on_signals(
    say: Callable[[str], None] | None, hang_up: Callable[[], None] | None = None
) -> threading.Event:
    """An Event that Ctrl-C or SIGTERM sets (the run stops after the step, with a
    checkpoint); a second Ctrl-C raises KeyboardInterrupt, to abort at once.

    SIGHUP -- the terminal went away: an SSH link dropped, ``tmux kill-session`` -- does
    not stop the run: ``hang_up`` lets go of the terminal and the run goes on to its end,
    its lines in the run folder's ``train.log``.
    """
    stop = threading.Event()
    signals = [0]  # counted here: the flag may be set by a stop request too

    def terminal_closed(signum: int, frame: FrameType | None) -> None:
        if hang_up is not None:
            hang_up()

    if signal.getsignal(signal.SIGHUP) is not signal.SIG_IGN:  # nohup ignores it already
        signal.signal(signal.SIGHUP, terminal_closed)

    def request_stop(signum: int, frame: FrameType | None) -> None:
        signals[0] += 1
        if signals[0] > 1:  # a second Ctrl-C means "now"
            raise KeyboardInterrupt
        stop.set()
        if say is not None:
            say(
                f"  stopping after this step ({signal.Signals(signum).name}); "
                "press Ctrl-C again to abort without a checkpoint"
            )

    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, request_stop)
    return stop
