"""``workbench score``: any system's output scored, one segment a line, with intervals.

For translations made anywhere (another toolkit, a paper's outputs, an API): BLEU, chrF,
chrF++ and TER from sacreBLEU, COMET, a reference-free QE score and MetricX (lower is
better), each with its 95%
interval; two or more ``--hyp`` files are compared with the first on the same segments,
as ``sacrebleu --paired-bs``, ``comet-score`` and ``comet-compare`` users expect. A thin
adapter over :mod:`workbench.core.evaluate.system_scores`; only argparse at import.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from workbench.cli.options import QE_FLAG, Flag, add_command
from workbench.core.config.settings import (
    BLEU_TOKENIZERS,
    DEFAULT_COMET,
    DEFAULT_METRICX,
    DEFAULT_QE,
)
from workbench.core.config.settings import DEFAULT_METRICX_TOKENIZER as DEFAULT_TOKENIZER
from workbench.errors import WorkbenchError

if TYPE_CHECKING:
    from workbench.cli.options import Subparsers
    from workbench.core.events import Event

FLAGS: tuple[Flag, ...] = (
    (
        "--hyp",
        {
            "action": "append",
            "required": True,
            "metavar": "FILE",
            "help": "translations, one segment a line; give it again for each system "
            "(the first is the baseline of every paired test)",
        },
    ),
    ("--ref", {"metavar": "FILE", "help": "reference translations, one a line"}),
    ("--src", {"metavar": "FILE", "help": "source sentences, one a line (COMET and QE)"}),
    (
        "--metrics",
        {
            "metavar": "LIST",
            "help": "comma-separated: bleu, chrf, chrf++, ter, comet, qe, metricx, metricx-qe "
            "(default: the four sacreBLEU metrics with --ref, and comet/qe/metricx when "
            "--comet/--qe/--metricx is given)",
        },
    ),
    (
        "--comet",
        {
            "nargs": "?",
            "const": DEFAULT_COMET,
            "metavar": "MODEL",
            "help": f"COMET model, a Hub id or a local folder (alone: {DEFAULT_COMET})",
        },
    ),
    QE_FLAG,
    (
        "--metricx",
        {
            "nargs": "?",
            "const": DEFAULT_METRICX,
            "metavar": "MODEL",
            "help": f"MetricX model (lower is better), a Hub id or a local folder (alone: "
            f"{DEFAULT_METRICX}); scores with --ref, and without it as QE",
        },
    ),
    (
        "--metricx-tokenizer",
        {
            "metavar": "TOKENIZER",
            "help": "MetricX's tokenizer, a Hub id or a folder (default: one in the model's "
            f"folder, else {DEFAULT_TOKENIZER})",
        },
    ),
    (
        "--metricx-max-length",
        {
            "type": int,
            "metavar": "N",
            "help": "MetricX's input length in tokens (default: 1536, as MetricX-24 was trained)",
        },
    ),
    (
        "--tokenize",
        {
            "choices": [t for t in BLEU_TOKENIZERS if t != "auto"],
            "help": "sacreBLEU's BLEU tokenizer (default: from --target-lang, else zh, "
            "ja-mecab or ko-mecab when the references are written so, else 13a)",
        },
    ),
    ("--target-lang", {"metavar": "LANG", "help": "the references' language (picks --tokenize)"}),
    ("--json", {"action": "store_true", "help": "one JSON object with every segment's score"}),
)


def add_parser(subparsers: Subparsers) -> None:
    """Register ``workbench score`` on the CLI's subparsers."""
    add_command(
        subparsers,
        "score",
        help="score any system's output: BLEU, chrF, chrF++, TER, COMET, QE, with intervals",
        description="Score translation files (one segment a line) with intervals; two or "
        "more --hyp files are compared with the first, paired, on the same segments.",
        flags=FLAGS,
    )


def metrics_asked(args: argparse.Namespace) -> tuple[str, ...]:
    """--metrics, or the default: what the files given and --comet/--qe allow."""
    from workbench.core.evaluate.system_scores import parse_metrics

    if args.metrics is not None:
        return parse_metrics(args.metrics)
    names = ["bleu", "chrf", "chrf++", "ter"] if args.ref else []
    names += ["comet"] if args.comet else []
    names += ["qe"] if args.qe else []
    if args.metricx:  # with references when there are some, else as QE
        names += ["metricx"] if args.ref else ["metricx-qe"]
    if not names:
        raise WorkbenchError(
            "nothing to score: give --ref FILE for BLEU, chrF, chrF++ and TER (and --src "
            "FILE --comet for COMET), or --src FILE --qe for a reference-free score"
        )
    return parse_metrics(",".join(names))


def run(args: argparse.Namespace) -> int:
    """Score the files and print the report (or its JSON)."""
    import json
    from pathlib import Path

    from workbench.core.evaluate.system_scores import ScoreRequest, score_outputs
    from workbench.core.metricx.scorer import MetricXSettings
    from workbench.core.views.event_text import EventText
    from workbench.core.views.score_report_text import report_lines

    request = ScoreRequest(
        hypotheses=[Path(p).expanduser() for p in args.hyp],
        references=Path(args.ref).expanduser() if args.ref else None,
        sources=Path(args.src).expanduser() if args.src else None,
        metrics=metrics_asked(args),
        comet_model=args.comet or DEFAULT_COMET,
        qe_model=args.qe or DEFAULT_QE,
        tokenize=args.tokenize,
        target_lang=args.target_lang,
        metricx=MetricXSettings(
            args.metricx or DEFAULT_METRICX, args.metricx_tokenizer, args.metricx_max_length
        ),
    )
    text = EventText()

    def progress(event: Event) -> None:  # stderr: stdout stays the report (or the JSON)
        for line in text.lines(event):
            print(line, file=sys.stderr, flush=True)

    report = score_outputs(request, progress)
    if args.json:
        print(json.dumps(report.to_dict(), ensure_ascii=False, indent=1))
        return 0
    for line in report_lines(report):
        print(line)
    return 0
