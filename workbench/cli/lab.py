"""``workbench lab decoding|cache|attention``: measure the assignment's questions.

Thin: each study is a function in :mod:`workbench.core.lab`, imported inside its command,
so ``workbench --help`` stays light.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from workbench.cli.attention import pick, selector
from workbench.cli.options import MODEL_FLAG, QE_FLAG, add_command, check_default_model
from workbench.errors import WorkbenchError

if TYPE_CHECKING:
    from pathlib import Path

    from workbench.cli.options import Subparsers
    from workbench.core.attention.grid import AttentionGrid, Selector


def add_parser(subparsers: Subparsers) -> None:
    """Register ``workbench lab`` and its studies on the CLI's subparsers."""
    from workbench.core.picking.choices import DEFAULT_CANDIDATES

    lab = add_command(
        subparsers, "lab", help="measure decoding strategies, the KV cache and the three attentions"
    )
    studies = lab.add_subparsers(dest="study", metavar="STUDY")
    add_command(
        studies,
        "decoding",
        help="greedy, beam, sampling and picks (MBR, QE) on the test set: BLEU, chrF, "
        "intervals, diversity, time",
        flags=(
            MODEL_FLAG,
            (
                "--limit",
                {"type": int, "default": 200, "help": "the first N test sentences (default: 200)"},
            ),
            (
                "--run",
                {
                    "metavar": "RUN_DIR",
                    "default": None,
                    "help": "the run whose test set to use (default: the run "
                    "that trained the model)",
                },
            ),
            (
                "--candidates",
                {
                    "type": int,
                    "default": DEFAULT_CANDIDATES,
                    "metavar": "N",
                    "help": "candidates a sentence of the quality-aware arms, MBR by chrF "
                    f"and by BLEU (and QE with --qe), 2..64; 0: no such arms "
                    f"(default: {DEFAULT_CANDIDATES})",
                },
            ),
            QE_FLAG,
        ),
    )
    add_command(
        studies,
        "cache",
        help="the KV cache: time per token with and without it, and its size against the formula",
        flags=(
            MODEL_FLAG,
            (
                "--lengths",
                {
                    "type": int,
                    "nargs": "+",
                    "metavar": "T",
                    "default": None,
                    "help": "output lengths to force (default: 16 32 64 128)",
                },
            ),
            (
                "--repeats",
                {
                    "type": int,
                    "default": 3,
                    "help": "timed runs per length; the median counts (default: 3)",
                },
            ),
        ),
    )
    add_command(
        studies,
        "attention",
        help="encoder self-, masked decoder self- and cross-attention of one sentence",
        flags=(
            ("sentence", {"nargs": "*", "help": 'e.g. "I like to drink tea."'}),
            MODEL_FLAG,
            (
                "--layer",
                {
                    "type": selector,
                    "default": None,
                    "help": "layer of each kind, 1 = first, -1 = last, or 'mean' (default: mean)",
                },
            ),
            (
                "--head",
                {
                    "type": selector,
                    "default": None,
                    "help": "attention head, 1 = first, or 'mean' (default: mean)",
                },
            ),
            (
                "--words",
                {"action": "store_true", "help": "merge SentencePiece pieces into whole words"},
            ),
        ),
    )


def run(args: argparse.Namespace) -> int:
    """Run the chosen study and print what it measured."""
    if not args.study:
        raise WorkbenchError(
            "say which study: workbench lab decoding, workbench lab cache "
            "or workbench lab attention"
        )
    check_default_model(args.model)
    return STUDIES[args.study](args)


def run_decoding(args: argparse.Namespace) -> int:
    """``workbench lab decoding``: the strategies on the run's test set."""
    import sys
    from pathlib import Path

    from workbench.core.lab.decoding_strategies import DecodingStudy
    from workbench.core.lab.run_study import StudyOptions, run_study
    from workbench.core.lab.text import decoding_text

    def progress(name: str, done: int, total: int) -> None:
        print(f"  [{done}/{total}] {name}", file=sys.stderr, flush=True)

    run_dir = Path(args.run) if args.run else None
    options = StudyOptions(args.limit, run_dir, candidates=args.candidates, qe_model=args.qe)
    run = run_study("decoding", args.model, options, on_progress=progress)
    assert isinstance(run.result, DecodingStudy)
    print(decoding_text(run.result))
    _saved(run.saved)
    return 0


def run_cache(args: argparse.Namespace) -> int:
    """``workbench lab cache``: the timings table, the formula against the cache, a chart."""
    from workbench.core.lab.kv_cache import DEFAULT_LENGTHS, CacheStudy
    from workbench.core.lab.run_study import StudyOptions, run_study
    from workbench.core.lab.text import cache_text

    options = StudyOptions(lengths=tuple(args.lengths or DEFAULT_LENGTHS), repeats=args.repeats)
    run = run_study("cache", args.model, options)
    assert isinstance(run.result, CacheStudy)
    print(cache_text(run.result))
    _saved(run.saved)
    return 0


def run_attention(args: argparse.Namespace) -> int:
    """``workbench lab attention``: the three heatmaps, the per-head table, the JSON."""
    from rich.console import Console

    from workbench.core.attention.grid import DEFAULT_HEAD, DEFAULT_LAYER
    from workbench.core.lab.attention_kinds import AttentionKinds
    from workbench.core.lab.run_study import StudyOptions, run_study
    from workbench.core.lab.text import heads_text, kinds_lines, study_text
    from workbench.terminal import to_rich

    run = run_study("attention", args.model, StudyOptions(sentence=" ".join(args.sentence or [])))
    result = run.result
    if not isinstance(result, AttentionKinds):  # a decoder-only model's prompt study
        print(study_text(result))
        _saved(run.saved)
        return 0
    console = Console(highlight=False)
    colour = console.color_system is not None and not console.no_color

    def choose(kmap: AttentionGrid) -> tuple[Selector, Selector]:
        return (
            pick(args.layer, DEFAULT_LAYER, kmap.num_layers, "layer"),
            pick(args.head, DEFAULT_HEAD, kmap.num_heads, "head"),
        )

    console.print(
        to_rich(kinds_lines(result, console.width, colour, choose=choose, words=args.words)),
        no_wrap=True,
        overflow="ignore",
        crop=False,
    )
    print()
    print(heads_text(result))
    _saved(run.saved)
    return 0


def _saved(path: Path | None) -> None:
    if path is not None:
        print(f"saved {path}")


STUDIES = {"decoding": run_decoding, "cache": run_cache, "attention": run_attention}
