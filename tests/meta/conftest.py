"""Tests of the project itself: the layering, the import contracts, the README and docs, and
each benchmark's smallest mode."""

from tests.helpers.benchmarks import speed  # noqa: F401 (a fixture: pytest finds it by name here)
