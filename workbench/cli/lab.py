"""``workbench lab decoding|cache|attention``: measure the assignment's questions.

Thin: each study is a function in :mod:`workbench.core.lab`, imported inside its command,
so ``workbench --help`` stays light.
"""

from __future__ import annotations

import argparse
from typing import Any

from workbench.cli.options import DEFAULT_MODEL_DIR, Flag, add_command, check_default_model
from workbench.errors import WorkbenchError

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
    """``workbench lab attention``."""
    raise WorkbenchError("workbench lab attention is not built yet")


STUDIES = {"decoding": run_decoding, "cache": run_cache, "attention": run_attention}
