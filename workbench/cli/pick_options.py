"""The picking flags of ``translate``, ``interact`` and ``tui``: ``--pick``, the
candidates, how they are sampled, the MBR utility and the QE metric, checked into one
:class:`~workbench.core.translate.picked.PickSettings` before any model loads. Cheap to
import: no torch."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from workbench.errors import WorkbenchError

if TYPE_CHECKING:
    from workbench.cli.options import Flag
    from workbench.core.translate.picked import PickSettings

#: The candidates' seed flag, which ``tui`` leaves out: its ``--seed`` is the run's.
SEED_FLAG = "--seed"


def pick_flags(seed: bool = True) -> list[Flag]:
    """The picking flags as a table (``--qe`` itself is ``QE_FLAG``); ``seed``: with the
    candidates' ``--seed``. A table, so that ``tui`` in a browser can leave them out of the
    flags its runs train with."""
    from workbench.core.picking.metrics import QE_METRICS, UTILITIES
    from workbench.core.translate.candidates import CANDIDATE_SOURCES, DEFAULT_CANDIDATES

    flags: list[Flag] = [
        (
            "--pick",
            {
                "choices": ("qe", "mbr"),
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
        (SEED_FLAG, {"type": int, "default": 0, "help": "the samples' seed (default 0)"}),
        (
            "--utility",
            {"choices": UTILITIES, "default": None, "help": "--pick mbr's utility (required)"},
        ),
        (
            "--utility-model",
            {
                "default": None,
                "metavar": "MODEL",
                "help": "the COMET model of --utility comet (default: Unbabel/wmt22-comet-da)",
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
    return [flag for flag in flags if seed or flag[0] != SEED_FLAG]


def add_pick_options(parser: argparse.ArgumentParser, seed: bool = True) -> None:
    """Register the picking flags in a group of their own; ``seed``: with ``--seed``
    (``tui`` has the run's; its candidates are drawn with seed 0)."""
    pick = parser.add_argument_group("picking among candidates (quality-aware decoding)")
    for flag, options in pick_flags(seed):
        pick.add_argument(flag, **options)


def pick_settings(args: argparse.Namespace, seed: bool = True) -> PickSettings | None:
    """The picking flags checked into settings (None: no pick asked), one line when wrong;
    ``seed``: ``--seed`` is the candidates' (not the run's, as in ``tui``)."""
    from workbench.core.translate.candidates import DEFAULT_CANDIDATES, CandidateSettings
    from workbench.core.translate.picked import PickSettings

    if args.pick is None:
        given = [f for f in ("candidates", "utility") if getattr(args, f) is not None]
        if given or args.fast_mbr:
            flag = "--" + (given[0] if given else "fast-mbr")
            raise WorkbenchError(f"{flag} chooses how a pick is made; add --pick qe or --pick mbr")
        return None
    candidates = CandidateSettings(
        DEFAULT_CANDIDATES if args.candidates is None else args.candidates,
        args.candidates_from,
        epsilon=args.epsilon,
        top_p=args.top_p,
        temperature=args.temperature,
        seed=args.seed if seed else 0,
    )
    return PickSettings(
        args.pick,
        utility=args.utility,
        utility_model=args.utility_model,
        qe_metric=args.qe_metric,
        qe_model=getattr(args, "qe", None),
        pruned=args.fast_mbr,
        candidates=candidates,
    )
