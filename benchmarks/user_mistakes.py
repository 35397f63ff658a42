"""How fast each user mistake is answered: the cases of tests/test_user_mistakes.py, timed.

Usage: python benchmarks/user_mistakes.py [--repeat 3]
Prints markdown rows (mistake, the error line, exit code, median wall time of the whole
``python -m workbench`` process) for docs/reliability.md.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.test_user_mistakes import MISTAKES  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    for name, (files, argv, env, _needles) in MISTAKES.items():
        times, line, code = [], "", None
        for _ in range(args.repeat):
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
        print(f"| {name} | {short} | {code} | {statistics.median(times):.2f} s |")


if __name__ == "__main__":
    main()
