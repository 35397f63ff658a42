"""``workbench interact``: the plain-terminal console over a saved model or a Hub id.

A thin loop over :class:`workbench.core.translate.translator.Translator`. It prompts with
the model's source language and answers with its target language (``en>``, ``de>``), as
the model's direction resolved them (its workbench.json, a Hub id's preset, the flags).
Every translation is appended to a history file as it happens, so a crash or a closed SSH
session never loses what the user tried (the run report reads it later).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from workbench.cli.options import (
    add_backend_option,
    add_language_options,
    add_model_options,
    load_translator,
)
from workbench.core.config.run_config import DEFAULT_OUTPUT_DIR
from workbench.core.config.settings import DEFAULT_QE
from workbench.core.decoding import DecodeOptions
from workbench.core.run_folder.layout import OutputFolder
from workbench.core.translate.history import append_history, append_judgement
from workbench.core.translate.judgements import JUDGE_USAGE, is_judge_command, parse_judgement
from workbench.core.translate.translator import Translator
from workbench.errors import WorkbenchError

if TYPE_CHECKING:
    from workbench.cli.options import Subparsers
    from workbench.core.translate.quality import QualityEstimator, QualityScore

QUIT_WORDS = {":q", ":quit", "quit", "exit", ":exit"}


def add_parser(sub: Subparsers) -> None:
    """Register ``interact`` on the CLI's subparsers."""
    interact = sub.add_parser("interact", help="translate what you type with a saved model")
    add_model_options(interact)
    add_language_options(interact)
    add_backend_option(interact)
    interact.add_argument(
        "--qe",
        nargs="?",
        const=DEFAULT_QE,
        metavar="MODEL",
        help="score each translation without a reference, beside it and in the history "
        f"(alone: {DEFAULT_QE}, gated on the Hub: accept its licence, set HF_TOKEN)",
    )


def run(args: argparse.Namespace) -> int:
    """The assignment's --interact: load the best model and translate typed lines."""
    translator, options = load_translator(args)
    history = OutputFolder(Path(args.model).expanduser().parent).history
    if not Path(args.model).expanduser().exists():
        history = OutputFolder(Path(DEFAULT_OUTPUT_DIR)).history
    quality = None
    if args.qe:
        from workbench.core.translate.quality import QualityEstimator

        quality = QualityEstimator(args.qe)
        print(f"Loading the QE model {args.qe} …", flush=True)
        quality.load()  # now: a gated or missing model is one line before the session
    return run_console(translator, args.model, history, options, quality=quality)


def console_prompts(translator: Translator) -> tuple[str, str]:
    """The console's two prompts: the source language before what the user types, the
    target language before the translation (``en> ``, ``de> ``)."""
    direction = translator.direction
    return f"{direction.source_lang or 'source'}> ", f"{direction.target_lang or 'target'}> "


def run_console(
    translator: Translator,
    model_name: str,
    history: Path,
    options: DecodeOptions | None = None,
    stdin: TextIO | None = None,
    stdout: TextIO | None = None,
    quality: QualityEstimator | None = None,
) -> int:
    """Read lines, translate each (and score it without a reference, with ``quality``),
    until EOF, Ctrl-C or ``:q``."""
    stdin = stdin or sys.stdin
    stdout = stdout or sys.stdout
    interactive = stdin.isatty()
    print(
        f"Translating with {model_name}. Type a sentence and press Enter; ':q' or Ctrl-D quits.",
        file=stdout,
    )
    print(f"Backend: {translator.backend_label}", file=stdout)
    for notice in translator.notices:
        print(f"  note: {notice}", file=stdout)
    print(f"History: {history}", file=stdout)
    if quality is not None:
        print(f"Quality estimate (no reference): {quality.metric} ({quality.model})", file=stdout)
    print(f"Judge the last translation: {JUDGE_USAGE}", file=stdout)
    asked, answered = console_prompts(translator)
    last_id: str | None = None
    while True:
        if interactive:
            try:
                line = input(asked)
            except EOFError:
                print(file=stdout)
                return 0
            except KeyboardInterrupt:
                print(file=stdout)
                return 0
        else:
            stdout.write(asked)
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
        if is_judge_command(line):
            print(judge_last(history, last_id, line), file=stdout)
            continue
        try:
            item = translator.translate(line, options)
        except Exception as err:  # one bad line must never end the session
            print(f"could not translate that line ({type(err).__name__}: {err})", file=stdout)
            continue
        for notice in item.notices:
            print(f"  note: {notice}", file=stdout)
        score = estimate_quality(quality, line, item.text, stdout)
        shown = f"   {score.text()}" if score is not None else ""
        print(f"{answered}{item.text}   ({item.seconds * 1000:.0f} ms){shown}", file=stdout)
        stdout.flush()
        last_id = append_history(history, model_name, item, translator, score)


def estimate_quality(
    quality: QualityEstimator | None, source: str, translation: str, stdout: TextIO
) -> QualityScore | None:
    """The line's QE score, or None (none asked for, or it failed: said, and the session
    goes on)."""
    if quality is None:
        return None
    score, problem = quality.try_estimate(source, translation)
    if problem:
        print(f"  note: no QE score for that line ({problem})", file=stdout)
    return score


def judge_last(history: Path, line_id: str | None, command: str) -> str:
    """Record ``:judge …`` for the last translation; what to print."""
    if line_id is None:
        return "  nothing to judge yet: translate a sentence first"
    try:
        judgement = parse_judgement(command)
    except WorkbenchError as err:
        return f"  {err}"
    append_judgement(history, line_id, judgement)
    return f"  judged: {judgement.text()}"
