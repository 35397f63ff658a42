"""How fast each user mistake is answered: the cases of tests/cli/test_user_mistakes.py, timed.

Usage: python benchmarks/user_mistakes.py [--repeat 3]
       python benchmarks/user_mistakes.py --smoke   # two mistakes once: the code paths
Prints markdown rows (mistake, the error line, exit code, median wall time of the whole
``python -m workbench`` process) for docs/reliability.md. The test suite runs ``--smoke``
(tests/cli/test_user_mistakes.py checks every mistake's answer itself).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from figures import figure, median  # noqa: E402

from tests.helpers.mistakes import MISTAKES  # noqa: E402

SMOKE_MISTAKES = 2  # --smoke times the first two, once


def main() -> None:
    """Time each mistake's answer ``--repeat`` times and print its row."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--smoke", action="store_true", help="the first two mistakes, once")
    args = parser.parse_args()
    mistakes = list(MISTAKES.items())
    repeat = args.repeat
    if args.smoke:
        mistakes, repeat = mistakes[:SMOKE_MISTAKES], 1
    for name, (files, argv, env, _needles) in mistakes:
        times, line, code = [], "", None
        for _ in range(repeat):
            with tempfile.TemporaryDirectory() as tmp:
                for rel, content in files.items():
                    (Path(tmp) / rel).write_bytes(content)
                started = time.perf_counter()
                result = subprocess.run(
                    [sys.executable, "-m", "workbench", *argv],
                    cwd=tmp,
                    input=b"hello\n",
                    capture_output=True,
                    env={**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(REPO), **env},
                )
                times.append(time.perf_counter() - started)
                line = result.stderr.decode("utf-8", "replace").strip().replace("|", "\\|")
                code = result.returncode
        line = line.removeprefix("workbench: error: ")
        short = line if len(line) <= 110 else line[:107] + "…"
        print(f"| {name} | {short} | {figure(code)} | {figure(median(times), '.2f', ' s')} |")


if __name__ == "__main__":
    main()
