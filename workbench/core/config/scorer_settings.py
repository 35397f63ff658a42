"""The neural metrics that judge a run's held-out sets: COMET and MetricX, and how each is
loaded.

They are settings of a run like any other (a TOML key and a flag each, in the
"decoding" group), kept apart from the rest of :class:`~.run_config.RunConfig` because
they say nothing about how the model is trained or decoded: each names a scorer that is
loaded once training has let go of its model, scores both held-out sets before and after,
and chooses nothing (``--select-on comet`` aside). :class:`ScorerSettings` is
``RunConfig``'s base, so its fields are ``RunConfig``'s and are read as
``config.metricx``.
"""

from __future__ import annotations

from dataclasses import dataclass

from workbench.core.config.settings import (
    DEFAULT_COMET,
    DEFAULT_METRICX,
    DEFAULT_METRICX_TOKENIZER,
    setting,
)
from workbench.errors import WorkbenchError

#: MetricX-24's input length, as it was trained (``--max_input_length 1536`` in its README).
METRICX_24_LENGTH = 1536


@dataclass(frozen=True)
class ScorerSettings:
    """Which neural metrics score the held-out sets, beside BLEU and chrF."""

    comet: str | None = setting(
        None,
        group="decoding",
        help="COMET model that scores both held-out sets before and after, beside BLEU "
        f"(alone: {DEFAULT_COMET}; a Hub id or a local folder); it chooses nothing",
        bare=DEFAULT_COMET,
    )
    metricx: str | None = setting(
        None,
        group="decoding",
        help="MetricX model that scores both held-out sets before and after against the "
        f"references, lower is better (alone: {DEFAULT_METRICX}; a Hub id or a local "
        "folder); it chooses nothing",
        bare=DEFAULT_METRICX,
    )
    metricx_tokenizer: str | None = setting(
        None,
        group="decoding",
        help="MetricX's tokenizer, a Hub id or a folder (none = one in the model's folder, "
        f"else {DEFAULT_METRICX_TOKENIZER})",
    )
    metricx_max_length: int | None = setting(
        None,
        group="decoding",
        help="MetricX's input length in tokens, source, translation and reference together "
        f"(none = the edition's: {METRICX_24_LENGTH} for MetricX-24, 1024 for MetricX-23)",
    )


def check_metricx_length(max_length: int | None) -> None:
    """One line for a MetricX input length that leaves no token (None: the edition's)."""
    if max_length is not None and max_length < 2:
        raise WorkbenchError(
            f"--metricx-max-length {max_length} leaves no token of the input (the count "
            f"includes the end-of-sequence id); give 2 or more, {METRICX_24_LENGTH} as "
            "MetricX-24 was trained"
        )


def check_scorer_settings(c: ScorerSettings, picks_with_metricx: bool = False) -> None:
    """One line for a MetricX setting that cannot work, before anything is loaded
    (``picks_with_metricx``: ``--pick`` reads a MetricX model too, with the same settings)."""
    check_metricx_length(c.metricx_max_length)
    read = c.metricx or picks_with_metricx
    if not read and (c.metricx_tokenizer or c.metricx_max_length is not None):
        raise WorkbenchError(
            "--metricx-tokenizer and --metricx-max-length set how the MetricX model is "
            "read, and no MetricX model is asked for: add --metricx (or --metricx MODEL), "
            "or leave them out"
        )
