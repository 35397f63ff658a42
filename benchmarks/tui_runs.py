"""The TUI and the report under long runs: many runs, and runs that logged many steps.

Usage: python benchmarks/tui_runs.py [--runs 50] [--steps 1000000] [--long 300000]
       python benchmarks/tui_runs.py --smoke   # 3 runs of 2,000 steps: the code paths

A real finished run is trained first (the test suite's tiny demo model, two epochs), then
copied into two output folders whose ``metrics.jsonl`` are rewritten to hold many logged
training steps between the run's own evaluation events (:func:`inflate`):

- ``many``: ``--runs`` runs sharing ``--steps`` logged steps (50 × 20,000 = 1M);
- ``long``: one run of ``--long`` logged steps (300,000: a 69 MB ``metrics.jsonl``).

Measured on each, with the real ``workbench tui`` in a 100x30 pseudo-terminal:

- **list**: seconds from pressing ``7`` (the Runs pane), sent as soon as the first frame
  is painted, to the pane's line "N runs under …";
- **idle CPU**: the TUI's CPU seconds over ``IDLE_SECONDS`` while the Runs pane is shown
  and nothing changes, as a share of one core (from ``/proc/PID/stat``), once the app has
  settled (:func:`settle`: the shown run's log is read on a worker after the list).

And ``workbench report``: wall seconds and the process's peak RSS (:data:`MEASURE`), on the long
run and on the same run with its own short log, each drawing the heatmap the run kept when
it finished; and on the long run with ``--sentence`` naming a sentence no view was kept
for, which loads torch and the model to compute it (what a report on a sentence typed in
the console after training costs the first time).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import select
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from figures import figure, load_average, report_path
from startup import SIZE, cli_command, cpu_seconds
from tui_overhead import SMOKE_SETTINGS, demo_config

#: Seconds of idle TUI over which its CPU use is measured.
IDLE_SECONDS = 10.0
#: Seconds a probe waits for the screen before giving up (the figure prints as n/a).
TIMEOUT = 120.0


def source_run(root: Path) -> Path:
    """A real finished run of the tiny demo model, two epochs (seconds of training)."""
    from workbench.cli.headless import HeadlessPrinter
    from workbench.core.train.run_training import run_training

    with open(os.devnull, "w") as sink:
        result = run_training(demo_config(str(root), 2.0, SMOKE_SETTINGS), HeadlessPrinter(sink))
    return Path(result.summary.run_dir or next((root / "runs").iterdir()))


def inflate(run: Path, dest: Path, steps: int) -> None:
    """Copy ``run`` to ``dest`` with ``steps`` logged training steps in its metrics.jsonl,
    spread evenly over its epochs, its own evaluation and phase events kept in place."""
    shutil.copytree(run, dest)
    events = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]
    own_steps = [e for e in events if e["event"] == "TrainStep"]
    epochs = max(e["epoch"] for e in events if e["event"] == "EvalDone" and e["stage"] == "epoch")
    first = own_steps[0]
    start, end = first["time"], own_steps[-1]["time"]
    with (dest / "metrics.jsonl").open("w") as out:
        done = 0
        for event in events:
            if event["event"] == "TrainStep":
                continue  # replaced by the steps written below
            if event["event"] == "EvalDone" and event["stage"] == "epoch":
                upto = round(steps * event["epoch"] / epochs)
                for step in range(done + 1, upto + 1):
                    out.write(train_step(first, step, steps, epochs, start, end) + "\n")
                done = upto
                event = {**event, "step": done}
            out.write(json.dumps(event) + "\n")


def train_step(like: dict, step: int, steps: int, epochs: float, start: float, end: float) -> str:
    """One ``TrainStep`` line of a run of ``steps`` logged steps."""
    share = step / steps
    record = {
        **like,
        "time": round(start + share * (end - start), 3),
        "step": step,
        "max_steps": steps,
        "epoch": round(share * epochs, 4),
        "loss": 2.0 + 6.0 / (1.0 + 20.0 * share) + 0.05 * ((step * 7919) % 13) / 13,
        "eta_seconds": round((1 - share) * (end - start), 1),
    }
    return json.dumps(record)


class Terminal:
    """``workbench tui`` in a pseudo-terminal: what it has written, as text, and keys."""

    def __init__(self, output_dir: Path) -> None:
        import fcntl
        import struct
        import termios

        self.master, slave = os.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", SIZE[0], SIZE[1], 0, 0))
        command = [*cli_command(), "tui", "--preset", "demo", "--output-dir", str(output_dir)]
        self.proc = subprocess.Popen(
            command,
            stdin=slave,
            stdout=slave,
            stderr=slave,
            start_new_session=True,
            env=dict(os.environ, TERM="xterm-256color"),
        )
        os.close(slave)
        self.seen = b""

    def text(self) -> bytes:
        """Everything written so far without escape sequences."""
        return re.sub(rb"\x1b\[[0-9;?<>=$]*[A-Za-z]", b"", self.seen)

    def read(self, seconds: float) -> None:
        """Take in what the app writes for ``seconds``."""
        until = time.perf_counter() + seconds
        while (left := until - time.perf_counter()) > 0:
            ready, _, _ = select.select([self.master], [], [], min(left, 0.05))
            if ready:
                try:
                    self.seen += os.read(self.master, 1 << 16)
                except OSError:
                    return

    def wait_for(self, pattern: bytes, timeout: float = TIMEOUT) -> float | None:
        """Seconds until ``pattern`` is on the screen (written after now); None if never."""
        mark, started = len(self.seen), time.perf_counter()
        while time.perf_counter() - started < timeout and self.proc.poll() is None:
            self.read(0.05)
            if re.search(pattern, re.sub(rb"\x1b\[[0-9;?<>=$]*[A-Za-z]", b"", self.seen[mark:])):
                return time.perf_counter() - started
        return None

    def close(self) -> None:
        """q, then a kill after 5 s."""
        try:
            os.write(self.master, b"q")
            self.proc.wait(5)
        except (OSError, subprocess.TimeoutExpired):
            self.proc.kill()
            self.proc.wait()
        os.close(self.master)


def runs_pane(output_dir: Path, runs: int) -> dict[str, float | None]:
    """Seconds to list the runs after ``7``, and the idle TUI's share of a core."""
    term = Terminal(output_dir)
    try:
        first = term.wait_for(rb"Dataset")
        term.read(0.2)
        os.write(term.master, b"7")
        listed = term.wait_for(rf"{runs} runs? under".encode())
        settle(term)  # what follows is idleness, not the reading of the runs
        before = cpu_seconds(term.proc.pid)
        term.read(IDLE_SECONDS)
        after = cpu_seconds(term.proc.pid)
    finally:
        term.close()
    idle = (after - before) / IDLE_SECONDS if after is not None and before is not None else None
    return {"first_frame": first, "list": listed, "idle_core": idle}


def settle(term: Terminal, most: float = 30.0) -> None:
    """Wait until the app used under 5% of a core over a second (its worker has read the
    shown run's log), or ``most`` seconds."""
    until = time.perf_counter() + most
    while time.perf_counter() < until:
        before = cpu_seconds(term.proc.pid)
        term.read(1.0)
        after = cpu_seconds(term.proc.pid)
        if before is None or after is None or after - before < 0.05:
            return


#: A sentence the benchmark's runs kept no heatmap of.
NEW_SENTENCE = "The tea in this small shop is better than I remembered."


#: The measured command runs under this small process, which times it and reads its peak
#: RSS (``wait4``). A child's peak RSS starts from its parent's RSS at the fork (Linux
#: keeps the high-water mark across ``exec``), and the benchmark's own process holds torch
#: and a trained model: measured from there, every report "peaked" at about 550 MiB.
MEASURE = """
import json, os, subprocess, sys, time
started = time.perf_counter()
proc = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
error = proc.stderr.read().decode(errors="replace")  # to its end, so it never fills
_, status, usage = os.wait4(proc.pid, 0)
seconds = time.perf_counter() - started
code = os.waitstatus_to_exitcode(status)
print(json.dumps({"seconds": seconds, "peak_mib": usage.ru_maxrss / 1024, "code": code,
                  "error": error}))
"""


def report_cost(run: Path, *flags: str) -> dict[str, float | None]:
    """Wall seconds and peak RSS (MiB) of ``workbench report`` on ``run``."""
    out = subprocess.run(
        [sys.executable, "-c", MEASURE, *cli_command(), "report", str(run), *flags],
        capture_output=True,
        text=True,
    )
    if out.returncode:
        print(f"measuring the report failed: {out.stderr}")
        return {"seconds": None, "peak_mib": None}
    result = json.loads(out.stdout)
    if result["code"]:
        print(f"report failed on {run}: {result['error']}")
        return {"seconds": None, "peak_mib": None}
    return {"seconds": result["seconds"], "peak_mib": result["peak_mib"]}


def measure(root: Path, runs: int, steps: int, long: int) -> dict[str, dict[str, float | None]]:
    """Every figure of the report (see the module's docstring)."""
    source = source_run(root / "source")
    many, single = root / "many" / "runs", root / "long" / "runs"
    for i in range(runs):
        inflate(source, many / f"20260101-{i:06d}-demo", steps // runs)
    inflate(source, single / "20260101-000000-demo", long)
    print(f"built {runs} runs of {steps // runs:,} steps and one of {long:,}", flush=True)
    return {
        "many": runs_pane(root / "many", runs),
        "long": runs_pane(root / "long", 1),
        "report_long": report_cost(single / "20260101-000000-demo"),
        "report_short": report_cost(source),
        "report_new": report_cost(single / "20260101-000000-demo", "--sentence", NEW_SENTENCE),
    }


def report_lines(result: dict, runs: int, steps: int, long: int, loads: tuple[str, str]) -> list:
    """TUI_RUNS.md's lines; a figure not measured prints as "n/a"."""
    many, single = result["many"], result["long"]
    rl, rs, rn = result["report_long"], result["report_short"], result["report_new"]
    size = f"{runs} runs, {steps:,} logged steps in all"
    return [
        "# The TUI and the report under long runs",
        "",
        "| what | measured | target |",
        "| --- | --- | --- |",
        f"| Runs pane lists {size} (from the key `7`) | {figure(many['list'], '.2f', ' s')} "
        "| ≤ 2 s |",
        f"| idle TUI on the Runs pane, {size} | {pct(many['idle_core'])} of a core | ≤ 2% |",
        f"| Runs pane lists one run of {long:,} logged steps | "
        f"{figure(single['list'], '.2f', ' s')} | ≤ 2 s |",
        f"| idle TUI on the Runs pane, one run of {long:,} steps | {pct(single['idle_core'])} "
        "of a core | ≤ 2% |",
        f"| `workbench report` on the run of {long:,} steps | {figure(rl['seconds'], '.2f', ' s')}"
        f", {figure(rl['peak_mib'], ',.0f', ' MiB')} | ≤ 3 s, ≤ 300 MB |",
        f"| `workbench report` on the same run with its own short log | "
        f"{figure(rs['seconds'], '.2f', ' s')}, {figure(rs['peak_mib'], ',.0f', ' MiB')} | |",
        f"| `workbench report --sentence` on the run of {long:,} steps, a sentence whose "
        f"heatmap was not kept | {figure(rn['seconds'], '.2f', ' s')}, "
        f"{figure(rn['peak_mib'], ',.0f', ' MiB')} | (loads torch and the model) |",
        "",
        "The first two draw the heatmap the run kept when it finished "
        "(`attention_heatmaps.json`); the third computes one, as a report on a sentence "
        "typed in the console after training does the first time.",
        "",
        f"First frame: {figure(many['first_frame'], '.2f', ' s')} ({size}), "
        f"{figure(single['first_frame'], '.2f', ' s')} (one long run).",
        "",
        f"Machine: {platform.platform()}, {os.cpu_count()} CPUs, Python "
        f"{platform.python_version()}; load average before {loads[0]}, after {loads[1]}; "
        f"measured {time.strftime('%Y-%m-%d')}.",
    ]


def pct(share: float | None) -> str:
    """A share of a core as a percentage."""
    return figure(None if share is None else 100 * share, ".1f", "%")


def main() -> int:
    """Build the runs, measure, print the table and write it."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--steps", type=int, default=1_000_000, help="logged steps in all")
    parser.add_argument("--long", type=int, default=300_000, help="logged steps of one run")
    parser.add_argument("--out", default=None, help="default: benchmarks/TUI_RUNS.md")
    parser.add_argument(
        "--smoke",
        action="store_true",
        help="3 runs of 2,000 steps and one of 5,000, written to a temporary folder unless "
        "--out says (never into benchmarks/)",
    )
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    runs, steps, long = (3, 6000, 5000) if args.smoke else (args.runs, args.steps, args.long)
    before = load_average()
    with tempfile.TemporaryDirectory() as tmp:
        result = measure(Path(tmp), runs, steps, long)
    lines = report_lines(result, runs, steps, long, (before, load_average()))
    out = report_path(args.out, Path(__file__).with_name("TUI_RUNS.md"), args.smoke)
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines))
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
