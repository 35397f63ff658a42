"""workbench: a terminal workbench for fine-tuning and inspecting MT models."""

from workbench.core import __version__

__all__ = ["__version__"]
