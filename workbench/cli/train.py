"""``workbench train``, ``workbench tui`` and ``workbench presets``: the commands that take
run settings (a preset, a TOML file, flags), and how those become one ``RunConfig``.

The flags are made from ``RunConfig``'s fields, as ``HfArgumentParser`` makes them from a
dataclass: each setting's flag is its name in kebab case, with its group, help and aliases
from the field's metadata; its value is parsed and checked by the config, not here.

Only argparse and the config load at import; the run itself is
:func:`workbench.core.train.run_training.run_training`, imported inside the command.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
from collections.abc import Callable
from dataclasses import Field, fields
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any

from workbench.cli.options import Flag, add_command, without_flags
from workbench.core.config.build import build_config, preset_values, setting_type
from workbench.core.config.presets import DEFAULT_PRESET, PRESET_NOTES, PRESETS
from workbench.core.config.run_config import RunConfig
from workbench.core.config.settings import (
    DEFAULT_QE,
    SETTING_GROUPS,
    flag_name,
    load_toml,
    setting_value,
)
from workbench.errors import WorkbenchError

if TYPE_CHECKING:
    from workbench.cli.options import Subparsers

#: The run settings that are no flag of their own. The preset is the base that the TOML
#: file and the flags override, so it is chosen by --preset (with its choices), once.
NOT_FLAGS = ("preset",)
#: What a setting's value looks like in --help, by its type.
METAVARS = {"int": "INT", "float": "FLOAT", "str": "TEXT"}


def flag_settings() -> list[Field[Any]]:
    """The RunConfig fields that are flags, in field order."""
    return [f for f in fields(RunConfig) if f.name not in NOT_FLAGS]


def setting_flag(f: Field[Any]) -> str:
    """A setting's own flag: its name in kebab case, or ``--no-clean`` for a switch that
    is on by default (the flag a user gives is the one that changes something)."""
    return ("--no-" + f.name.replace("_", "-")) if f.default is True else flag_name(f.name)


def default_text(name: str) -> str:
    """``default: 2e-05; demo: 0.0007``: the default preset's value, then each other
    preset's where it differs."""
    values = preset_values(name)
    default = values[DEFAULT_PRESET]
    others = [f"{preset}: {setting_value(v)}" for preset, v in values.items() if v != default]
    return "; ".join([f"default: {setting_value(default)}", *others])


def add_run_options(parser: argparse.ArgumentParser) -> None:
    """Register --preset, --config, --set and one flag per run setting, in its group."""
    parser.add_argument(
        "--preset",
        default=DEFAULT_PRESET,
        choices=sorted(PRESETS),
        help=f"starting settings (default: {DEFAULT_PRESET}). Every preset but demo "
        "downloads its model and data from the Hugging Face Hub, or a mirror set by "
        "HF_ENDPOINT, and fails without one; demo is the one that runs offline. "
        "`workbench presets NAME` prints every value a run of NAME will use; the "
        f"defaults below are {DEFAULT_PRESET}'s, then other presets' where they differ",
    )
    parser.add_argument("--config", metavar="FILE", help="TOML file of settings")
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a setting by its TOML key, e.g. --set label_smoothing=0.1",
    )
    groups = {
        name: parser.add_argument_group(f"{name} settings", text)
        for name, text in SETTING_GROUPS.items()
    }
    for f in flag_settings():
        group = groups[f.metadata["group"]]
        names = (setting_flag(f), *f.metadata["aliases"])
        kind, _ = setting_type(f.name)
        text = f.metadata["help"]
        options: dict[str, Any]
        if kind == "bool":
            # store_const, not store_true: a flag not given stays None and leaves the
            # preset's or the TOML file's value alone. A setting on by default is
            # switched off by its --no- flag (--no-clean).
            options = {"action": "store_const", "const": f.default is not True}
            if f.default is True:  # the flag is --no-…: say what giving it does
                text = f"turn off (on by default): {text}"
        else:
            # Kept as typed: build_config coerces and checks it, so a bad value is the
            # config's one sentence, not argparse's usage message.
            options = {"metavar": METAVARS[kind]}
            if f.metadata["bare"] is not None:  # --comet alone: its default model
                options.update(nargs="?", const=f.metadata["bare"])
            text = f"{text} [{default_text(f.name)}]"
        help_text = text.replace("%", "%%")  # argparse %-formats help texts
        group.add_argument(*names, dest=f.name, default=None, help=help_text, **options)


def config_from_args(args: argparse.Namespace) -> RunConfig:
    """Preset, then --config TOML, then flags."""
    overrides: dict[str, Any] = {}
    for f in flag_settings():
        value = getattr(args, f.name, None)
        if value is not None:
            overrides[f.name] = value
    for item in getattr(args, "set", []) or []:
        key, sep, value = item.partition("=")
        if not sep:
            raise WorkbenchError(f"--set takes KEY=VALUE, got '{item}'")
        overrides[key.strip()] = value.strip()
    toml_values = load_toml(args.config) if getattr(args, "config", None) else None
    return build_config(args.preset, toml_values, overrides)


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


#: ``tui --qe``: the Translate pane scores each translation without a reference.
QE_FLAG: Flag = (
    "--qe",
    {
        "nargs": "?",
        "const": DEFAULT_QE,
        "metavar": "MODEL",
        "help": "the Translate pane scores each translation without a reference "
        f"(alone: {DEFAULT_QE}, gated on the Hub: accept its licence, set HF_TOKEN)",
    },
)


def add_parsers(sub: Subparsers) -> None:
    """Register ``train``, ``tui`` and ``presets`` on the CLI's subparsers."""
    train = add_command(
        sub,
        "train",
        help="fine-tune a model (plain lines with --headless)",
        description=train_description(),
        flags=TRAIN_SWITCHES,
    )
    add_run_options(train)
    tui = add_command(sub, "tui", help="the full-screen workbench (Textual)", flags=[QE_FLAG])
    add_run_options(tui)
    add_command(
        sub,
        "presets",
        help="list the presets and their settings",
        flags=[("name", {"nargs": "?", "help": "show one preset in full"})],
    )


def run_train(args: argparse.Namespace) -> int:
    """Run a fine-tuning job with the headless printer; Ctrl-C/SIGTERM stop cleanly."""
    config = config_from_args(args)
    if args.detach:
        from workbench.cli.detach import run_detached
        from workbench.core.train import distributed

        if distributed.is_distributed():
            raise WorkbenchError(
                "--detach starts one process of its own, so it cannot run under torchrun "
                "or accelerate launch; detach the launcher instead (for example with "
                "`nohup torchrun … &` or `systemd-run --user`)"
            )

        return run_detached(args, config)
    from workbench.cli.headless import HeadlessPrinter
    from workbench.cli.translate import run_console
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
        from workbench.core.run_folder import HISTORY_FILE
        from workbench.core.translate.translator import Translator

        model_dir = str(result.summary.best_model)
        translator = Translator.from_pretrained(model_dir)
        return run_console(translator, model_dir, Path(config.output_dir) / HISTORY_FILE)
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


def run_tui(args: argparse.Namespace) -> int:
    """Open the Textual app; without a terminal, say so and point to the headless run."""
    config = config_from_args(args)
    served = os.environ.get("TEXTUAL_DRIVER", "").endswith(":WebDriver")  # workbench serve
    if not served and not (sys.stdin.isatty() and sys.stdout.isatty()):
        raise WorkbenchError(
            "workbench tui needs an interactive terminal (stdin/stdout are not a TTY); "
            "use `workbench train --headless` for pipes, logs and batch jobs"
        )
    from workbench.tui.app import WorkbenchApp

    # In a browser tab a run trains in a process of its own: the tab is only a viewer;
    # it trains with the tab's run flags (--qe is the Translate pane's, not the run's).
    runs = without_flags(args.argv[1:], [QE_FLAG]) if served else None
    app = WorkbenchApp(config, detached_runs=runs, qe_model=args.qe)
    code = app.run() or 0
    if app.keeps_training:  # the terminal went away: the run trains on, here, to its end
        app.wait_for_training()
    for line in app.farewell:
        print(line)
    return code


def run_presets(args: argparse.Namespace) -> int:
    """Print presets; with a name, every setting of that preset."""
    if args.name:
        config = build_config(args.name)
        print(f"# {args.name}: {PRESET_NOTES.get(args.name, '')}")
        print(
            f"# the values `workbench train --preset {args.name}` uses; a --config file "
            "and flags override them"
        )
        for key, value in config.to_dict().items():
            print(f"{key} = {value!r}")
        return 0
    for name in PRESETS:
        config = build_config(name)
        print(
            f"{name:12} model={config.model}  data={config.data}"
            + (f" ({config.data_config})" if config.data_config else "")
        )
    return 0
