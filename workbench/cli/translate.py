"""``workbench translate``: arguments or stdin, one translated line per input line (pipes).

A thin loop over :class:`workbench.core.translate.translator.Translator`: stdout holds the
translations only, so it can feed another program; the backend and notices go to stderr.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable
from typing import TYPE_CHECKING, TextIO

from workbench.cli.options import (
    add_backend_option,
    add_language_options,
    add_model_options,
    load_translator,
)
from workbench.core.decoding import DecodeOptions
from workbench.core.translate.translator import Translator

if TYPE_CHECKING:
    from workbench.cli.options import Subparsers


def add_parser(sub: Subparsers) -> None:
    """Register ``translate`` on the CLI's subparsers."""
    translate = sub.add_parser("translate", help="translate arguments or stdin, line by line")
    translate.add_argument("text", nargs="*", help="sentences (default: read stdin)")
    add_model_options(translate)
    add_language_options(translate)
    add_backend_option(translate)


def run(args: argparse.Namespace) -> int:
    """Translate arguments or stdin, one output line per input line."""
    translator, options = load_translator(args)
    return run_pipe(translator, iter_input_lines(args.text), options)


def iter_input_lines(texts: list[str], stdin: TextIO | None = None) -> Iterable[str]:
    """Arguments if given, else stdin decoded as UTF-8 with bad bytes replaced."""
    if texts:
        yield from texts
        return
    stream = stdin or sys.stdin
    buffer = getattr(stream, "buffer", None)
    if buffer is not None:
        for raw in buffer:
            yield raw.decode("utf-8", "replace").rstrip("\r\n")
    else:
        for line in stream:
            yield line.rstrip("\r\n")


def run_pipe(
    translator: Translator,
    lines: Iterable[str],
    options: DecodeOptions | None = None,
    stdout: TextIO | None = None,
    stderr: TextIO | None = None,
) -> int:
    """One output line per input line; empty lines stay empty; the backend in use and
    notices go to stderr, so stdout holds translations only."""
    stdout = stdout or sys.stdout
    stderr = stderr or sys.stderr
    print(f"backend: {translator.backend_label}", file=stderr)
    for notice in translator.notices:
        print(f"note: {notice}", file=stderr)
    for number, line in enumerate(lines, 1):
        if not line.strip():
            print("", file=stdout)
            continue
        try:
            item = translator.translate(line, options)
        except Exception as err:  # one bad line keeps its place and the rest go on
            print(f"line {number}: could not translate ({type(err).__name__}: {err})", file=stderr)
            print("", file=stdout)
            continue
        for notice in item.notices:
            print(f"line {number}: {notice}", file=stderr)
        print(item.text, file=stdout)
        stdout.flush()
    return 0
