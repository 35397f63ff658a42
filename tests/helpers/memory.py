"""The memory plan's figures as the CLI prints them, and a child process's measured peak."""

from __future__ import annotations

import re

#: A plan's figure in a line: ``needs about 80.0 GB``.
NEEDS = re.compile(r"needs about ([\d.]+) GB")


#: The planned peak a run prints: ``about 1.2 GB at a step's peak``.
PLANNED = re.compile(r"about ([\d.]+) GB at a step's peak")


def figure_in(pattern: re.Pattern[str], text: str) -> float:
    """The number ``pattern``'s group finds in ``text``; a failed assertion if none."""
    found = pattern.search(text)
    assert found, f"{pattern.pattern!r} not in {text!r}"
    return float(found.group(1))


#: Runs a command as its only child and prints the child's peak resident bytes.
PEAK_OF_CHILD = (
    "import resource, subprocess, sys\n"
    "done = subprocess.run(sys.argv[1:], capture_output=True, text=True)\n"
    "sys.stderr.write(done.stdout + done.stderr)\n"
    "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024)\n"
    "sys.exit(done.returncode)\n"
)
