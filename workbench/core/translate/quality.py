"""A reference-free score beside each translation of the user's own sentences.

The assignment asks students to judge three to five sentences of their own, which have no
reference translation, so BLEU cannot score them; a quality-estimation model can
(CometKiwi-22 by default: COMET's reference-free model, gated on the Hub). ``interact
--qe`` and the Translate pane (``tui --qe``) put its score beside each translation, the
console history keeps it, and the report shows it next to the student's own judgement:
two readings of the same sentence, one a person's, one a model's.

The model loads on first use and stays loaded for the session: translations of typed
lines come one at a time, and reloading 2 GB for each would take longer than translating.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from workbench.core.comet.files import locate
from workbench.core.comet.settings import CHECKPOINT_FILE, HPARAMS_FILE, metric_name
from workbench.core.config.settings import DEFAULT_QE
from workbench.core.data.sources import looks_like_local_path
from workbench.errors import WorkbenchError, failure_text

if TYPE_CHECKING:
    from workbench.core.comet.scorer import CometScorer


@dataclass(frozen=True)
class QualityScore:
    """One translation's reference-free score (×100) and the model that gave it."""

    metric: str  # "CometKiwi-22"
    model: str  # as the user named it
    score: float

    def text(self) -> str:
        """``CometKiwi-22 81.23``."""
        return f"{self.metric} {self.score:.2f}"


class QualityEstimator:
    """A QE model, loaded on first use, that scores one translation at a time."""

    def __init__(self, model: str, device: str | None = None) -> None:
        self.model = model
        self.device = device
        self._scorer: CometScorer | None = None

    def check(self) -> None:
        """Refuse a QE model folder that is missing, incomplete or scores against a
        reference, from its files alone: before any model loads. A Hub id is asked when
        the model loads."""
        if not looks_like_local_path(self.model):
            return
        if not Path(self.model).expanduser().exists():
            raise WorkbenchError(
                f"COMET model folder '{Path(self.model).expanduser()}' does not exist; --qe "
                f"takes a folder with {HPARAMS_FILE} and {CHECKPOINT_FILE}, or a Hub id such "
                f"as {DEFAULT_QE}"
            )
        source = locate(self.model)
        source.checkpoint()  # in the folder, or said
        if source.declared_settings().needs_reference:
            raise self._reference_based()

    def load(self) -> CometScorer:
        """The scorer, loaded now if it was not yet (one line when it cannot be)."""
        if self._scorer is None:
            from workbench.core.comet.scorer import load_scorer

            scorer = load_scorer(self.model, device=self.device, batch_size=1)
            if scorer.needs_reference:
                raise self._reference_based()
            self._scorer = scorer
        return self._scorer

    @property
    def loaded(self) -> bool:
        """Whether the model is loaded (a model that failed to load never is)."""
        return self._scorer is not None

    def _reference_based(self) -> WorkbenchError:
        return WorkbenchError(
            f"COMET model '{self.model}' scores against a reference, which a typed "
            f"sentence has none of; --qe takes a reference-free model such as {DEFAULT_QE}"
        )

    @property
    def metric(self) -> str:
        """The metric's name as the papers give it (``CometKiwi-22``)."""
        return metric_name(self.model, reference_free=True)

    def estimate(self, source: str, translation: str) -> QualityScore:
        """The score of ``translation`` as a translation of ``source``."""
        scorer = self.load()
        (score,) = scorer.score([source], [translation])
        scorer.forget()  # a console session is long: it keeps no encodings
        from workbench.core.comet.scorer import points

        (shown,) = points([score])
        return QualityScore(self.metric, self.model, round(shown, 2))

    def try_estimate(self, source: str, translation: str) -> tuple[QualityScore | None, str]:
        """``(score, "")``, or ``(None, why)`` when it failed: a front end says why and
        goes on translating, since one score must never cost the session."""
        try:
            return self.estimate(source, translation), ""
        except Exception as err:  # gated, unsuitable or broken (out of memory): said, not fatal
            return None, failure_text(err)
