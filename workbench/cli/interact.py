"""``workbench interact``: the plain-terminal console over a saved model or a Hub id.

A loop that reads lines and prints answers over one
:class:`workbench.core.translate.console_session.ConsoleSession`, the core the TUI's
Translate pane runs through too. It prompts with the model's source language and answers
with its target language (``en>``, ``de>``), as the model's direction resolved them (its
workbench.json, a Hub id's preset, the flags). Every translation is appended to a history
file as it happens, so a crash or a closed SSH session never loses what the user tried
(the run report reads it later).
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, TextIO

from workbench.cli.options import (
    QE_FLAG,
    add_backend_option,
    add_language_options,
    add_model_options,
    check_model_options,
    language_choice,
)
from workbench.cli.pick_options import add_pick_options, pick_settings
from workbench.core.translate.judgements import JUDGE_USAGE, is_judge_command, parse_judgement
from workbench.errors import WorkbenchError, failure_text

if TYPE_CHECKING:
    from workbench.cli.options import Subparsers
    from workbench.core.translate.console_session import ConsoleAnswer, ConsoleSession
    from workbench.core.translate.translator import Translator

QUIT_WORDS = {":q", ":quit", "quit", "exit", ":exit"}


def add_parser(sub: Subparsers) -> None:
    """Register ``interact`` on the CLI's subparsers."""
    interact = sub.add_parser("interact", help="translate what you type with a saved model")
    add_model_options(interact)
    add_language_options(interact)
    add_backend_option(interact)
    interact.add_argument(QE_FLAG[0], **QE_FLAG[1])
    add_pick_options(interact)


def run(args: argparse.Namespace) -> int:
    """The assignment's --interact: load the best model and translate typed lines."""
    from workbench.core.translate.console_session import (
        ConsoleModel,
        ConsoleSession,
        console_history,
        side_quality,
    )

    check_model_options(args)
    pick = pick_settings(args)
    model = ConsoleModel(
        args.model,
        language_choice(args),
        backend=args.backend,
        num_beams=args.num_beams,
        max_new_tokens=args.max_new_tokens,
        pick=pick,
    )
    quality = side_quality(args.qe, pick)
    session = ConsoleSession({"model": model}, console_history(args.model), quality)
    session.check()  # every path, before seconds of loading a model
    session.load()
    if pick is not None:
        print("Loading the metric that picks …", flush=True)
        session.picker()  # a gated, missing or unwired metric is one line before the session
    if quality is not None:
        print(f"Loading the QE model {quality.model} …", flush=True)
        quality.load()  # a gated or unsuitable model is one line before the session
    return run_console(session)


def console_prompts(translator: Translator) -> tuple[str, str]:
    """The console's two prompts: the source language before what the user types, the
    target language before the translation (``en> ``, ``de> ``)."""
    direction = translator.direction
    return f"{direction.source_lang or 'source'}> ", f"{direction.target_lang or 'target'}> "


def read_line(asked: str, stdin: TextIO, stdout: TextIO) -> str | None:
    """The next typed line, or None at EOF or Ctrl-C; a piped line is echoed after the
    prompt, as a terminal shows what was typed."""
    if stdin.isatty():
        try:
            return input(asked)
        except (EOFError, KeyboardInterrupt):
            print(file=stdout)
            return None
    stdout.write(asked)
    line = stdin.readline()
    if not line:
        print(file=stdout)
        return None
    line = line.rstrip("\r\n")
    print(line, file=stdout)
    return line


def run_console(
    session: ConsoleSession, stdin: TextIO | None = None, stdout: TextIO | None = None
) -> int:
    """Read lines, translate each with the session's model (scored without a reference
    when it has a QE model), until EOF, Ctrl-C or ``:q``."""
    stdin = stdin or sys.stdin
    stdout = stdout or sys.stdout
    translator = session.load()
    print(
        f"Translating with {session.model().name}. Type a sentence and press Enter; "
        "':q' or Ctrl-D quits.",
        file=stdout,
    )
    print(f"Backend: {translator.backend_label}", file=stdout)
    for notice in translator.notices:
        print(f"  note: {notice}", file=stdout)
    print(f"History: {session.history}", file=stdout)
    if session.quality is not None:
        quality = session.quality
        print(f"Quality estimate (no reference): {quality.metric} ({quality.model})", file=stdout)
    picker = session.picker()
    if picker is not None:
        candidates = session.model().pick.candidates  # type: ignore[union-attr]
        print(f"Picking: {picker.label} among {candidates.count} candidates a line", file=stdout)
        if note := candidates.engine_note(translator.backend.name):
            print(f"  note: {note}", file=stdout)
    print(f"Judge the last translation: {JUDGE_USAGE}", file=stdout)
    asked, answered = console_prompts(translator)
    while (line := read_line(asked, stdin, stdout)) is not None:
        if line.strip().lower() in QUIT_WORDS:
            return 0
        if not line.strip():
            continue
        if is_judge_command(line):
            print(judge_last(session, line), file=stdout)
            continue
        try:
            answer = session.translate(line)
        except Exception as err:  # one bad line must never end the session
            print(f"could not translate that line ({failure_text(err)})", file=stdout)
            continue
        for said in answer_lines(answer, answered):
            print(said, file=stdout)
        stdout.flush()
    return 0


def answer_lines(answer: ConsoleAnswer, answered: str) -> list[str]:
    """What the console prints for one translated line: its notices, any QE problem, why
    it is not in the history if it is not, then the translation with its time (and its QE
    score)."""
    from workbench.core.picking.pick_text import pick_lines, used_to_pick

    item = answer.translation
    said = [f"  note: {notice}" for notice in item.notices]
    if answer.quality_problem:
        off = "; the session goes on without QE" if answer.quality_off else ""
        said.append(f"  note: no QE score for that line ({answer.quality_problem}){off}")
    if answer.history_problem:
        said.append(f"  note: that line is {answer.history_problem}")
    shown = f"   {answer.quality.text()}" if answer.quality is not None else ""
    if answer.pick is not None:
        said.extend(pick_lines(answer.pick))
        score = answer.pick.score
        value = f" {score:.2f}" if score is not None else ""
        shown = f"   {used_to_pick(answer.pick.metric)}{value}{shown}"
    said.append(f"{answered}{item.text}   ({item.seconds * 1000:.0f} ms){shown}")
    return said


def judge_last(session: ConsoleSession, command: str) -> str:
    """Record ``:judge …`` for the last translation; what to print."""
    try:
        judgement = parse_judgement(command)
        session.judge(judgement)
    except WorkbenchError as err:
        return f"  {err}"
    return f"  judged: {judgement.text()}"
