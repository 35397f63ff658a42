"""Unit tests: the core's parts on tiny models and planted files, in this process, with no
model trained. The fixtures they share with e2e/ are imported here from tests/helpers."""

from tests.helpers.family_runs import model_folders  # noqa: F401 (fixtures: pytest finds them by name here)
from tests.helpers.lab import run_with_model  # noqa: F401
