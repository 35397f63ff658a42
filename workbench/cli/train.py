"""``workbench train``, ``workbench tui`` and ``workbench presets``: the commands that take
run settings (a preset, a TOML file, flags), and how those become one ``RunConfig``.

Only argparse and the config load at import; the run itself is
:func:`workbench.core.train.run_training.run_training`, imported inside the command.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from workbench.cli.options import Flag, add_command
from workbench.core.config import PRESETS, RunConfig, build_config, load_toml
from workbench.errors import WorkbenchError

# flag -> (config field, type, help)
TRAIN_FLAGS: dict[str, tuple[str, Any, str]] = {
    "--model": ("model", str, "Hub id, local model folder, or 'scratch'"),
    "--data": ("data", str, "Hub dataset id, local TSV/CSV/JSONL or datasets folder, or 'hsk'"),
    "--data-config": ("data_config", str, "Hub dataset config (e.g. zh-en)"),
    "--test-data": ("test_data", str,
                    "local file or datasets folder of test pairs (the before/after BLEU)"),
    "--test-fraction": ("test_fraction", float,
                        "test share held out of local data without --test-data (0.1)"),
    "--source-lang": ("source_lang", str, "source language code (en)"),
    "--target-lang": ("target_lang", str, "target language code (zh)"),
    "--label": ("target_label", str, "target-language token such as '>>cmn_Hans<<', or none"),
    "--samples": ("samples", int, "pairs sampled at random (0 = all)"),
    "--epochs": ("epochs", float, "training epochs"),
    "--lr": ("learning_rate", float, "peak learning rate"),
    "--batch-size": ("batch_size", int, "training batch size per device"),
    "--eval-batch-size": ("eval_batch_size", int, "evaluation batch size per device"),
    "--max-source-length": ("max_source_length", int, "source tokens kept (<= 512)"),
    "--max-target-length": ("max_target_length", int, "target tokens kept (<= 512)"),
    "--num-beams": ("num_beams", int, "beams for the before/after BLEU"),
    "--max-new-tokens": ("max_new_tokens", int, "generation length bound"),
    "--bleu-tokenize": ("bleu_tokenize", str, "sacreBLEU tokenizer (zh for Chinese)"),
    "--output-dir": ("output_dir", str, "root folder for runs and best_model"),
    "--seed": ("seed", int, "seed for sampling, split and training"),
    "--report-to": ("report_to", str, "also log to: none or tensorboard (metrics.jsonl always)"),
    "--ddp-timeout": ("ddp_timeout", int,
                      "seconds processes wait for each other under torchrun (1800)"),
}


def add_run_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--preset", default="opus-en-zh", choices=sorted(PRESETS),
                        help="starting settings (default: opus-en-zh; offline: demo)")
    parser.add_argument("--config", metavar="FILE", help="TOML file of settings")
    for flag, (dest, kind, text) in TRAIN_FLAGS.items():
        parser.add_argument(flag, dest=dest, type=str, default=None,
                            help=f"{text} [{kind.__name__}]")
    parser.add_argument("--fp16", action="store_const", const=True, default=None,
                        help="fp16 mixed precision (CUDA only)")
    parser.add_argument("--bf16", action="store_const", const=True, default=None,
                        help="bf16 mixed precision (default: on where the GPU has it; also on CPU)")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="any other setting, e.g. --set label_smoothing=0.1")


def config_from_args(args: argparse.Namespace) -> RunConfig:
    """Preset, then --config TOML, then flags."""
    overrides: dict[str, Any] = {}
    for dest, *_ in TRAIN_FLAGS.values():
        value = getattr(args, dest, None)
        if value is not None:
            overrides[dest] = value
    for flag in ("fp16", "bf16"):
        if getattr(args, flag, None):
            overrides[flag] = True
    for item in getattr(args, "set", []) or []:
        key, sep, value = item.partition("=")
        if not sep:
            raise WorkbenchError(f"--set takes KEY=VALUE, got '{item}'")
        overrides[key.strip()] = value.strip()
    toml_values = load_toml(args.config) if getattr(args, "config", None) else None
    return build_config(args.preset, toml_values, overrides)


#: What ``train`` takes besides the run settings.
TRAIN_SWITCHES: tuple[Flag, ...] = (
    ("--headless", {"action": "store_true",
                    "help": "plain progress lines on stdout (SSH, tmux, pipes)"}),
    ("--resume", {"action": "store_true",
                  "help": "continue the newest unfinished run from its last complete checkpoint"}),
    ("--no-interact", {"action": "store_true",
                       "help": "do not open the translation console after training"}),
)


def add_parsers(sub: Any) -> None:
    """Register ``train``, ``tui`` and ``presets`` on the CLI's subparsers."""
    train = add_command(sub, "train", help="fine-tune a model (plain lines with --headless)",
                        flags=TRAIN_SWITCHES)
    add_run_options(train)
    add_run_options(add_command(sub, "tui", help="the full-screen workbench (Textual)"))
    add_command(sub, "presets", help="list the presets and their settings",
                flags=[("name", {"nargs": "?", "help": "show one preset in full"})])


def run_train(args: argparse.Namespace) -> int:
    """Run a fine-tuning job with the headless printer; Ctrl-C/SIGTERM stop cleanly."""
    config = config_from_args(args)
    from workbench.cli.headless import HeadlessPrinter
    from workbench.cli.translate import run_console
    from workbench.core.train import distributed
    from workbench.core.train.run_training import run_training

    # Under torchrun / accelerate launch every rank runs this; only rank 0 speaks
    # (run_training drops the other ranks' events itself).
    main = distributed.is_main()
    printer = HeadlessPrinter()
    if not args.headless and main:
        printer.line("(plain output; the full-screen view is `workbench tui`)")
    stop = stop_on_signals(printer.line if main else None)
    result = run_training(config, printer, stop, resume=args.resume)
    if result.status != "finished":
        return 130 if result.status == "stopped" else 1
    interactive = sys.stdin.isatty() and sys.stdout.isatty()
    if not args.no_interact and interactive and main:
        signal.signal(signal.SIGINT, signal.default_int_handler)
        from workbench.core.run_folder import HISTORY_FILE
        from workbench.core.translate.translator import Translator

        model_dir = str(result.summary.best_model)
        translator = Translator.from_pretrained(model_dir)
        return run_console(translator, model_dir, Path(config.output_dir) / HISTORY_FILE)
    return 0


def stop_on_signals(say: Callable[[str], None] | None) -> threading.Event:
    """An Event that Ctrl-C or SIGTERM sets (the run stops after the step, with a
    checkpoint); a second Ctrl-C raises KeyboardInterrupt, to abort at once."""
    stop = threading.Event()

    def request_stop(signum: int, frame: Any) -> None:
        if stop.is_set():  # a second Ctrl-C means "now"
            raise KeyboardInterrupt
        stop.set()
        if say is not None:
            say(f"  stopping after this step ({signal.Signals(signum).name}); "
                "press Ctrl-C again to abort without a checkpoint")

    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, request_stop)
    return stop


def run_tui(args: argparse.Namespace) -> int:
    """Open the Textual app; without a terminal, say so and point to the headless run."""
    config = config_from_args(args)
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        raise WorkbenchError(
            "workbench tui needs an interactive terminal (stdin/stdout are not a TTY); "
            "use `workbench train --headless` for pipes, logs and batch jobs"
        )
    from workbench.tui.app import WorkbenchApp

    return WorkbenchApp(config).run() or 0


def run_presets(args: argparse.Namespace) -> int:
    """Print presets; with a name, every setting of that preset."""
    if args.name:
        config = build_config(args.name)
        for key, value in config.to_dict().items():
            print(f"{key} = {value!r}")
        return 0
    for name in PRESETS:
        config = build_config(name)
        print(f"{name:12} model={config.model}  data={config.data}"
              + (f" ({config.data_config})" if config.data_config else ""))
    return 0
