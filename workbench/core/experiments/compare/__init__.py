"""Two or more runs side by side, with sacreBLEU's paired tests on their shared test set.

Users fine-tune several recipes and must say which is better and whether the difference
is real. :func:`~.read.build_comparison` reads the run folders into one
:class:`~.read.Comparison` (settings that differ, per-epoch curves, test scores with
intervals, paired bootstrap and approximate-randomisation p-values against the first run,
the sentences where the runs differ most); :mod:`.render` writes it as terminal text,
``compare.md`` and a self-contained ``compare.html``.
"""
