"""``workbench export --ctranslate2``: convert a saved model for the fast CTranslate2 engine;
``workbench export --merge RUN``: a ``--shard`` run's shards merged into ``RUN/best_model``.

The CTranslate2 export goes next to the model (``<model>/ct2-int8/``), where ``interact``,
``translate`` and the TUI find it on their own. ctranslate2 is an optional extra, so this
module imports nothing heavy: the export lives in :mod:`workbench.core.translate.ct2_export`
and each family's conversion in :mod:`workbench.core.translate.ct2_convert`.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from workbench.cli.options import MODEL_FLAG, OUTPUT_DIR_FLAG, add_command, check_default_model
from workbench.core import DISTRIBUTION
from workbench.errors import WorkbenchError

if TYPE_CHECKING:
    from workbench.cli.options import Subparsers


def add_parser(subparsers: Subparsers) -> None:
    """Register ``workbench export`` on the CLI's subparsers."""
    from workbench.core.translate.ct2 import DEFAULT_QUANTIZATION, QUANTIZATIONS

    add_command(
        subparsers,
        "export",
        help="convert a saved model for faster translation (CTranslate2)",
        description="Convert a saved model (Marian, NLLB-200, M2M100, mBART-50 or T5, or a "
        "decoder-only Llama, Mistral, Qwen 2 or 3, Gemma or Gemma 3) to CTranslate2 (pip install "
        f"'{DISTRIBUTION}[ct2]'). The export is written to "
        "<model>/ct2-<quantization>/; interact, translate and the TUI use it "
        "automatically while it matches the model.",
        flags=(
            (
                "--ctranslate2",
                {"action": "store_true", "help": "export for CTranslate2 (the one format for now)"},
            ),
            MODEL_FLAG,
            (
                "--quantization",
                {
                    "default": DEFAULT_QUANTIZATION,
                    "choices": QUANTIZATIONS,
                    "help": f"weight type (default: {DEFAULT_QUANTIZATION}, the fastest on CPU; "
                    "float32 keeps the weights exact: the same greedy output as "
                    "transformers)",
                },
            ),
            (
                "--merge",
                {
                    "metavar": "RUN",
                    "help": "merge a --shard run's best checkpoint (its ranks' shards) into "
                    "RUN/best_model as ordinary safetensors (a run id or folder)",
                },
            ),
            OUTPUT_DIR_FLAG,
            (
                "--force",
                {
                    "action": "store_true",
                    "help": "rebuild even if the export is up to date (with --merge: replace "
                    "RUN/best_model)",
                },
            ),
        ),
    )


def run(args: argparse.Namespace) -> int:
    """Convert (or merge), then say where the result went and how to use it."""
    if args.merge:
        return merge(args)
    if not args.ctranslate2:
        raise WorkbenchError(
            f"say which format to export: workbench export --ctranslate2 [--model {args.model}]"
        )
    check_default_model(args.model)
    from workbench.core.translate.ct2_export import export_ctranslate2

    result = export_ctranslate2(args.model, args.quantization, force=args.force)
    size = f"{result.size_bytes / 1e6:.1f} MB"
    if result.rebuilt:
        print(
            f"exported {args.model} to {result.path} ({result.quantization}, {size}, "
            f"{result.seconds:.1f} s)"
        )
    else:
        print(f"{result.path} is up to date ({result.quantization}, {size}); --force rebuilds it")
    print(f"translate with it: workbench translate --backend ct2 --model {args.model}")
    return 0


def merge(args: argparse.Namespace) -> int:
    """Merge a sharded run's best checkpoint into its ``best_model/``."""
    import time
    from pathlib import Path

    from workbench.core.live.liveness import pick_run
    from workbench.core.train.checkpoints import run_to_merge
    from workbench.core.train.sharded_checkpoint import merge_checkpoint

    run_dir = pick_run(Path(args.output_dir).expanduser(), args.merge)
    checkpoint, destination = run_to_merge(run_dir, args.force)
    started = time.perf_counter()
    merge_checkpoint(checkpoint, destination)
    size = sum(f.stat().st_size for f in destination.iterdir() if f.is_file()) / 1e6
    print(
        f"merged {checkpoint.name} of {run_dir.name} into {destination} ({size:.1f} MB, "
        f"{time.perf_counter() - started:.1f} s)"
    )
    print(f"translate with it: workbench translate --model {destination}")
    return 0
