"""One console session: the core that ``workbench interact`` and the TUI's Translate pane
both run through.

A session holds the models a user translates with (``interact`` one, the Translate pane
the fine-tuned and the base model), each loaded on first use and kept; the optional QE
model that scores each translation without a reference; and the history file, to which
every translation and every judgement is appended as it happens. The front ends read
lines and draw answers; translating, scoring, keeping and judging are written here once.

:meth:`ConsoleSession.check` looks at every path the session was given (the model
folders, the QE model's folder, the history's folder) before any model loads: a mistyped
``--qe`` folder is one line at once, not after seconds of loading the translation model.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from workbench.core.config.direction_request import DirectionRequest
from workbench.core.config.run_config import DEFAULT_OUTPUT_DIR
from workbench.core.data.sources import looks_like_local_path
from workbench.core.model.load import check_local_model
from workbench.core.run_folder.layout import OutputFolder
from workbench.core.translate.ct2_export import is_export
from workbench.core.translate.history import append_history, append_judgement
from workbench.core.translate.judgements import Judgement
from workbench.core.translate.picked import PickSettings
from workbench.core.translate.quality import QualityEstimator, QualityScore
from workbench.errors import WorkbenchError

if TYPE_CHECKING:
    from workbench.core.decoding import DecodeOptions
    from workbench.core.picking.picks import Pick, Picker
    from workbench.core.translate.translator import Translation, Translator


@dataclass(frozen=True)
class ConsoleModel:
    """A model the console translates with, as the user named it, and how it decodes."""

    name: str  # a saved model folder, a CTranslate2 export or a Hub id
    #: The direction flags; what the request leaves out is the model's own (its workbench.json).
    request: DirectionRequest = field(default_factory=DirectionRequest)
    backend: str = "auto"  # --backend: auto, transformers or ct2
    device: str | None = None  # None: the GPU when there is one
    num_beams: int | None = None  # None: the model's own
    max_new_tokens: int | None = None
    #: Translate each line N times and pick one (None: one beam search, the default).
    pick: PickSettings | None = None


@dataclass(frozen=True)
class ConsoleAnswer:
    """One typed line translated: what a front end draws, and its line in the history."""

    translation: Translation
    line_id: str | None  # what a judgement of it names; None when the history was not written
    backend: str  # the engine that translated it: transformers or ctranslate2
    quality: QualityScore | None = None
    #: Why the line has no QE score although one was asked for, or "".
    quality_problem: str = ""
    #: The QE model could not load: no later line is scored (said once, with this line).
    quality_off: bool = False
    #: Why the line is not in the history (a disk that filled up during the session), or "".
    history_problem: str = ""
    #: The candidates and the one picked, when the model picks.
    pick: Pick | None = None


def side_quality(qe_model: str | None, pick: PickSettings | None) -> QualityEstimator | None:
    """The QE model that scores each translation beside it (``--qe``), or None. With
    ``--pick qe``, ``--qe`` names the model that picks: its score is the pick's own, shown
    with the candidates, and the same model is not loaded a second time."""
    if qe_model is None or (pick is not None and pick.method == "qe"):
        return None
    return QualityEstimator(qe_model)


def console_history(model: str) -> Path:
    """Where ``interact`` keeps the history of ``model``: beside a model folder (a run's
    ``best_model`` is in its output folder, where the report reads it), else in the
    default output folder (a Hub id)."""
    folder = Path(model).expanduser()
    return OutputFolder(folder.parent if folder.exists() else Path(DEFAULT_OUTPUT_DIR)).history


class ConsoleSession:
    """Translators loaded once each, the QE model, the history file and the last line."""

    def __init__(
        self,
        models: Mapping[str, ConsoleModel | None],
        history: Path,
        quality: QualityEstimator | None = None,
    ) -> None:
        #: The models by the key the front end calls them (None: none yet, train one).
        self.models: dict[str, ConsoleModel | None] = dict(models)
        self.history = history
        #: The QE model, or None: none asked for, or it could not load.
        self.quality = quality
        #: The history id of the newest translation, what ``:judge`` judges by default.
        self.last_line: str | None = None
        self._translators: dict[str, Translator] = {}
        self._pickers: dict[str, Picker] = {}

    # ------------------------------------------------------------------ before loading

    def check(self) -> None:
        """Every path the session was given, checked before any model loads: each model
        folder, the QE model's folder and the history's folder (a Hub id is asked when
        its model loads)."""
        for model in self.models.values():
            if model is not None and looks_like_local_path(model.name):
                path = Path(model.name).expanduser()
                if not is_export(path):
                    check_local_model(path)
        if self.quality is not None:
            self.quality.check()
        _check_writable(self.history)

    # ------------------------------------------------------------------ the models

    def model(self, which: str | None = None) -> ConsoleModel:
        """The model under ``which`` (None: the first, a console's only model)."""
        key = self._key(which)
        model = self.models[key]
        if model is None:
            raise WorkbenchError(f"no {key} model yet: train one first")
        return model

    def set_model(self, which: str, model: ConsoleModel | None) -> None:
        """Translate with ``model`` under ``which`` from now on (loaded on next use)."""
        self.models[which] = model
        self._translators.pop(which, None)

    def is_loaded(self, which: str | None = None) -> bool:
        """Whether the model under ``which`` is loaded already."""
        return self._key(which) in self._translators

    def load(self, which: str | None = None) -> Translator:
        """The translator of the model under ``which``, loaded now if it was not yet."""
        from workbench.core.translate.translator import Translator

        key = self._key(which)
        translator = self._translators.get(key)
        if translator is None:
            model = self.model(key)
            translator = Translator.from_pretrained(
                model.name, device=model.device, backend=model.backend, request=model.request
            )
            self._translators[key] = translator
        return translator

    def _key(self, which: str | None) -> str:
        if which is not None:
            return which
        if not self.models:
            raise ValueError("a console session needs a model")
        return next(iter(self.models))

    # ------------------------------------------------------------------ a typed line

    def translate(
        self,
        text: str,
        which: str | None = None,
        overrides: tuple[int | None, int | None] = (None, None),
        picked: bool = True,
    ) -> ConsoleAnswer:
        """Translate one typed line with the model under ``which``, score it (with a QE
        model) and append it to the history. ``overrides``: beams and new tokens typed for
        this line, each None for the model's (its flags, else its generation config);
        ``picked``: False translates by one beam search even when the model picks (the
        Translate pane's switch, to set a pick beside what beam search gives)."""
        model = self.model(which)
        translator = self.load(which)
        beams, length = overrides
        options = translator.default_options().overridden(
            model.num_beams if beams is None else beams,
            model.max_new_tokens if length is None else length,
        )
        pick = None
        if model.pick is None or not picked:
            item = translator.translate(text, options)
        else:
            item, pick = self._picked(text, self._key(which), model.pick, options)
        score, problem, off = self._score(text, item.text)
        try:
            line_id: str | None = append_history(self.history, model.name, item, translator, score)
        except OSError as err:  # the translation is shown all the same; only keeping it failed
            line_id = None
            kept = f"not kept in {self.history} ({err.strerror or err})"
        else:
            kept = ""
        self.last_line = line_id  # a line not kept cannot be judged: no older one is instead
        return ConsoleAnswer(
            item, line_id, translator.backend.name, score, problem, off, kept, pick
        )

    def picker(self, which: str | None = None) -> Picker | None:
        """The picker of the model under ``which``, its metric loaded now if it was not
        yet (None: the model does not pick)."""
        key = self._key(which)
        settings = self.model(key).pick
        if settings is None:
            return None
        if key not in self._pickers:
            self._pickers[key] = settings.picker(self.load(key))
        return self._pickers[key]

    def _picked(
        self, text: str, key: str, settings: PickSettings, options: DecodeOptions
    ) -> tuple[Translation, Pick | None]:
        """One typed line translated by a pick: its candidates, and the picked one as the
        line's translation."""
        from workbench.core.translate.picked import pick_translations
        from workbench.core.translate.translator import Translation

        translator, picker = self.load(key), self.picker(key)
        assert picker is not None
        started = time.perf_counter()
        (line,) = pick_translations(translator, [text], picker, settings.candidates, options)
        if line.pick is None:
            return Translation(text, "", 0.0, ["empty input: nothing to translate"]), None
        seconds = time.perf_counter() - started
        return Translation(text, line.pick.translation, seconds, list(line.notices)), line.pick

    def _score(self, source: str, translation: str) -> tuple[QualityScore | None, str, bool]:
        """The line's QE score, or why there is none and whether QE is now off: a model
        that cannot load will not load for the next line either, while one line's failure
        (too long for memory) says nothing about the next."""
        if self.quality is None:
            return None, "", False
        score, problem = self.quality.try_estimate(source, translation)
        off = bool(problem) and not self.quality.loaded
        if off:
            self.quality = None
        return score, problem, off

    def judge(self, judgement: Judgement, line_id: str | None = None) -> None:
        """Record ``judgement`` of the history line ``line_id`` (None: the newest)."""
        judged = line_id or self.last_line
        if judged is None:
            raise WorkbenchError("nothing to judge yet: translate a sentence first")
        append_judgement(self.history, judged, judgement)


def _check_writable(history: Path) -> None:
    """The history can be appended to: the file, or the nearest folder that exists."""
    existing = history
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    problem = ""
    if existing == history and not existing.is_file():
        problem = f"'{existing}' is not a file"
    elif existing != history and not existing.is_dir():
        problem = f"'{existing}' is a file, not a folder"
    elif not os.access(existing, os.W_OK | (os.X_OK if existing.is_dir() else 0)):
        problem = f"no write permission on '{existing}'"
    if problem:
        raise WorkbenchError(
            f"the console history '{history}' cannot be written ({problem}); the console "
            "keeps every translation there: make that folder writable, or copy the model "
            "to a folder you can write to"
        )
