"""One translation picked among its candidates, with the score each was ranked by.

A :class:`Candidates` is what generating gave for one source: its distinct texts in the
order they first came (beam search's n-best in rank order, then samples as drawn) and how
often each came. A :class:`Picker` ranks them, by a reference-free metric (``qe``: QE
reranking, Fernandes et al. 2022) or by expected utility against the candidates
themselves (``mbr``, :mod:`.mbr`), and the :class:`Pick` it returns holds every
candidate's score, so that what a front end prints is what the pick was made from.

Ties: among candidates whose scores are exactly equal and best, the one drawn most
often wins, then the one that came first. So a pick is the same on every run over the
same candidates, and a beam search's own best wins a tie it is in.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from workbench.core.picking.choices import PICK_METHODS, check_choice
from workbench.core.picking.mbr import full_mbr, pruned_mbr
from workbench.core.picking.metrics import PickingMetric
from workbench.errors import WorkbenchError


@dataclass(frozen=True)
class Candidates:
    """One source's candidates, deduplicated: each distinct text once, with its count."""

    source: str
    texts: tuple[str, ...]
    counts: tuple[int, ...]
    #: What the user is told about the source (odd input, split, truncated), as
    #: translating it once would say.
    notices: tuple[str, ...] = field(default=(), compare=False)

    @classmethod
    def of(cls, source: str, drawn: Sequence[str], notices: Sequence[str] = ()) -> Candidates:
        """``drawn`` (every candidate as generated, duplicates kept) counted, in the order
        each text first came."""
        counts: dict[str, int] = {}
        for text in drawn:
            counts[text] = counts.get(text, 0) + 1
        return cls(source, tuple(counts), tuple(counts.values()), tuple(notices))

    @property
    def drawn(self) -> int:
        """How many candidates were generated, duplicates counted."""
        return sum(self.counts)


@dataclass(frozen=True)
class ScoredCandidate:
    """A candidate, how often it was drawn, and its score (None: pruned unscored)."""

    text: str
    count: int
    score: float | None


@dataclass(frozen=True)
class Pick:
    """A source's candidates, scored, and the one picked."""

    source: str
    candidates: tuple[ScoredCandidate, ...]
    picked: int  # index into candidates
    picked_by: str  # "mbr:chrF", "mbr-pruned:chrF", "qe:CometKiwi-22"
    metric: str  # the metric's name, as marked "(used to pick)"
    higher_is_better: bool

    @property
    def translation(self) -> str:
        """The picked candidate's text."""
        return self.candidates[self.picked].text

    @property
    def score(self) -> float | None:
        """The picked candidate's score."""
        return self.candidates[self.picked].score


@dataclass
class Picker:
    """A picking method over one metric (loaded once, used for every source)."""

    method: str  # "qe" or "mbr"
    metric: PickingMetric
    pruned: bool = False  # MBR by confidence-based pruning instead of in full
    seed: int = 0  # the pruning's shuffle and bootstrap

    def __post_init__(self) -> None:
        check_choice("--pick", self.method, PICK_METHODS)
        if self.method == "qe" and not self.metric.reference_free:
            raise WorkbenchError(
                f"--pick qe ranks by a reference-free metric, and {self.metric.name} reads a "
                "reference; use --qe with a QE model such as CometKiwi"
            )
        if self.method == "mbr" and self.metric.reference_free:
            raise WorkbenchError(
                f"--pick mbr compares candidates with each other, and {self.metric.name} "
                "reads no reference; use --utility chrf, bleu, comet or metricx"
            )

    @property
    def label(self) -> str:
        """What the pick is said to be made by: ``mbr:chrF``, ``qe:CometKiwi-22``."""
        method = "mbr-pruned" if self.method == "mbr" and self.pruned else self.method
        return f"{method}:{self.metric.name}"

    def scores(self, candidates: Candidates) -> list[float | None]:
        """Each distinct candidate's score, as the pick ranks them."""
        texts, counts = candidates.texts, candidates.counts
        if self.method == "qe":
            sources = [candidates.source] * len(texts)
            return list(self.metric.score(sources, texts, None))
        if self.pruned:
            return pruned_mbr(self.metric, candidates.source, texts, counts, self.seed)
        return list(full_mbr(self.metric, candidates.source, texts, counts))

    def pick(self, candidates: Candidates) -> Pick:
        """The best candidate by its score, ties broken as the module docstring says."""
        scores = self.scores(candidates)
        best: int | None = None
        for i, score in enumerate(scores):
            if score is None:
                continue
            if best is None:
                best = i
                continue
            held = scores[best]
            assert held is not None
            if self.metric.better(score, held) or (
                score == held and candidates.counts[i] > candidates.counts[best]
            ):
                best = i
        if best is None:
            raise ValueError("a pick needs at least one scored candidate")
        scored = tuple(
            ScoredCandidate(t, c, s)
            for t, c, s in zip(candidates.texts, candidates.counts, scores, strict=True)
        )
        return Pick(
            candidates.source,
            scored,
            best,
            self.label,
            self.metric.name,
            self.metric.higher_is_better,
        )
