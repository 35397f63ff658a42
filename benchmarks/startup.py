"""Start-up times a user feels: ``workbench --help`` and the TUI's first screen.

Usage: python benchmarks/startup.py [--repeats 10] [--out benchmarks/STARTUP.md]

* ``workbench --help``: wall time of a fresh ``python -m workbench --help`` (median of
  ``--repeats`` runs), and whether torch (or transformers, datasets, textual) was imported,
  read from ``python -X importtime``.
* ``workbench tui --preset demo``: the real command in a 100x30 pseudo-terminal. The
  clock starts before the process is spawned and stops when the first frame holding the
  tab bar ("Dataset" … "Attention") and the Dataset pane ("split" column) has been
  written to the terminal; the times to the footer's key list ("Quit") and to the loaded
  data ("train /") follow, and the CPU seconds the process had used by the first frame
  (steadier than wall time when other work shares the CPUs). One more run under
  ``-X importtime`` lists the heavy packages imported by the first frame. Nothing goes
  through Textual's test pilot, whose settling waits are not what a terminal sees.
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HEAVY = ("torch", "transformers", "datasets", "textual", "ctranslate2", "tensorboard")
SIZE = (30, 100)  # rows, columns


def load_average() -> str:
    """The 1/5/15-minute load average: how busy the shared machine was."""
    return " ".join(f"{x:.2f}" for x in os.getloadavg()) if hasattr(os, "getloadavg") else "n/a"


def cli_command() -> list[str]:
    return [sys.executable, "-m", "workbench"]


def help_times(repeats: int) -> list[float]:
    """Wall seconds of ``workbench --help`` in fresh interpreters."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        subprocess.run([*cli_command(), "--help"], check=True, capture_output=True)
        times.append(time.perf_counter() - start)
    return times


def help_imports() -> list[str]:
    """The heavy packages ``workbench --help`` imports (should be none)."""
    out = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "workbench", "--help"],
        check=True,
        capture_output=True,
        text=True,
    )
    names = {line.split("|")[-1].strip() for line in out.stderr.splitlines() if "|" in line}
    return sorted(h for h in HEAVY if h in names)


def tui_paint(
    output_dir: str, timeout: float = 20.0, import_log: str | None = None
) -> tuple[float | None, ...]:
    """Seconds from spawn to the first screen, to the footer's keys, and to the data.

    With ``import_log``, the app runs under ``python -X importtime`` with its stderr in
    that file, and the modules imported by the first frame are listed in ``<log>.first``.
    """
    import fcntl
    import select
    import struct
    import termios

    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", SIZE[0], SIZE[1], 0, 0))
    env = dict(os.environ, TERM="xterm-256color")
    started = time.perf_counter()
    command = [*cli_command(), "tui", "--preset", "demo", "--output-dir", output_dir]
    stderr: Any = slave
    if import_log:
        command.insert(1, "-X")
        command.insert(2, "importtime")
        stderr = open(import_log, "w")  # noqa: SIM115 - closed below
    proc = subprocess.Popen(
        command, stdin=slave, stdout=slave, stderr=stderr, start_new_session=True, env=env
    )
    os.close(slave)
    seen = b""
    first = footer = data = first_cpu = None
    try:
        while time.perf_counter() - started < timeout and None in (first, footer, data):
            ready, _, _ = select.select([master], [], [], 0.02)
            if not ready:
                if proc.poll() is not None:
                    break
                continue
            try:
                chunk = os.read(master, 1 << 16)
            except OSError:
                break
            seen += chunk
            # Text only: escape sequences split words across cursor moves otherwise.
            text = re.sub(rb"\x1b\[[0-9;?<>=$]*[A-Za-z]", b"", seen)
            now = time.perf_counter() - started
            if first is None and all(w in text for w in (b"Dataset", b"Attention", b"split")):
                first = now
                first_cpu = cpu_seconds(proc.pid)
                if import_log:
                    Path(f"{import_log}.first").write_text(Path(import_log).read_text())
            if footer is None and b"Quit" in text:
                footer = now
            if data is None and b"train /" in text:
                data = now
    finally:
        try:
            os.write(master, b"q")
            proc.wait(10)
        except (OSError, subprocess.TimeoutExpired):
            proc.kill()
            proc.wait()
        os.close(master)
        if import_log:
            stderr.close()
    return first, footer, data, first_cpu


def imported_by_first_frame(output_dir: str) -> list[str]:
    """Heavy packages already imported when the TUI's first frame was written."""
    with tempfile.TemporaryDirectory() as tmp:
        log = str(Path(tmp) / "imports.log")
        tui_paint(output_dir, import_log=log)
        text = Path(f"{log}.first").read_text() if Path(f"{log}.first").exists() else ""
    names = {line.split("|")[-1].strip() for line in text.splitlines() if "|" in line}
    return sorted(h for h in HEAVY if h in names and h != "textual")


def cpu_seconds(pid: int) -> float | None:
    """CPU time (user + system, all threads) a process has used so far, from /proc.

    Less sensitive than wall time to other work sharing the CPUs.
    """
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def measure(repeats: int) -> dict:
    """All start-up numbers as one dict (also used by benchmarks/speed.py)."""
    helps = help_times(repeats)
    runs = []
    with tempfile.TemporaryDirectory() as tmp:
        tui_paint(tmp)  # warm the file cache once, like any second start
        for _ in range(max(3, repeats // 2)):
            runs.append(tui_paint(tmp))
        heavy_at_paint = imported_by_first_frame(tmp)

    def median(index: int) -> float | None:
        values = [r[index] for r in runs if r[index] is not None]
        return statistics.median(values) if values else None

    return {
        "help_median": statistics.median(helps),
        "help_min": min(helps),
        "help_max": max(helps),
        "help_runs": len(helps),
        "help_heavy_imports": help_imports(),
        "paint_all": [r[0] for r in runs if r[0] is not None],
        "paint_median": median(0),
        "footer_median": median(1),
        "data_median": median(2),
        "paint_cpu_median": median(3),
        "paint_heavy_imports": heavy_at_paint,
    }


def report_lines(result: dict) -> list[str]:
    """Markdown table rows for RESULTS.md and TUI.md."""
    heavy = ", ".join(result["help_heavy_imports"]) or "none"
    at_paint = ", ".join(result["paint_heavy_imports"]) or "none of " + ", ".join(
        h for h in HEAVY if h != "textual"
    )
    paints = ", ".join(f"{p:.2f}" for p in result["paint_all"])
    return [
        f"| `workbench --help` (fresh interpreter, {result['help_runs']} runs) | "
        f"{result['help_median']:.3f} s (min {result['help_min']:.3f}, max "
        f"{result['help_max']:.3f}) | ≤ 0.3 s | imports {heavy} of "
        f"{', '.join(HEAVY)} |",
        f"| `workbench tui` first screen (pty {SIZE[1]}×{SIZE[0]}, "
        f"{len(result['paint_all'])} runs) | {result['paint_median']:.2f} s (runs: {paints}; "
        f"{result['paint_cpu_median']:.2f} s of CPU) | ≤ 1.5 s | imported by then: "
        f"{at_paint}; footer keys at {result['footer_median']:.2f} s, data at "
        f"{result['data_median']:.2f} s |",
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--out", default=None, help="also write the table to this file")
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    load_before = load_average()
    result = measure(args.repeats)
    load_after = load_average()
    lines = [
        "| what | median | target | note |",
        "| --- | --- | --- | --- |",
        *report_lines(result),
        "",
        f"Machine: {platform.platform()}, {os.cpu_count()} CPUs, Python "
        f"{platform.python_version()}; load average before {load_before}, after "
        f"{load_after}; measured {time.strftime('%Y-%m-%d')}.",
    ]
    print("\n".join(lines))
    if args.out:
        Path(args.out).write_text("\n".join(lines) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
