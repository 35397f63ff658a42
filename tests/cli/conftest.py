"""The commands as a user runs them (``run_cli``: ``python -m workbench`` in a subprocess, or
``main([...])`` here), without training a model (those are in e2e/). Every fixture they use
is shared with another folder, in tests/conftest.py."""
