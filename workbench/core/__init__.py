"""The core every front end runs through; it imports only itself and ``workbench.errors``.

Loose modules hold the basics every package uses (``config``, ``presets``, ``decoding``,
``events``, ``run_folder``, ``scores``, ``atomic``); the packages form one chain, each
importing only those below it: ``views`` -> ``data`` -> ``model`` -> ``translate`` ->
``evaluate`` -> ``train`` -> ``attention`` -> ``lab`` -> ``report`` -> ``experiments``
(``tests/test_architecture.py`` holds the code to it).
"""

__version__ = "0.1.0"
#: The name on PyPI (``workbench`` there is another project); the command and the
#: import package stay ``workbench``.
DISTRIBUTION = "nmt-workbench"
