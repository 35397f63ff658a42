"""``workbench lab decoding|cache|attention``: measure the assignment's questions.

Thin: each study is a function in :mod:`workbench.core.lab`, imported inside its command,
so ``workbench --help`` stays light.
"""

from __future__ import annotations

import argparse
from typing import Any

from workbench.cli.attention import pick, selector
from workbench.cli.options import MODEL_FLAG, add_command, check_default_model
from workbench.errors import WorkbenchError


def add_parser(subparsers: Any) -> None:
    """Register ``workbench lab`` and its studies on the CLI's subparsers."""
    lab = add_command(subparsers, "lab",
                      help="measure decoding strategies, the KV cache and the three attentions")
    studies = lab.add_subparsers(dest="study", metavar="STUDY")
    add_command(studies, "decoding", help="greedy, beam and sampling on the test set: BLEU, "
                "intervals, diversity, time", flags=(
                    MODEL_FLAG,
                    ("--limit", {"type": int, "default": 200,
                                 "help": "the first N test sentences (default: 200)"}),
                    ("--run", {"metavar": "RUN_DIR", "default": None,
                               "help": "the run whose test set to use (default: the run "
                                       "that trained the model)"}),
                ))
    add_command(studies, "cache", help="the KV cache: time per token with and without it, "
                "and its size against the formula", flags=(
                    MODEL_FLAG,
                    ("--lengths", {"type": int, "nargs": "+", "metavar": "T", "default": None,
                                   "help": "output lengths to force (default: 16 32 64 128)"}),
                    ("--repeats", {"type": int, "default": 3,
                                   "help": "timed runs per length; the median counts "
                                           "(default: 3)"}),
                ))
    add_command(studies, "attention", help="encoder self-, masked decoder self- and "
                "cross-attention of one sentence", flags=(
                    ("sentence", {"nargs": "*", "help": 'e.g. "I like to drink tea."'}),
                    MODEL_FLAG,
                    ("--layer", {"type": selector, "default": None,
                                 "help": "layer of each kind, 1 = first, -1 = last, or 'mean' "
                                         "(default: mean)"}),
                    ("--head", {"type": selector, "default": None,
                                "help": "attention head, 1 = first, or 'mean' (default: mean)"}),
                    ("--words", {"action": "store_true",
                                 "help": "merge SentencePiece pieces into whole words"}),
                ))


def run(args: argparse.Namespace) -> int:
    """Run the chosen study and print what it measured."""
    if not args.study:
        raise WorkbenchError("say which study: workbench lab decoding, workbench lab cache "
                             "or workbench lab attention")
    check_default_model(args.model)
    return STUDIES[args.study](args)


def run_decoding(args: argparse.Namespace) -> int:
    """``workbench lab decoding``: the strategies on the run's test set."""
    import sys
    from pathlib import Path

    from workbench.core.lab.decoding import STUDY_FILE, decoding_study
    from workbench.core.lab.text import decoding_text, save_result

    def progress(name: str, done: int, total: int) -> None:
        print(f"  [{done}/{total}] {name}", file=sys.stderr, flush=True)

    study = decoding_study(args.model, Path(args.run) if args.run else None, args.limit,
                           on_progress=progress)
    print(decoding_text(study))
    _saved(save_result(Path(study.run_dir), STUDY_FILE, study.to_dict()))
    return 0


def run_cache(args: argparse.Namespace) -> int:
    """``workbench lab cache``: the timings table, the formula against the cache, a chart."""
    from workbench.core.lab.cache import DEFAULT_LENGTHS, RESULT_FILE, cache_study, run_folder
    from workbench.core.lab.text import cache_text, save_result

    study = cache_study(args.model, lengths=args.lengths or DEFAULT_LENGTHS,
                        repeats=args.repeats)
    print(cache_text(study))
    _saved(save_result(run_folder(args.model), RESULT_FILE, study.to_dict()))
    return 0


def run_attention(args: argparse.Namespace) -> int:
    """``workbench lab attention``: the three heatmaps, the per-head table, the JSON."""
    from rich.console import Console

    from workbench.core.attention.extract import load_attention_model
    from workbench.core.attention.grid import DEFAULT_HEAD, DEFAULT_LAYER
    from workbench.core.decoding import clean_input
    from workbench.core.lab.attention_kinds import RESULT_FILE, attention_kinds
    from workbench.core.lab.cache import run_folder
    from workbench.core.lab.text import heads_text, kinds_lines, save_result
    from workbench.terminal import to_rich

    sentence = clean_input(" ".join(args.sentence or []))
    if not sentence:
        raise WorkbenchError('empty sentence: give the text to look at, e.g. '
                             'workbench lab attention "I like to drink tea."')
    result = attention_kinds(load_attention_model(args.model), sentence)
    console = Console(highlight=False)
    colour = console.color_system is not None and not console.no_color

    def choose(kmap: Any) -> tuple[Any, Any]:
        return (pick(args.layer, DEFAULT_LAYER, kmap.num_layers, "layer"),
                pick(args.head, DEFAULT_HEAD, kmap.num_heads, "head"))

    console.print(to_rich(kinds_lines(result, console.width, colour, choose=choose,
                                      words=args.words)),
                  no_wrap=True, overflow="ignore", crop=False)
    print()
    print(heads_text(result))
    _saved(save_result(run_folder(args.model), RESULT_FILE, result.to_dict()))
    return 0


def _saved(path: Any) -> None:
    if path is not None:
        print(f"saved {path}")


STUDIES = {"decoding": run_decoding, "cache": run_cache, "attention": run_attention}
