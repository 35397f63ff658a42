"""The picking flags of ``translate`` and ``interact``: ``--pick``, the candidates, how
they are sampled, the MBR utility and the QE metric, checked into one
:class:`~workbench.core.translate.picked.PickSettings` before any model loads. Cheap to
import: no torch."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from workbench.errors import WorkbenchError

if TYPE_CHECKING:
    from workbench.core.translate.picked import PickSettings


def add_pick_options(parser: argparse.ArgumentParser) -> None:
    """Register the picking flags: ``--pick``, the candidates, how they are sampled, the
    utility and the QE metric (``--qe`` itself is :data:`QE_FLAG`)."""
    from workbench.core.picking.choices import (
        CANDIDATE_SOURCES,
        DEFAULT_CANDIDATES,
        PICK_METHODS,
        QE_METRICS,
        UTILITIES,
    )

    pick = parser.add_argument_group("picking among candidates (quality-aware decoding)")
    pick.add_argument(
        "--pick",
        choices=PICK_METHODS,
        default=None,
        help="translate each line N times and pick one: qe (the best by --qe's "
        "reference-free metric) or mbr (the highest expected --utility against the others)",
    )
    pick.add_argument(
        "--candidates",
        type=int,
        default=None,
        metavar="N",
        help=f"candidates per line, 2..64 (default with --pick: {DEFAULT_CANDIDATES})",
    )
    pick.add_argument(
        "--candidates-from",
        choices=CANDIDATE_SOURCES,
        default="sample",
        help="sample (default), beam (beam search's n-best) or both (half each)",
    )
    pick.add_argument(
        "--epsilon",
        type=float,
        default=None,
        help="epsilon sampling's cut (default 0.02 unless --top-p is given; transformers only)",
    )
    pick.add_argument("--top-p", type=float, default=1.0, help="nucleus sampling (default 1.0)")
    pick.add_argument("--temperature", type=float, default=1.0, help="sampling temperature")
    pick.add_argument(
        "--seed", type=int, default=0, help="the samples' seed, 0..2**32-1 (default 0)"
    )
    pick.add_argument(
        "--utility", choices=UTILITIES, default=None, help="--pick mbr's utility (required)"
    )
    pick.add_argument(
        "--utility-model",
        default=None,
        metavar="MODEL",
        help="the COMET model of --utility comet (default: Unbabel/wmt22-comet-da)",
    )
    pick.add_argument(
        "--fast-mbr",
        action="store_true",
        help="MBR by confidence-based pruning (Cheng & Vlachos 2023) instead of in full",
    )
    pick.add_argument(
        "--qe-metric",
        choices=QE_METRICS,
        default="cometkiwi",
        help="--pick qe's metric (default cometkiwi, the model --qe names)",
    )


def pick_settings(args: argparse.Namespace) -> PickSettings | None:
    """The picking flags checked into settings (None: no pick asked), one line when wrong."""
    from workbench.core.picking.choices import DEFAULT_CANDIDATES
    from workbench.core.translate.candidates import CandidateSettings
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
        seed=args.seed,
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
