"""Running a Lab study and saving its JSON beside the run that trained the model: the one
path for ``workbench lab`` and the TUI's Lab pane, so both measure, refuse and save alike.

The decoding study saves into the run whose test set it scored; the cache and attention
studies into the run folder that trained the model, when it is still there. The attention
study of a decoder-only model is the prompt study (it has no cross-attention).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from workbench.core.atomic import write_json
from workbench.core.decoding import clean_input
from workbench.core.lab.attention_kinds import AttentionKinds
from workbench.core.lab.decoding_strategies import DecodingStudy
from workbench.core.lab.kv_cache import DEFAULT_LENGTHS, CacheStudy
from workbench.core.lab.prompt_attention import PromptAttention
from workbench.core.run_folder.layout import RunFolder
from workbench.core.translate.candidates import DEFAULT_CANDIDATES
from workbench.errors import WorkbenchError

StudyKind = Literal["decoding", "cache", "attention"]
STUDY_KINDS: tuple[StudyKind, ...] = ("decoding", "cache", "attention")
Progress = Callable[[str, int, int], None]


@dataclass(frozen=True)
class StudyOptions:
    """What a study may be given; each kind reads its own fields."""

    limit: int = 200  # decoding: test sentences scored
    run_dir: Path | None = None  # decoding: the run whose test set is scored
    #: decoding: candidates a sentence of the quality-aware arms (0: none of those arms)
    candidates: int = DEFAULT_CANDIDATES
    qe_model: str | None = None  # decoding: a QE model, for a QE arm beside the MBR arms
    lengths: tuple[int, ...] = DEFAULT_LENGTHS  # cache: output lengths timed
    repeats: int = 3  # cache: timings per length
    sentence: str = ""  # attention: the sentence looked at


@dataclass(frozen=True)
class StudyRun:
    """A finished study and where its JSON went (None: the model has no run folder)."""

    kind: StudyKind
    result: DecodingStudy | CacheStudy | AttentionKinds | PromptAttention
    saved: Path | None


def study_folder(model_dir: str) -> Path | None:
    """The run folder that trained the model, if it is still there."""
    from workbench.core.run_folder.output_folder import run_dir_of
    from workbench.core.translate.loading import settings_for

    return run_dir_of(model_dir, settings_for(model_dir).run_dir)


def save_result(folder: Path | None, study: str, data: dict[str, Any]) -> Path | None:
    """Write the JSON of a study (a key of :data:`~workbench.core.run_folder.layout.LAB_FILES`)
    into its run folder (atomically); None when there is none."""
    if folder is None or not folder.is_dir():
        return None
    path = RunFolder(folder).lab_study(study)
    try:
        write_json(path, data)
    except OSError as err:
        raise WorkbenchError(
            f"cannot write {path}: {err.strerror or err}; check the run folder's permissions"
        ) from None
    return path


def run_study(
    kind: StudyKind,
    model: str,
    options: StudyOptions | None = None,
    on_progress: Progress | None = None,
    stop: threading.Event | None = None,
) -> StudyRun:
    """Run the ``kind`` study of ``model`` and save it; a mistake is one sentence."""
    options = options or StudyOptions()
    if kind == "decoding":
        from workbench.core.lab.decoding_run import decoding_study
        from workbench.core.lab.picked_arms import pick_arms

        count = options.candidates
        picks = pick_arms(count, options.qe_model) if count else []
        study = decoding_study(
            model, options.run_dir, options.limit, on_progress=on_progress, stop=stop, picks=picks
        )
        return StudyRun(kind, study, save_result(Path(study.run_dir), "decoding", study.to_dict()))
    if kind == "cache":
        from workbench.core.lab.kv_cache import cache_study

        cache = cache_study(
            model,
            lengths=options.lengths,
            repeats=options.repeats,
            on_progress=on_progress,
            stop=stop,
        )
        return StudyRun(kind, cache, save_result(study_folder(model), "cache", cache.to_dict()))
    if kind == "attention":
        from workbench.core.attention.extract import load_attention_model
        from workbench.core.lab.attention_kinds import attention_kinds

        sentence = clean_input(options.sentence)
        if not sentence:
            raise WorkbenchError(
                "empty sentence: give the text to look at, e.g. "
                'workbench lab attention "I like to drink tea."'
            )
        loaded = load_attention_model(model)
        if loaded.direction.causal:
            from workbench.core.lab.prompt_attention import prompt_attention

            prompted = prompt_attention(loaded, sentence)
            saved = save_result(study_folder(model), "prompt_attention", prompted.to_dict())
            return StudyRun(kind, prompted, saved)
        kinds = attention_kinds(loaded, sentence)
        return StudyRun(kind, kinds, save_result(study_folder(model), "attention", kinds.to_dict()))
    raise WorkbenchError(f"no Lab study '{kind}'; choose one of {', '.join(STUDY_KINDS)}")
