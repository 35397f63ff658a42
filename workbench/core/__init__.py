"""The core every front end runs through; it imports only itself and ``workbench.errors``."""

__version__ = "0.1.0"
