"""The picking flags of ``translate``, ``interact`` and ``tui``: ``--pick``, the
candidates, how they are sampled, the MBR utility and the QE metric, checked into one
:class:`~workbench.core.translate.picked.PickSettings` before any model loads. Cheap to
import: no torch."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from workbench.cli.options import Flag
    from workbench.core.translate.picked import PickSettings


def pick_flags() -> list[Flag]:
    """The picking flags of ``translate`` and ``interact`` as a table (``--qe`` itself is
    ``QE_FLAG``; a run's are its settings, ``core/config/picking_settings.py``)."""
    from workbench.core.picking.choices import (
        CANDIDATE_SOURCES,
        DEFAULT_CANDIDATES,
        PICK_METHODS,
        QE_METRICS,
        UTILITIES,
    )

    flags: list[Flag] = [
        (
            "--pick",
            {
                "choices": PICK_METHODS,
                "default": None,
                "help": "translate each line N times and pick one: qe (the best by --qe's "
                "reference-free metric) or mbr (the highest expected --utility against the "
                "others)",
            },
        ),
        (
            "--candidates",
            {
                "type": int,
                "default": None,
                "metavar": "N",
                "help": f"candidates per line, 2..64 (default with --pick: {DEFAULT_CANDIDATES})",
            },
        ),
        (
            "--candidates-from",
            {
                "choices": CANDIDATE_SOURCES,
                "default": "sample",
                "help": "sample (default), beam (beam search's n-best) or both (half each)",
            },
        ),
        (
            "--epsilon",
            {
                "type": float,
                "default": None,
                "help": "epsilon sampling's cut (default 0.02 unless --top-p is given; "
                "transformers only)",
            },
        ),
        ("--top-p", {"type": float, "default": 1.0, "help": "nucleus sampling (default 1.0)"}),
        ("--temperature", {"type": float, "default": 1.0, "help": "sampling temperature"}),
        (
            "--seed",
            {"type": int, "default": 0, "help": "the samples' seed, 0..2**32-1 (default 0)"},
        ),
        (
            "--utility",
            {"choices": UTILITIES, "default": None, "help": "--pick mbr's utility (required)"},
        ),
        (
            "--utility-model",
            {
                "default": None,
                "metavar": "MODEL",
                "help": "the model of a neural utility: COMET (default: Unbabel/wmt22-comet-da) "
                "or MetricX (default: google/metricx-24-hybrid-large-v2p6)",
            },
        ),
        (
            "--fast-mbr",
            {
                "action": "store_true",
                "help": "MBR by confidence-based pruning (Cheng & Vlachos 2023) instead of in full",
            },
        ),
        (
            "--qe-metric",
            {
                "choices": QE_METRICS,
                "default": "cometkiwi",
                "help": "--pick qe's metric (default cometkiwi, the model --qe names)",
            },
        ),
    ]
    return [*flags, *metricx_reading_flags()]


def metricx_reading_flags() -> list[Flag]:
    """How a MetricX picker is read (a run's are its ``--metricx-*`` settings)."""
    return [
        (
            "--metricx-tokenizer",
            {
                "default": None,
                "metavar": "TOKENIZER",
                "help": "a MetricX picker's tokenizer, a Hub id or a folder (default: one in "
                "the model's folder, else google/mt5-xl)",
            },
        ),
        (
            "--metricx-max-length",
            {
                "type": int,
                "default": None,
                "metavar": "N",
                "help": "a MetricX picker's input length in tokens (default: the edition's, "
                "1536 for MetricX-24)",
            },
        ),
    ]


def add_pick_options(parser: argparse.ArgumentParser) -> None:
    """Register the picking flags in a group of their own."""
    pick = parser.add_argument_group("picking among candidates (quality-aware decoding)")
    for flag, options in pick_flags():
        pick.add_argument(flag, **options)


def pick_settings(args: argparse.Namespace) -> PickSettings | None:
    """The picking flags checked into settings (None: no pick asked), one line when wrong."""
    from workbench.core.translate.picked import PickSettings

    return PickSettings.requested(args, getattr(args, "qe", None))
