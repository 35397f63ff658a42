"""Start-up times a user feels: ``workbench --help`` and the TUI's first screen.

Usage: python benchmarks/startup.py [--repeats 10] [--out benchmarks/STARTUP.md]

* ``workbench --help``: wall time of a fresh ``python -m workbench --help`` (median of
  ``--repeats`` runs), and whether torch (or transformers, datasets, textual) was imported,
  read from ``python -X importtime``.
* ``workbench tui``: the real command in a pseudo-terminal of 100x30. The clock starts
  before the process is spawned and stops when the first frame that holds the tab bar
  ("Dataset" … "Attention") *and* the footer's key list ("Quit") has been written to the
  terminal, i.e. the first screen a user can act on. The time until the dataset summary
  ("train /") is painted is reported as well. Nothing is driven through Textual's test
  pilot, whose settling waits are not what a terminal sees.
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

HEAVY = ("torch", "transformers", "datasets", "textual", "ctranslate2", "tensorboard")
SIZE = (30, 100)  # rows, columns


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
    out = subprocess.run([sys.executable, "-X", "importtime", "-m", "workbench", "--help"],
                         check=True, capture_output=True, text=True)
    names = {line.split("|")[-1].strip() for line in out.stderr.splitlines() if "|" in line}
    return sorted(h for h in HEAVY if h in names)


def tui_paint(output_dir: str, timeout: float = 20.0) -> tuple[float | None, ...]:
    """Seconds from spawn to the first screen, to the footer's keys, and to the data."""
    import fcntl
    import select
    import struct
    import termios

    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", SIZE[0], SIZE[1], 0, 0))
    env = dict(os.environ, TERM="xterm-256color")
    started = time.perf_counter()
    proc = subprocess.Popen(
        [*cli_command(), "tui", "--preset", "demo", "--output-dir", output_dir],
        stdin=slave, stdout=slave, stderr=slave, start_new_session=True, env=env,
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
    return first, footer, data, first_cpu


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
    paints, datas = [], []
    with tempfile.TemporaryDirectory() as tmp:
        tui_paint(tmp)  # warm the file cache once, like any second start
        for _ in range(max(3, repeats // 2)):
            first, _footer, data, _cpu = tui_paint(tmp)
            if first is not None:
                paints.append(first)
            if data is not None:
                datas.append(data)
    return {
        "help_median": statistics.median(helps),
        "help_min": min(helps),
        "help_max": max(helps),
        "help_runs": len(helps),
        "help_heavy_imports": help_imports(),
        "paint_median": statistics.median(paints) if paints else None,
        "paint_all": paints,
        "data_median": statistics.median(datas) if datas else None,
    }


def report_lines(result: dict) -> list[str]:
    """Markdown lines for RESULTS.md / STARTUP.md."""
    heavy = ", ".join(result["help_heavy_imports"]) or "none"
    paints = ", ".join(f"{p:.2f}" for p in result["paint_all"])
    return [
        f"| `workbench --help` (fresh interpreter, {result['help_runs']} runs) | "
        f"{result['help_median']:.3f} s (min {result['help_min']:.3f}, max "
        f"{result['help_max']:.3f}) | ≤ 0.3 s | heavy imports: {heavy} |",
        f"| `workbench tui` first actionable frame (pty 100x30) | "
        f"{result['paint_median']:.2f} s (runs: {paints}) | ≤ 1.5 s | "
        f"data summary painted at {result['data_median']:.2f} s |",
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--out", default=None, help="also write the table to this file")
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    load_before = Path("/proc/loadavg").read_text().split()[:3] if Path(
        "/proc/loadavg").exists() else ["?"]
    result = measure(args.repeats)
    load_after = Path("/proc/loadavg").read_text().split()[:3] if Path(
        "/proc/loadavg").exists() else ["?"]
    lines = [
        "| what | median | target | note |",
        "| --- | --- | --- | --- |",
        *report_lines(result),
        "",
        f"Machine: {platform.platform()}, {os.cpu_count()} CPUs, Python "
        f"{platform.python_version()}; load average before {' '.join(load_before)}, after "
        f"{' '.join(load_after)}; measured {time.strftime('%Y-%m-%d')}.",
    ]
    print("\n".join(lines))
    if args.out:
        Path(args.out).write_text("\n".join(lines) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
