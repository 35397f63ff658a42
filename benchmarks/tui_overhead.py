"""TUI vs headless: training throughput of the same run, and the TUI's time to first paint.

Usage: python benchmarks/tui_overhead.py [--epochs 3] [--repeats 2] [--out benchmarks/TUI.md]

Both arms run the demo preset with the same settings and seed; arms are interleaved
(headless, tui, headless, tui, ...) so machine load affects both alike. Throughput is
optimizer steps per second of training wall time as the core measures it
(``summary.json: train_seconds``), so data loading and before/after evaluation are
excluded from both. The TUI arm is the real app driven headlessly by Textual's
``run_test`` (same widgets, charts and log updates; rendering goes to a virtual terminal).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")


def demo_config(output_dir: str, epochs: float):
    from workbench.core.config.build import build_config

    return build_config("demo", overrides={"epochs": epochs, "output_dir": output_dir})


def run_headless(epochs: float) -> dict:
    from workbench.cli.headless import HeadlessPrinter
    from workbench.core.train.run_training import run_training

    with tempfile.TemporaryDirectory() as tmp, open(os.devnull, "w") as sink:
        result = run_training(demo_config(tmp, epochs), HeadlessPrinter(sink))
        return result.summary.to_dict()


def run_tui(epochs: float) -> dict:
    from workbench.tui.app import WorkbenchApp
    from workbench.tui.widgets.training_pane import TrainingPane

    async def drive(tmp: str) -> None:
        app = WorkbenchApp(demo_config(tmp, epochs))
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.pause(0.5)
            await pilot.press("f2")
            await pilot.pause(0.3)
            await pilot.press("s")
            pane = app.query_one(TrainingPane)
            # A plain sleep, not pilot.pause(): pause() forces a full repaint each call,
            # load a real terminal session does not have.
            while pane.running:
                await asyncio.sleep(0.5)

    with tempfile.TemporaryDirectory() as tmp:
        asyncio.run(drive(tmp))
        run = next((Path(tmp) / "runs").iterdir())
        return json.loads((run / "summary.json").read_text())


def first_paint(repeats: int) -> tuple[list[float], bool]:
    """Seconds from spawn to the first frame of ``workbench tui`` in a real pseudo-terminal.

    Measured as benchmarks/startup.py does (an earlier version timed Textual's
    ``run_test`` and ``pilot.pause()``, which waits for the app to settle, not for the
    first frame: 1.89 s for what a terminal shows in about 1 s).
    """
    sys.path.insert(0, str(Path(__file__).parent))
    import startup

    with tempfile.TemporaryDirectory() as tmp:
        startup.tui_paint(tmp)  # warm the file cache
        times = [t for t, *_ in (startup.tui_paint(tmp) for _ in range(repeats)) if t]
        heavy = startup.imported_by_first_frame(tmp)
    return times, "torch" in heavy


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=float, default=3.0)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--out", default="benchmarks/TUI.md")
    args = parser.parse_args()

    rates: dict[str, list[float]] = {"headless": [], "tui": []}
    for _ in range(args.repeats):
        for arm, fn in (("headless", run_headless), ("tui", run_tui)):
            summary = fn(args.epochs)
            rate = summary["global_step"] / summary["train_seconds"]
            rates[arm].append(rate)
            print(
                f"{arm}: {summary['global_step']} steps in {summary['train_seconds']} s "
                f"= {rate:.3f} steps/s",
                flush=True,
            )
    paints, torch_loaded = first_paint(5)
    med = {arm: statistics.median(v) for arm, v in rates.items()}
    ratio = med["tui"] / med["headless"]
    lines = [
        "# TUI overhead",
        "",
        f"Command: `python benchmarks/tui_overhead.py --epochs {args.epochs:g} "
        f"--repeats {args.repeats}`",
        f"Machine: {platform.platform()}, {os.cpu_count()} CPUs, Python "
        f"{platform.python_version()}; measured {time.strftime('%Y-%m-%d')}.",
        "",
        "| arm | steps/s per repetition | median |",
        "| --- | --- | --- |",
        *(
            f"| {arm} | {', '.join(f'{r:.3f}' for r in v)} | {med[arm]:.3f} |"
            for arm, v in rates.items()
        ),
        "",
        f"**TUI / headless training throughput: {ratio:.3f}** (demo preset, "
        f"{args.epochs:g} epochs, arms interleaved).",
        "",
        f"Time to the first frame of `workbench tui` in a 100x30 pseudo-terminal "
        f"(benchmarks/startup.py, 5 runs): median "
        f"{statistics.median(paints):.2f} s (min {min(paints):.2f}, max {max(paints):.2f}); "
        f"torch imported before first paint: {torch_loaded}.",
        "",
    ]
    Path(args.out).write_text("\n".join(lines), encoding="utf-8")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
