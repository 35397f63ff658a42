"""The commands as a user runs them (``cli``: ``workbench.cli.main.main([...])`` in the
test's process; ``run_cli``: ``python -m workbench`` in a new one, where the process is
the point), without training a model (those are in e2e/). Every fixture they use is shared
with another folder, in tests/conftest.py."""
