"""Start-up times a user feels: ``workbench --help`` and the TUI's first screen.

Usage: python benchmarks/startup.py [--repeats 10] [--out benchmarks/STARTUP.md]
       python benchmarks/startup.py --smoke   # one run of each: the code paths, seconds

* ``workbench --help``: wall time of a fresh ``python -m workbench --help`` (median of
  ``--repeats`` runs), and whether torch (or transformers, datasets, textual) was imported,
  read from ``python -X importtime``.
* ``workbench tui --preset demo``: the real command in a 100x30 pseudo-terminal. The
  clock starts before the process is spawned and stops when the first frame holding the
  tab bar ("Dataset" … "Attention") and the Dataset pane ("split" column) has been
  written to the terminal; the times to the footer's key list (``FOOTER_KEY``) and to
  the loaded data ("train /") follow, and the CPU seconds the process had used by the
  first frame (steadier than wall time when other work shares the CPUs). One more run,
  logging its imports (``IMPORT_LOGGER``), lists the heavy packages imported by the first
  frame. Nothing goes through Textual's test pilot, whose settling waits are not what a
  terminal sees.

A figure a probe did not find prints as "n/a" (``figures.figure``); the smoke test
(tests/meta/test_benchmark_smoke.py) fails when one goes missing, so a probe that stops
matching the screen shows in CI, not after a ten-minute benchmark.
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from figures import NA, figure, load_average, median, report_path

HEAVY = ("torch", "transformers", "datasets", "textual", "ctranslate2", "tensorboard")
SIZE = (30, 100)  # rows, columns
#: A word of the footer's key list that every pane shows at every width: F6's label. Not
#: "Quit": q is in the command palette, not the footer, which keeps the footer within 80
#: columns (workbench/tui/app.py).
FOOTER_KEY = b"Screenshot"


def cli_command() -> list[str]:
    """The CLI as a user starts it, in this interpreter (so in this venv)."""
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


#: ``python -c`` this, then the log file, then workbench's arguments: ``python -m
#: workbench`` with an audit hook that writes each module's name to the log as it is
#: imported. Not ``-X importtime``, which writes to stderr: Textual draws the screen on
#: stderr, so with stderr in a log file the terminal stayed blank, the probe waited out its
#: timeout, and "imported by the first frame" read an empty log as "none".
IMPORT_LOGGER = """
import runpy, sys
log = open(sys.argv.pop(1), "w", buffering=1)
sys.addaudithook(lambda event, args: event == "import" and log.write(args[0] + "\\n"))
sys.argv[0] = "workbench"
runpy.run_module("workbench", run_name="__main__", alter_sys=True)
"""


def tui_paint(
    output_dir: str, timeout: float = 20.0, import_log: str | None = None
) -> tuple[float | None, ...]:
    """Seconds from spawn to the first screen, to the footer's keys, and to the data.

    With ``import_log``, the app logs the modules it imports to that file
    (``IMPORT_LOGGER``), and those imported by the first frame are copied to
    ``<log>.first``.
    """
    import fcntl
    import select
    import struct
    import termios

    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", SIZE[0], SIZE[1], 0, 0))
    env = dict(os.environ, TERM="xterm-256color")
    started = time.perf_counter()
    arguments = ["tui", "--preset", "demo", "--output-dir", output_dir]
    if import_log:
        command = [sys.executable, "-c", IMPORT_LOGGER, import_log, *arguments]
    else:
        command = [*cli_command(), *arguments]
    proc = subprocess.Popen(
        command, stdin=slave, stdout=slave, stderr=slave, start_new_session=True, env=env
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
            if footer is None and FOOTER_KEY in text:
                footer = now
            if data is None and b"train /" in text:
                data = now
    finally:
        # The figures are taken: q, then a kill after 2 s. A q sent this soon after the
        # start is at times not acted on (under load: 1 run in 3), and waiting 10 s for it
        # added 10 s to the run and left an app on the CPUs the next run measures.
        try:
            os.write(master, b"q")
            proc.wait(2)
        except (OSError, subprocess.TimeoutExpired):
            proc.kill()
            proc.wait()
        os.close(master)
    return first, footer, data, first_cpu


def imported_by_first_frame(output_dir: str) -> list[str] | None:
    """Heavy packages already imported when the TUI's first frame was written; ``None``
    when no first frame was seen (nothing measured, which is not "none imported")."""
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "imports.log"
        tui_paint(output_dir, import_log=str(log))
        first = log.with_name(log.name + ".first")
        if not first.exists():
            return None
        names = {line.split(".")[0] for line in first.read_text().splitlines()}
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


def measure(repeats: int, paints: int | None = None, warm_up: bool = True) -> dict:
    """All start-up numbers as one dict (also used by benchmarks/speed.py).

    ``repeats`` runs of ``--help``, ``paints`` of the TUI (default: half as many, at
    least 3), after one that warms the file cache unless ``warm_up`` is False.
    """
    helps = help_times(repeats)
    runs = []
    with tempfile.TemporaryDirectory() as tmp:
        if warm_up:
            tui_paint(tmp)  # warm the file cache once, like any second start
        for _ in range(max(3, repeats // 2) if paints is None else paints):
            runs.append(tui_paint(tmp))
        heavy_at_paint = imported_by_first_frame(tmp)
    return {
        "help_median": median(helps),
        "help_min": min(helps, default=None),
        "help_max": max(helps, default=None),
        "help_runs": len(helps),
        "help_heavy_imports": help_imports(),
        "paint_all": [r[0] for r in runs if r[0] is not None],
        "paint_runs": len(runs),
        "paint_median": median(r[0] for r in runs),
        "footer_median": median(r[1] for r in runs),
        "data_median": median(r[2] for r in runs),
        "paint_cpu_median": median(r[3] for r in runs),
        "paint_heavy_imports": heavy_at_paint,
    }


def report_lines(result: dict) -> list[str]:
    """Markdown table rows for RESULTS.md and TUI.md; "n/a" for what was not measured."""
    heavy = ", ".join(result.get("help_heavy_imports", [])) or "none"
    heavy_at_paint = result.get("paint_heavy_imports")
    at_paint = (
        NA
        if heavy_at_paint is None
        else ", ".join(heavy_at_paint) or "none of " + ", ".join(h for h in HEAVY if h != "textual")
    )
    paint_all = result.get("paint_all", [])
    paints = ", ".join(figure(p, ".2f") for p in paint_all) or "none found"
    return [
        f"| `workbench --help` (fresh interpreter, {result.get('help_runs', 0)} runs) | "
        f"{figure(result.get('help_median'), '.3f', ' s')} (min "
        f"{figure(result.get('help_min'), '.3f')}, max {figure(result.get('help_max'), '.3f')}) "
        f"| ≤ 0.3 s | imports {heavy} of {', '.join(HEAVY)} |",
        f"| `workbench tui` first screen (pty {SIZE[1]}×{SIZE[0]}, "
        f"{result.get('paint_runs', len(paint_all))} runs) | "
        f"{figure(result.get('paint_median'), '.2f', ' s')} (runs: {paints}; "
        f"{figure(result.get('paint_cpu_median'), '.2f', ' s')} of CPU) | ≤ 1.5 s | "
        f"imported by then: {at_paint}; footer keys at "
        f"{figure(result.get('footer_median'), '.2f', ' s')}, data at "
        f"{figure(result.get('data_median'), '.2f', ' s')} |",
    ]


def main() -> int:
    """Measure both start-ups, print the table, and write it with ``--out`` or ``--smoke``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--out", default=None, help="also write the table to this file")
    parser.add_argument(
        "--smoke",
        action="store_true",
        help="one run of each, no warm-up: the code paths in seconds, written to a "
        "temporary folder unless --out says (never into benchmarks/)",
    )
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    load_before = load_average()
    result = measure(1, paints=1, warm_up=False) if args.smoke else measure(args.repeats)
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
    if args.out or args.smoke:
        out = report_path(args.out, Path(__file__).with_name("STARTUP.md"), args.smoke)
        out.write_text("\n".join(lines) + "\n", encoding="utf-8")
        print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
