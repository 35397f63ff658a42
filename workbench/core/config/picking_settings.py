"""The run settings of ``train --pick``: after training, the test set's "after" is decoded
a second way, N candidates a line with one picked by QE reranking or MBR, and scored
beside beam search's (which stays as it is).

Each is a :class:`~workbench.core.config.run_config.RunConfig` field, defined here so that
the run's configuration reads as one list with these eleven as one line each. Their flags
and meaning are ``translate``'s (``cli/pick_options.py``), so a user learns them once;
the samples are drawn with the run's ``seed``. A run checks them into a
:class:`~workbench.core.translate.picked.PickSettings` in its preflight, before anything
slow, and its ``config.json`` records them, for ``runs``, report and compare to show.
"""

from __future__ import annotations

from workbench.core.config.settings import DEFAULT_QE, setting

PICK = setting(
    None,
    group="picking",
    help="after training, translate each test line N times and pick one too: qe (the best "
    "by --qe-model's reference-free metric) or mbr (the highest expected --utility); the beam "
    "line is kept and shown beside it",
)
CANDIDATES = setting(
    None, group="picking", help="candidates per test line, 2..64 (unset with --pick: 8)"
)
CANDIDATES_FROM = setting(
    "sample", group="picking", help="sample, beam (beam search's n-best) or both (half each)"
)
EPSILON = setting(
    None,
    group="picking",
    help="epsilon sampling's cut (unset: 0.02 unless top_p is below 1)",
)
TOP_P = setting(1.0, group="picking", help="nucleus sampling of the candidates")
TEMPERATURE = setting(1.0, group="picking", help="the candidates' sampling temperature")
UTILITY = setting(None, group="picking", help="--pick mbr's utility: chrf, bleu, comet or metricx")
UTILITY_MODEL = setting(
    None,
    group="picking",
    help="the model of a neural utility (unset: Unbabel/wmt22-comet-da for comet)",
)
FAST_MBR = setting(
    False,
    group="picking",
    help="MBR by confidence-based pruning (Cheng & Vlachos 2023) instead of in full",
)
QE_METRIC = setting("cometkiwi", group="picking", help="--pick qe's metric: cometkiwi or metricx")
# Not --qe: the TUI, which takes the run flags too, has --qe for its Translate pane.
QE_MODEL = setting(
    None,
    group="picking",
    help=f"--pick qe's model (translate's --qe), a Hub id or a folder (alone: {DEFAULT_QE})",
    bare=DEFAULT_QE,
)
