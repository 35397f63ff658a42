"""The plain-terminal translation console (``workbench interact``) and pipe mode (``translate``).

Both are thin loops over :class:`workbench.core.translation.Translator`. The console
appends every translation to a history file as it happens, so a crash or a closed SSH
session never loses what the user tried (the run report reads it later).
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Iterable
from pathlib import Path
from typing import TextIO

from workbench.core.translation import DecodeOptions, Translation, Translator

QUIT_WORDS = {":q", ":quit", "quit", "exit", ":exit"}


def append_history(
    path: Path, model: str, item: Translation, translator: Translator | None = None
) -> None:
    """Append one translation to the JSONL history (created on first use).

    The record names the run that trained the model as well as the model folder:
    ``best_model/`` is replaced by every newer run, and the run report must know which
    run a line really belongs to.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    record = {
        "time": time.strftime("%Y-%m-%dT%H:%M:%S"),
        "model": model,
        "run_dir": translator.run_dir if translator else None,
        "backend": translator.backend.name if translator else "",
        "source": item.source,
        "translation": item.text,
        "seconds": round(item.seconds, 3),
        "notices": item.notices,
    }
    with path.open("a", encoding="utf-8", errors="replace") as fh:
        fh.write(json.dumps(record, ensure_ascii=False) + "\n")
        fh.flush()


def run_console(
    translator: Translator,
    model_name: str,
    history: Path,
    options: DecodeOptions | None = None,
    stdin: TextIO | None = None,
    stdout: TextIO | None = None,
) -> int:
    """Read lines, translate each, until EOF, Ctrl-C or ``:q``."""
    stdin = stdin or sys.stdin
    stdout = stdout or sys.stdout
    interactive = stdin.isatty()
    print(f"Translating with {model_name}. Type a sentence and press Enter; "
          "':q' or Ctrl-D quits.", file=stdout)
    print(f"Backend: {translator.backend_label}", file=stdout)
    for notice in translator.notices:
        print(f"  note: {notice}", file=stdout)
    print(f"History: {history}", file=stdout)
    while True:
        if interactive:
            try:
                line = input("en> ")
            except EOFError:
                print(file=stdout)
                return 0
            except KeyboardInterrupt:
                print(file=stdout)
                return 0
        else:
            stdout.write("en> ")
            line = stdin.readline()
            if not line:
                print(file=stdout)
                return 0
            line = line.rstrip("\r\n")
            print(line, file=stdout)
        if line.strip().lower() in QUIT_WORDS:
            return 0
        if not line.strip():
            continue
        try:
            item = translator.translate(line, options)
        except Exception as err:  # one bad line must never end the session
            print(f"could not translate that line ({type(err).__name__}: {err})", file=stdout)
            continue
        for notice in item.notices:
            print(f"  note: {notice}", file=stdout)
        print(f"zh> {item.text}   ({item.seconds * 1000:.0f} ms)", file=stdout)
        stdout.flush()
        append_history(history, model_name, item, translator)


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
            print(f"line {number}: could not translate ({type(err).__name__}: {err})",
                  file=stderr)
            print("", file=stdout)
            continue
        for notice in item.notices:
            print(f"line {number}: {notice}", file=stderr)
        print(item.text, file=stdout)
        stdout.flush()
    return 0
