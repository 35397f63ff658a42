"""workbench: a terminal workbench for fine-tuning and inspecting MT models."""

__version__ = "0.1.0"
