"""The command line: a parser (:mod:`.main`) and one module per command, over the core."""

from workbench.cli.main import main

__all__ = ["main"]
