"""A MetricX model loaded and scoring segments: what every front end and picker calls.

``load_metricx("google/metricx-24-hybrid-large-v2p6")`` reads the checkpoint
(:mod:`.files`, :mod:`.checkpoint`) into MetricX's network (:mod:`.network`) with its
tokenizer; ``scorer.score(sources, hypotheses, references)`` gives one score per
segment, with the references (reference-based) or without them (``None``: QE), equal to
google-research/metricx's ``predict.py`` within 1e-4 (``tests/unit/test_metricx_scores.py``
holds it to that code's own scores). Scores are MetricX's scale, 0 to 25, an MQM-like
error count: **lower is better**, which every line that shows one says.

The weights run in the dtype they were saved in (a ``-bfloat16`` checkpoint in bf16), as
the reference loads them with ``torch_dtype="auto"``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from workbench.core.config.scorer_settings import check_metricx_length
from workbench.core.metricx.files import (
    Edition,
    MetricXSource,
    fetch_weights,
    load_tokenizer,
    locate,
    tokenizer_location,
)
from workbench.core.metricx.inputs import InputTokenizer, length_batches, padded
from workbench.errors import WorkbenchError

#: Inputs scored at once: MetricX-24 inputs are long (up to 1,536 tokens).
BATCH_SIZE = 8
#: ``progress(done, total)``: inputs scored so far, of those to score.
Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class MetricXSettings:
    """How a MetricX model is loaded: which, its tokenizer, its input length, where."""

    model: str  # a Hub id or a folder
    tokenizer: str | None = None  # None: the model's folder, else google/mt5-xl
    max_length: int | None = None  # None: the edition's (1,536 for MetricX-24)
    batch_size: int = BATCH_SIZE
    device: str | None = None  # None: the GPU when there is one

    def __post_init__(self) -> None:
        check_metricx_length(self.max_length)
        if self.batch_size < 1:
            raise WorkbenchError(f"MetricX batch size {self.batch_size}: give 1 or more")


@dataclass
class MetricXScorer:
    """One MetricX model, ready to score; lower scores are better."""

    name: str  # as the user named it
    edition: Edition
    source: MetricXSource
    network: Any
    encode: InputTokenizer
    device: str
    dtype: str  # the weights' dtype: float32 or bfloat16
    batch_size: int = BATCH_SIZE

    lower_is_better = True

    def metric(self, qe: bool) -> str:
        """The metric's name as the papers give it: ``MetricX-24`` or ``MetricX-24-QE``."""
        return f"{self.edition.name}-QE" if qe else self.edition.name

    def score(
        self,
        sources: Sequence[str],
        hypotheses: Sequence[str],
        references: Sequence[str] | None = None,
        progress: Progress | None = None,
    ) -> list[float]:
        """One score (0-25, lower is better) per segment; ``references`` None is QE."""
        return self.score_systems(sources, [hypotheses], references, progress)[0]

    def score_systems(
        self,
        sources: Sequence[str],
        systems: Sequence[Sequence[str]],
        references: Sequence[str] | None = None,
        progress: Progress | None = None,
    ) -> list[list[float]]:
        """Each system's segment scores, every system on the same sources (and
        references); each distinct input is scored once."""
        self.source.check_mode(qe=references is None)
        for hypotheses in systems:
            _check_lengths(len(sources), len(hypotheses), "translations")
        if references is not None:
            _check_lengths(len(sources), len(references), "references")
        texts = [
            [
                self.edition.input_text(s, h, None if references is None else references[i])
                for i, (s, h) in enumerate(zip(sources, hypotheses, strict=True))
            ]
            for hypotheses in systems
        ]
        distinct = list(dict.fromkeys(t for system in texts for t in system))
        scores = dict(zip(distinct, self._scores(distinct, progress), strict=True))
        return [[scores[t] for t in system] for system in texts]

    def _scores(self, texts: list[str], progress: Progress | None) -> list[float]:
        """Each input's score, in batches of similar length."""
        import torch

        if not texts:
            return []
        ids = self.encode(texts)
        out = [0.0] * len(texts)
        done = 0
        for batch in length_batches([len(i) for i in ids], self.batch_size):
            rows, mask = padded([ids[i] for i in batch])
            with torch.inference_mode():
                scores = self.network(
                    torch.tensor(rows, device=self.device), torch.tensor(mask, device=self.device)
                )
            for i, value in zip(batch, scores.float().cpu().tolist(), strict=True):
                out[i] = float(value)
            done += len(batch)
            if progress is not None:
                progress(done, len(texts))
        return out


def _check_lengths(sources: int, other: int, what: str) -> None:
    if sources != other:
        raise WorkbenchError(
            f"MetricX needs one source per line of {what}: {sources:,} sources against "
            f"{other:,} {what}; give files of equal length"
        )


def load_metricx(settings: MetricXSettings | str) -> MetricXScorer:
    """The MetricX model the settings name (or just its name), ready to score."""
    from workbench.core.metricx.checkpoint import load_weights
    from workbench.core.metricx.network import build
    from workbench.core.model.load import pick_device

    if isinstance(settings, str):
        settings = MetricXSettings(settings)
    source = locate(settings.model)
    tokenizer = load_tokenizer(tokenizer_location(source, settings.tokenizer))
    fetch_weights(source)
    network = build(source.config)
    dtype = load_weights(network, source.folder, source.what)
    device = settings.device or pick_device()
    network.to(device).eval()
    edition = source.edition
    return MetricXScorer(
        name=settings.model,
        edition=edition,
        source=source,
        network=network,
        encode=InputTokenizer(tokenizer, settings.max_length or edition.max_length),
        device=device,
        dtype=dtype,
        batch_size=settings.batch_size,
    )
