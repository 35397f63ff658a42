"""The Textual app under a Pilot, its snapshots (__snapshots__/, beside their test module),
and ``workbench serve``; no test here trains a model (those are in e2e/)."""

from tests.helpers.lab import lab_app  # noqa: F401 (a fixture: pytest finds it by name here)
