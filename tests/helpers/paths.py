"""Where the tests' files are: the repository, tests/, and its data folders.

A test module names these instead of ``Path(__file__).parent``, so that it finds the data
from whichever folder of tests/ it sits in."""

from __future__ import annotations

from pathlib import Path

#: The repository's root.
REPO = Path(__file__).resolve().parents[2]
#: tests/
TESTS = REPO / "tests"
#: tests/fixtures: recorded runs, the tiny COMET models, a Hub config.
FIXTURES = TESTS / "fixtures"
#: tests/expected: outputs a test compares with, byte for byte.
EXPECTED = TESTS / "expected"
