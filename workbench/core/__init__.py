"""The core every front end runs through; it imports only itself and ``workbench.errors``.

Its base holds what every package uses: four loose modules (``atomic``, ``decoding``,
``events``, ``languages``) and three packages, ``config`` (the settings, the presets,
building and checking a config), ``records`` (what a run writes and every front end reads
back, typed both ways) and ``run_folder`` (every file a run folder holds, named once, and
the base records read and written there). Above it the packages form one chain, each
importing only the base and those below it: ``views`` -> ``live`` -> ``data`` ->
``model`` -> ``comet`` -> ``translate`` -> ``evaluate`` -> ``train`` -> ``attention`` ->
``lab`` -> ``report`` -> ``experiments`` (pyproject.toml's import-linter contracts declare
it; ``lint-imports`` checks them).
"""

__version__ = "0.1.0"
#: The name on PyPI (``workbench`` there is another project); the command and the
#: import package stay ``workbench``.
DISTRIBUTION = "nmt-workbench"
