"""What each measure the libraries offer does to the workbench's training step.

Usage: python benchmarks/step_measures.py [--reps 2] [--steps 4] [--out benchmarks/STEP_MEASURES.md]
       python benchmarks/step_measures.py --smoke   # the toy model, one repetition

The speed benchmark's quick mode (opus-mt-en-zh's shape, its two timed batches, one
torch thread) is prepared once (as shipped, AdamW is the Trainer's default,
``adamw_torch_fused``); then each measure of ``speed_bench.profile.MEASURES``
runs ``--steps`` timed steps of the workbench arm in a fresh process, measures in turn,
the order reversed every other repetition so load falls on all alike. A measure is kept
in the workbench only where its step is faster beyond the repetitions' spread and its
losses stay at float rounding of the step as shipped.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:  # measure this checkout's workbench, not an installed one
    sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).parent))
from figures import (  # noqa: E402
    Spread,
    figure,
    load_average,
    noise_warning,
    ratio,
    report_path,
    spread,
    spread_text,
)
from speed_bench import MEASURES, MODES, machine, prepare_workdir, profile_lines  # noqa: E402
from speed_bench.orchestration import run_child  # noqa: E402

SHIPPED = MEASURES[0]


def step_seconds(found: dict[str, Any]) -> float:
    """A repetition's step: the median of its timed steps."""
    return statistics.median(found["parts"]["step"])


def flagged(found: Spread) -> str:
    """The spread of a measure's repetitions, and the flag when they differ by over 25%."""
    warning = noise_warning({"": found})
    return f"{spread_text(found, '.2f')}: **{warning}**" if warning else spread_text(found, ".2f")


def measure_lines(results: dict[str, list[dict[str, Any]]]) -> list[str]:
    """One row per measure: its step against the step as shipped, and its losses."""
    if not results.get(SHIPPED):
        return ["The step as shipped did not run, so no measure can be compared with it."]
    base = statistics.median(step_seconds(r) for r in results[SHIPPED])
    base_losses = results[SHIPPED][0]["losses"]
    lines = [
        "| measure | seconds a step (per repetition) | spread | × as shipped | optimizer s "
        "| first step s | largest loss difference |",
        "| --- | --- | --- | ---: | ---: | ---: | ---: |",
    ]
    for measure, runs in results.items():
        steps = [step_seconds(r) for r in runs]
        optimizer = statistics.median(statistics.median(r["parts"]["optimizer"]) for r in runs)
        first = statistics.median(r["first_step"] for r in runs)
        diff = max(abs(a - b) for a, b in zip(runs[0]["losses"], base_losses, strict=True))
        lines.append(
            f"| {measure} | {', '.join(f'{s:.2f}' for s in steps)} | "
            f"{flagged(spread(steps))} | "
            f"{figure(ratio(base, statistics.median(steps)), '.2f')}× | {optimizer:.3f} | "
            f"{first:.2f} | {diff:.1e} |"
        )
    return lines


def main() -> int:
    """Prepare the quick mode's work folder, time each measure, write the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=2)
    parser.add_argument("--steps", type=int, default=4)
    parser.add_argument("--out", default=None, help="default: benchmarks/STEP_MEASURES.md")
    parser.add_argument("--smoke", action="store_true", help="toy model, one repetition")
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    mode = MODES["smoke" if args.smoke else "quick"]
    reps, steps = (1, 2) if args.smoke else (args.reps, args.steps)
    measures = [m for m in MEASURES if not (args.smoke and m == "torch.compile")]
    load_before, started = load_average(), time.perf_counter()
    results: dict[str, list[dict[str, Any]]] = {m: [] for m in measures}
    failures: dict[str, str] = {}
    with tempfile.TemporaryDirectory(prefix="wb-measures-") as tmp:
        workdir = Path(tmp)
        prepare_workdir(workdir, mode, "cpu", shape=mode.shape)
        for rep in range(reps):
            for measure in measures if rep % 2 == 0 else measures[::-1]:
                child = ["profile", measure, str(steps), "cpu"]
                try:
                    found = run_child(child, workdir, mode.threads)
                except SystemExit as failed:  # the measure does not run here: said, not fatal
                    failures[measure] = str(failed).strip().splitlines()[-1]
                    print(f"rep {rep + 1} {measure}: failed: {failures[measure]}", flush=True)
                    continue
                results[measure].append(found)
                print(f"rep {rep + 1} {measure}: {step_seconds(found):.3f} s a step", flush=True)
    found_on = machine()
    lines = [
        "# What each measure does to the workbench's training step",
        "",
        f"Command: `python benchmarks/step_measures.py{' --smoke' if args.smoke else ''}` "
        f"({(time.perf_counter() - started) / 60:.1f} min), measured {time.strftime('%Y-%m-%d')}. "
        f"{found_on['cpu']}, {found_on['cores']} cores, torch {found_on['torch']}, "
        f"transformers {found_on['transformers']}; torch threads per process: {mode.threads} "
        f"(the quick mode's). Load average before {load_before}, after {load_average()}.",
        "",
        f"Model: {'the toy model' if args.smoke else 'opus-mt-en-zh’s shape'} and the speed "
        f"benchmark's {mode.name} training batches; {steps} timed steps per repetition after "
        "one untimed (the first step, which pays set-up and compiling, is its own column). "
        "The loss difference is the largest over the steps against the step as shipped.",
        "",
        *measure_lines({m: runs for m, runs in results.items() if runs}),
        *(f"- {measure} failed here: `{why}`" for measure, why in failures.items()),
        "",
        "## The step as shipped",
        "",
        *(profile_lines(results[SHIPPED][0]) if results.get(SHIPPED) else []),
    ]
    out = report_path(args.out, Path(__file__).with_name("STEP_MEASURES.md"), args.smoke)
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines))
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
