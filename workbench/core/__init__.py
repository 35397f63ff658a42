"""The core every front end runs through; it imports only itself and ``workbench.errors``."""

__version__ = "0.1.0"
#: The name on PyPI (``workbench`` there is another project); the command and the
#: import package stay ``workbench``.
DISTRIBUTION = "nmt-workbench"
