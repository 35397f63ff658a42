"""Reference recipe vs workbench recipe: training and evaluation throughput, one run.

Usage:
    python benchmarks/speed.py --quick     # CPU: ~9 minutes on 2 cores, 1 thread each
    python benchmarks/speed.py             # full mode, meant for a CUDA GPU
    python benchmarks/speed.py --smoke     # toy model, every phase once: the code paths

Both measuring modes write benchmarks/RESULTS.md (the committed one is a --quick run's)
unless ``--out`` names another file. ``--smoke`` writes into a temporary folder unless
``--out`` names a file outside benchmarks/, and skips the start-up section, which
``benchmarks/startup.py --smoke`` covers; the tests run both.

The method, and the modules that carry it out, are described in ``speed_bench``
(``benchmarks/speed_bench/__init__.py``). This file reads the flags; it is also what each
phase's fresh process runs (``--child``, not for users).
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:  # measure this checkout's workbench, not an installed one
    sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).parent))  # speed_bench and its sibling startup.py
from figures import report_path  # noqa: E402
from speed_bench import MODES, run_benchmark, run_phase, write_report  # noqa: E402


def main() -> int:
    """Run the benchmark (or, with --child, one phase of it) and print RESULTS.md."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--quick", action="store_true", help="CPU-sized run (about 9 minutes on 2 cores)"
    )
    parser.add_argument(
        "--smoke",
        action="store_true",
        help="toy model, every phase once (under a minute): checks the code paths; "
        "writes to a temporary folder unless --out says (never into benchmarks/)",
    )
    parser.add_argument(
        "--device", choices=("cuda", "cpu"), default=None, help="default: cuda when available"
    )
    parser.add_argument("--reps", type=int, default=None, help="repetitions per arm")
    parser.add_argument(
        "--threads",
        type=int,
        default=None,
        help="torch threads per process (quick: 1, full: torch's default)",
    )
    parser.add_argument("--out", default=None, help="default: benchmarks/RESULTS.md")
    parser.add_argument("--skip-startup", action="store_true", help="no start-up section")
    parser.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    parser.add_argument("--workdir", help=argparse.SUPPRESS)
    parser.add_argument("--result", help=argparse.SUPPRESS)
    args = parser.parse_args()

    if args.child:
        run_phase(args.child, Path(args.workdir), Path(args.result), args.threads)
        return 0

    import torch

    device = args.device or ("cuda" if torch.cuda.is_available() else "cpu")
    mode = MODES["smoke" if args.smoke else "quick" if args.quick else "full"]
    if args.reps:
        mode = replace(mode, reps=args.reps)
    if args.threads is not None:
        mode = replace(mode, threads=args.threads)
    out = report_path(args.out, Path(__file__).with_name("RESULTS.md"), args.smoke)
    with_startup = not (args.skip_startup or args.smoke)
    measurements = run_benchmark(mode, device, with_startup=with_startup)
    print(write_report(out, measurements))
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
