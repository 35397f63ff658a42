"""The ``workbench`` command: the parser and the dispatch, over one module per command.

Only argparse and the config load here: torch, transformers and Textual are imported
inside the command that needs them, so ``workbench --help`` answers at once.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable

from workbench import __version__
from workbench.cli import (
    attention,
    cache,
    compare,
    export,
    interact,
    lab,
    logs,
    presets,
    report,
    runs,
    score,
    serve,
    stop,
    sweep,
    train,
    translate,
    tui,
)
from workbench.errors import WorkbenchError

#: Each subcommand and the function that runs it.
COMMANDS: dict[str, Callable[[argparse.Namespace], int]] = {
    "train": train.run,
    "interact": interact.run,
    "translate": translate.run,
    "tui": tui.run,
    "presets": presets.run,
    "attention": attention.run,
    "report": report.run,
    "export": export.run,
    "lab": lab.run,
    "runs": runs.run,
    "logs": logs.run,
    "stop": stop.run,
    "serve": serve.run,
    "compare": compare.run,
    "sweep": sweep.run,
    "score": score.run,
    "cache": cache.run,
}


def build_parser() -> argparse.ArgumentParser:
    """The whole command tree (cheap: no heavy imports)."""
    parser = argparse.ArgumentParser(
        prog="workbench",
        description="Fine-tune and inspect machine-translation models from the terminal.",
    )
    parser.add_argument("--version", action="version", version=f"workbench {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    train.add_parser(sub)
    tui.add_parser(sub)  # cheap: Textual is imported inside its run()
    presets.add_parser(sub)
    interact.add_parser(sub)
    translate.add_parser(sub)
    attention.add_parser(sub)  # cheap: torch is imported inside its run()
    report.add_parser(sub)
    export.add_parser(sub)  # cheap: ctranslate2 is imported inside its run()
    lab.add_parser(sub)  # cheap: each study imports torch inside its run
    runs.add_parser(sub)
    logs.add_parser(sub)
    stop.add_parser(sub)
    serve.add_parser(sub)
    compare.add_parser(sub)
    sweep.add_parser(sub)  # cheap: optuna and torch are imported inside its run()
    score.add_parser(sub)  # cheap: sacreBLEU and the COMET scorer are imported inside its run()
    cache.add_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Parse, dispatch, and turn user-facing errors into one line and an exit code."""
    # Bad bytes piped in or out (binary garbage, a lone surrogate) become U+FFFD / '?'
    # instead of a UnicodeError that would end the session.
    for stream in (sys.stdin, sys.stdout, sys.stderr):
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="replace")
    parser = build_parser()
    args = parser.parse_args(argv)
    args.argv = list(sys.argv[1:] if argv is None else argv)  # what --detach passes on
    if not args.command:
        parser.print_help()
        return 0
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    try:
        return COMMANDS[args.command](args)
    except WorkbenchError as err:
        print(f"workbench: error: {err}", file=sys.stderr)
        return err.exit_code
    except KeyboardInterrupt:
        print("workbench: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
