"""TUI vs headless: training throughput of the same run, and the TUI's time to first paint.

Usage: python benchmarks/tui_overhead.py [--epochs 3] [--repeats 2] [--out benchmarks/TUI.md]
       python benchmarks/tui_overhead.py --smoke   # a tiny model, once: the code paths

Both arms run the demo preset with the same settings and seed; arms are interleaved
(headless, tui, headless, tui, ...) so machine load affects both alike. Throughput is
optimizer steps per second of training wall time as the core measures it
(``summary.json: train_seconds``), so data loading and before/after evaluation are
excluded from both. The TUI arm is the real app driven headlessly by Textual's
``run_test`` (same widgets, charts and log updates; rendering goes to a virtual terminal).

``--smoke`` trains a 1-layer, 32-wide model on 180 pairs for one epoch in each arm and
paints the first screen once, and writes its report to a temporary folder: the test
suite runs it so that a change that breaks the benchmark shows in CI.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from figures import (
    figure,
    load_average,
    median,
    noise_summary,
    noise_warning,
    ratio,
    report_path,
    spread,
    spread_text,
)

if TYPE_CHECKING:
    from workbench.core.config.run_config import RunConfig

os.environ.setdefault("HF_HUB_OFFLINE", "1")

#: The smoke run's demo: the test suite's tiny model and sample (tests/conftest.py).
SMOKE_SETTINGS = {
    "samples": 180,
    "batch_size": 16,
    "scratch_d_model": 32,
    "scratch_layers": 1,
    "scratch_heads": 2,
    "scratch_ffn_dim": 64,
    "scratch_source_vocab": 400,
    "scratch_target_vocab": 2000,
    "max_new_tokens": 16,
    "num_beams": 1,
}


def demo_config(
    output_dir: str, epochs: float, settings: dict[str, Any] | None = None
) -> RunConfig:
    """The demo preset with the benchmark's epochs and output folder, as both arms run it."""
    from workbench.core.config.build import build_config

    overrides = {**(settings or {}), "epochs": epochs, "output_dir": output_dir}
    return build_config("demo", overrides=overrides)


def run_headless(epochs: float, settings: dict[str, Any] | None = None) -> dict:
    """The headless arm: the run as ``workbench train`` prints it (to /dev/null); its summary."""
    from workbench.cli.headless import HeadlessPrinter
    from workbench.core.train.run_training import run_training

    with tempfile.TemporaryDirectory() as tmp, open(os.devnull, "w") as sink:
        result = run_training(demo_config(tmp, epochs, settings), HeadlessPrinter(sink))
        return result.summary.to_dict()


def run_tui(epochs: float, settings: dict[str, Any] | None = None) -> dict:
    """The TUI arm: the same run started with ``s`` in the real app under ``run_test``."""
    from workbench.tui.app import WorkbenchApp
    from workbench.tui.widgets.training_pane import TrainingPane

    async def drive(tmp: str) -> None:
        app = WorkbenchApp(demo_config(tmp, epochs, settings))
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.pause(0.5)
            await pilot.press("f2")
            await pilot.pause(0.3)
            await pilot.press("s")
            pane = app.query_one(TrainingPane)
            # A plain sleep, not pilot.pause(): pause() forces a full repaint each call,
            # load a real terminal session does not have.
            while pane.watcher.running:
                await asyncio.sleep(0.5)

    with tempfile.TemporaryDirectory() as tmp:
        asyncio.run(drive(tmp))
        run = next((Path(tmp) / "runs").iterdir())
        return json.loads((run / "summary.json").read_text())


def first_paint(repeats: int, warm_up: bool = True) -> tuple[list[float], bool | None]:
    """Seconds from spawn to the first frame of ``workbench tui`` in a real pseudo-terminal,
    and whether torch was imported by then (``None``: no first frame was seen).

    Measured as benchmarks/startup.py does, from the bytes the terminal receives: Textual's
    ``run_test`` and ``pilot.pause()`` wait for the app to settle, not for the first frame
    (1.89 s for what a terminal shows in about 1 s).
    """
    sys.path.insert(0, str(Path(__file__).parent))
    import startup

    with tempfile.TemporaryDirectory() as tmp:
        if warm_up:
            startup.tui_paint(tmp)  # warm the file cache
        times = [t for t, *_ in (startup.tui_paint(tmp) for _ in range(repeats)) if t]
        heavy = startup.imported_by_first_frame(tmp)
    return times, None if heavy is None else "torch" in heavy


def steps_per_second(summary: dict[str, Any]) -> float | None:
    """Optimizer steps per second of training wall time; ``None`` if either is missing."""
    return ratio(summary.get("global_step"), summary.get("train_seconds"))


def report_lines(
    command: str,
    epochs: float,
    rates: dict[str, list[float | None]],
    paints: list[float],
    torch_loaded: bool | None,
    load: tuple[str, str],
) -> list[str]:
    """TUI.md's lines; a figure not measured prints as "n/a", a noisy one says so.

    ``load``: the load average before and after the run.
    """
    med = {arm: median(v) for arm, v in rates.items()}
    spreads = {arm: spread(v) for arm, v in rates.items()}
    paint = {"": spread(paints)}

    def flagged(text: str, warning: str) -> str:
        return f"{text}: **{warning}**" if warning else text

    tui_over_headless = figure(ratio(med.get("tui"), med.get("headless")), ".3f")
    throughput = f"TUI / headless training throughput: {tui_over_headless}"
    warning = noise_warning(spreads)
    return [
        "# TUI overhead",
        "",
        f"Command: `{command}`",
        f"Machine: {platform.platform()}, {os.cpu_count()} CPUs, Python "
        f"{platform.python_version()}; load average (1/5/15 min) before {load[0]}, after "
        f"{load[1]}; measured {time.strftime('%Y-%m-%d')}.",
        "",
        noise_summary({"training steps/s": spreads, "first frame": paint}),
        "",
        "| arm | steps/s per repetition | median | spread (largest / smallest − 1) |",
        "| --- | --- | --- | --- |",
        *(
            f"| {arm} | {', '.join(figure(r, '.3f') for r in v)} | {figure(med[arm], '.3f')} "
            f"| {flagged(spread_text(spreads[arm], '.3f'), noise_warning({arm: spreads[arm]}))} |"
            for arm, v in rates.items()
        ),
        "",
        (f"{throughput}, {warning}" if warning else f"**{throughput}**")
        + f" (demo preset, {epochs:g} epochs, arms interleaved).",
        "",
        f"Time to the first frame of `workbench tui` in a 100x30 pseudo-terminal "
        f"(benchmarks/startup.py, {len(paints)} runs): median "
        f"{figure(median(paints), '.2f', ' s')} ({'spread ' if paint[''].count > 1 else ''}"
        + flagged(spread_text(paint[""], ".2f", " s"), noise_warning(paint))
        + f"); torch imported before first paint: {figure(torch_loaded)}.",
        "",
    ]


def main() -> int:
    """Interleave the two arms ``--repeats`` times, time the first paint, write TUI.md."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=float, default=3.0)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--out", default=None, help="default: benchmarks/TUI.md")
    parser.add_argument(
        "--smoke",
        action="store_true",
        help="a tiny model for one epoch, one repetition, one paint; written to a "
        "temporary folder unless --out says (never into benchmarks/)",
    )
    args = parser.parse_args()
    out = report_path(args.out, Path(__file__).with_name("TUI.md"), args.smoke)
    settings = SMOKE_SETTINGS if args.smoke else None
    epochs, repeats = (1.0, 1) if args.smoke else (args.epochs, args.repeats)

    load_before = load_average()
    rates: dict[str, list[float | None]] = {"headless": [], "tui": []}
    for _ in range(repeats):
        for arm, fn in (("headless", run_headless), ("tui", run_tui)):
            summary = fn(epochs, settings)
            rate = steps_per_second(summary)
            rates[arm].append(rate)
            print(
                f"{arm}: {summary.get('global_step')} steps in {summary.get('train_seconds')} s "
                f"= {figure(rate, '.3f')} steps/s",
                flush=True,
            )
    paints, torch_loaded = first_paint(1, warm_up=False) if args.smoke else first_paint(5)
    command = (
        "python benchmarks/tui_overhead.py --smoke"
        if args.smoke
        else f"python benchmarks/tui_overhead.py --epochs {epochs:g} --repeats {repeats}"
    )
    load = (load_before, load_average())
    lines = report_lines(command, epochs, rates, paints, torch_loaded, load)
    out.write_text("\n".join(lines), encoding="utf-8")
    print("\n".join(lines))
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
