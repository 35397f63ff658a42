"""``workbench lab decoding|cache|attention``: measure the assignment's questions.

Thin: each study is a function in :mod:`workbench.core.lab`, imported inside its command,
so ``workbench --help`` stays light.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from workbench.cli.options import DEFAULT_MODEL_DIR, Flag, add_command, check_default_model
from workbench.errors import WorkbenchError

if TYPE_CHECKING:
    from workbench.core.lab.attention_kinds import AttentionKinds

MODEL: Flag = ("--model", {"default": DEFAULT_MODEL_DIR,
                           "help": f"saved model folder (default: {DEFAULT_MODEL_DIR})"})


def add_parser(subparsers: Any) -> None:
    """Register ``workbench lab`` and its studies on the CLI's subparsers."""
    lab = add_command(subparsers, "lab",
                      help="measure decoding strategies, the KV cache and the three attentions")
    studies = lab.add_subparsers(dest="study", metavar="STUDY")
    add_command(studies, "decoding", help="greedy, beam and sampling on the test set: BLEU, "
                "intervals, diversity, time", flags=(
                    MODEL,
                    ("--limit", {"type": int, "default": 200,
                                 "help": "the first N test sentences (default: 200)"}),
                    ("--run", {"metavar": "RUN_DIR", "default": None,
                               "help": "the run whose test set to use (default: the run "
                                       "that trained the model)"}),
                ))
    add_command(studies, "cache", help="the KV cache: time per token with and without it, "
                "and its size against the formula", flags=(MODEL,))
    add_command(studies, "attention", help="encoder self-, masked decoder self- and "
                "cross-attention of one sentence", flags=(
                    ("sentence", {"nargs": "*", "help": 'e.g. "I like to drink tea."'}),
                    MODEL,
                ))


def run(args: argparse.Namespace) -> int:
    """Run the chosen study and print what it measured."""
    if not args.study:
        raise WorkbenchError("say which study: workbench lab decoding, workbench lab cache "
                             "or workbench lab attention")
    check_default_model(args.model)
    return STUDIES[args.study](args)


def run_decoding(args: argparse.Namespace) -> int:
    """``workbench lab decoding``."""
    raise WorkbenchError("workbench lab decoding is not built yet")


def run_cache(args: argparse.Namespace) -> int:
    """``workbench lab cache``."""
    raise WorkbenchError("workbench lab cache is not built yet")


def run_attention(args: argparse.Namespace) -> int:
    """``workbench lab attention``: the three heatmaps, the per-head table, the JSON."""
    import json

    from rich.console import Console

    from workbench.core.attention import load_attention_model
    from workbench.core.decoding import clean_input
    from workbench.core.lab.attention_kinds import RESULT_FILE, attention_kinds, run_folder_of
    from workbench.core.translation import read_settings

    sentence = clean_input(" ".join(args.sentence or []))
    if not sentence:
        raise WorkbenchError('empty sentence: give the text to look at, e.g. '
                             'workbench lab attention "I like to drink tea."')
    result = attention_kinds(load_attention_model(args.model), sentence)
    console = Console(highlight=False)
    _print_kinds(console, result)
    _print_heads(console, result)
    folder = run_folder_of(args.model, read_settings(args.model).get("run_dir"))
    if folder is not None:
        target = folder / RESULT_FILE
        try:
            target.write_text(json.dumps(result.to_dict(), ensure_ascii=False), encoding="utf-8")
        except OSError as err:
            raise WorkbenchError(f"cannot write {target}: {err.strerror or err}; check the "
                                 "run folder's permissions") from None
        print(f"saved {target}")
    return 0


def _print_kinds(console: Any, result: AttentionKinds) -> None:
    """The three heatmaps, each under its title and what its rows and columns are."""
    from rich.text import Text

    from workbench.core.heatmap import legend, render_rich

    colour = console.color_system is not None and not console.no_color
    console.print(Text(f"source:      {result.sentence}"))
    console.print(Text(f"translation: {result.translation or '(empty)'}"))
    for kmap in result.kinds:
        view = kmap.view()
        console.print()
        console.print(Text(f"{kmap.kind} · {view.title}", style="bold"))
        console.print(Text(f"{kmap.axes} · [ ] the strongest column of each row", style="dim"))
        grid = render_rich(view.row_labels, view.col_labels, view.matrix,
                           width=console.width, colour=colour)
        if kmap is not result.cross:
            # The renderer's legend names cross-attention's axes (rows: translation,
            # columns: source); it is printed once, under the cross-attention map.
            lines = grid.split("\n", allow_blank=True)
            grid = Text("\n").join(lines[: len(lines) - len(legend(colour, False, console.width))])
        console.print(grid, no_wrap=True, overflow="ignore", crop=False)


def _print_heads(console: Any, result: AttentionKinds) -> None:
    """The per-head table, then each kind's most focused and most spread head."""
    from rich import box
    from rich.table import Table
    from rich.text import Text

    table = Table(box=box.SIMPLE_HEAD, pad_edge=False)
    for name in ("kind", "layer", "head", "entropy", "ceiling", "agreement"):
        table.add_column(name, justify="left" if name == "kind" else "right")
    for row in result.heads:
        table.add_row(row.kind, str(row.layer + 1), str(row.head + 1),
                      f"{row.entropy_bits:.2f}", f"{row.uniform_bits:.2f}",
                      "-" if row.agreement is None else f"{row.agreement:.0%}")
    console.print()
    console.print(Text("per head", style="bold"))
    console.print(Text("entropy: mean over rows, in bits (0 = all on one token; ceiling = "
                       "spread evenly over what the row can see) · agreement: share of rows "
                       "whose strongest source token is the mean view's", style="dim"))
    console.print(table)
    for kmap in result.kinds:
        rows = [h for h in result.heads if h.kind == kmap.kind]
        focused = min(rows, key=lambda h: h.entropy_bits)
        spread = max(rows, key=lambda h: h.entropy_bits)
        line = (f"{kmap.kind}: most focused layer {focused.layer + 1} head {focused.head + 1} "
                f"({focused.entropy_bits:.2f} bits), most spread layer {spread.layer + 1} "
                f"head {spread.head + 1} ({spread.entropy_bits:.2f} bits)")
        if kmap is result.cross:
            best = max(rows, key=lambda h: h.agreement or 0.0)
            line += (f", closest to the mean view layer {best.layer + 1} head {best.head + 1} "
                     f"({best.agreement or 0.0:.0%})")
        console.print(Text(line))


STUDIES = {"decoding": run_decoding, "cache": run_cache, "attention": run_attention}
