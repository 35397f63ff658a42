"""``workbench translate``: arguments or stdin, one translated line per input line (pipes).

A thin loop over :class:`workbench.core.translate.translator.Translator`: stdout holds the
translations only, so it can feed another program; the backend and notices go to stderr.
With ``--pick`` each line is translated N times and one candidate picked
(:mod:`workbench.core.translate.picked`); ``--json`` prints one object a line, in the
input's order: ``{"source", "translation", "picked_by", "candidates": [{"text", "score",
"count"}]}``, where ``score`` is what the pick ranked by (MBR: the expected utility).
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
from collections.abc import Iterable
from typing import TYPE_CHECKING, TextIO

from workbench.cli.options import (
    QE_FLAG,
    add_backend_option,
    add_language_options,
    add_model_options,
    load_translator,
)
from workbench.cli.pick_options import add_pick_options, pick_settings
from workbench.core.decoding import DecodeOptions
from workbench.core.translate.translator import Translator
from workbench.errors import WorkbenchError

if TYPE_CHECKING:
    from workbench.cli.options import Subparsers
    from workbench.core.picking.picks import Pick, Picker
    from workbench.core.translate.picked import PickedLine, PickSettings

#: Lines picked at once: their candidates are generated in batches together.
PICK_CHUNK = 32


def add_parser(sub: Subparsers) -> None:
    """Register ``translate`` on the CLI's subparsers."""
    translate = sub.add_parser("translate", help="translate arguments or stdin, line by line")
    translate.add_argument("text", nargs="*", help="sentences (default: read stdin)")
    add_model_options(translate)
    add_language_options(translate)
    add_backend_option(translate)
    translate.add_argument(
        "--json",
        action="store_true",
        help="one JSON object a line: source, translation, picked_by and the candidates",
    )
    add_pick_options(translate)
    translate.add_argument(
        QE_FLAG[0],
        **{
            **QE_FLAG[1],
            "help": "--pick qe's model, "
            + ("a reference-free COMET model: a Hub id or a folder (alone: the default)"),
        },
    )


def run(args: argparse.Namespace) -> int:
    """Translate arguments or stdin, one output line per input line."""
    settings = pick_settings(args)  # a wrong flag is one line before the model loads
    if settings is None and args.qe is not None:
        raise WorkbenchError("translate's --qe names --pick qe's model; add --pick qe")
    translator, options = load_translator(args)
    if settings is None:
        return run_pipe(translator, iter_input_lines(args.text), options, as_json=args.json)
    picker = settings.picker(translator)
    return run_picks(translator, iter_input_lines(args.text), options, settings, picker, args.json)


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
    as_json: bool = False,
) -> int:
    """One output line per input line; empty lines stay empty; the backend in use and
    notices go to stderr, so stdout holds translations only (or, ``as_json``, one object
    a line)."""
    stdout = stdout or sys.stdout
    stderr = stderr or sys.stderr
    print(f"backend: {translator.backend_label}", file=stderr)
    for notice in translator.notices:
        print(f"note: {notice}", file=stderr)
    for number, line in enumerate(lines, 1):
        if not line.strip():
            print(json_line(line, "") if as_json else "", file=stdout)
            continue
        try:
            item = translator.translate(line, options)
        except Exception as err:  # one bad line keeps its place and the rest go on
            print(could_not_translate(number, err), file=stderr)
            print(json_line(line, "") if as_json else "", file=stdout)
            continue
        for notice in item.notices:
            print(f"line {number}: {notice}", file=stderr)
        print(json_line(line, item.text) if as_json else item.text, file=stdout)
        stdout.flush()
    return 0


def could_not_translate(number: int, err: Exception) -> str:
    """What stderr says for an input line that failed (it keeps its place, empty)."""
    return f"line {number}: could not translate ({type(err).__name__}: {err})"


def run_picks(
    translator: Translator,
    lines: Iterable[str],
    options: DecodeOptions,
    settings: PickSettings,
    picker: Picker,
    as_json: bool,
    stdout: TextIO | None = None,
    stderr: TextIO | None = None,
) -> int:
    """One picked translation (or JSON object) per input line, in the input's order, the
    lines read and picked :data:`PICK_CHUNK` at a time, each chunk printed as it is done;
    notices and failures go to stderr as :func:`run_pipe` says them."""
    stdout = stdout or sys.stdout
    stderr = stderr or sys.stderr
    print(f"backend: {translator.backend_label}", file=stderr)
    note = settings.candidates.engine_note(translator.backend.name)
    for notice in [*translator.notices, *([note] if note else [])]:
        print(f"note: {notice}", file=stderr)
    count = settings.candidates.count
    print(f"picking: {picker.label}, {count} candidates a line", file=stderr)
    numbered = enumerate(lines, 1)
    while chunk := list(itertools.islice(numbered, PICK_CHUNK)):
        for (number, source), picked in zip(
            chunk, picked_chunk(translator, chunk, options, settings, picker, stderr), strict=True
        ):
            pick = picked.pick if picked is not None else None
            for notice in picked.notices if picked is not None and pick is not None else ():
                print(f"line {number}: {notice}", file=stderr)
            shown = pick.translation if pick is not None else ""
            print(json_line(source, shown, pick) if as_json else shown, file=stdout)
        stdout.flush()
    return 0


def picked_chunk(
    translator: Translator,
    chunk: list[tuple[int, str]],
    options: DecodeOptions,
    settings: PickSettings,
    picker: Picker,
    stderr: TextIO,
) -> list[PickedLine | None]:
    """The numbered lines of ``chunk`` picked together; when that fails, one at a time,
    so that one bad line is said and left empty (None) while the others are picked."""
    from workbench.core.translate.picked import pick_translations

    def pick(texts: list[str]) -> list[PickedLine]:
        return pick_translations(translator, texts, picker, settings.candidates, options)

    try:
        return list(pick([source for _, source in chunk]))
    except Exception as err:  # one bad line keeps its place and the rest go on
        if len(chunk) == 1:
            print(could_not_translate(chunk[0][0], err), file=stderr)
            return [None]
    done: list[PickedLine | None] = []
    for number, source in chunk:
        try:
            done.extend(pick([source]))
        except Exception as err:
            print(could_not_translate(number, err), file=stderr)
            done.append(None)
    return done


def json_line(source: str, translation: str, pick: Pick | None = None) -> str:
    """A line's ``--json`` object (no pick: ``picked_by`` null, no candidates)."""
    return json.dumps(
        {
            "source": source,
            "translation": translation,
            "picked_by": pick.picked_by if pick is not None else None,
            "candidates": [
                {"text": c.text, "score": c.score, "count": c.count}
                for c in (pick.candidates if pick is not None else ())
            ],
        },
        ensure_ascii=False,
    )
