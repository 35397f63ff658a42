"""A run's attention heatmaps, kept in its folder so that a report draws one without torch.

The report's heatmap needs the run's model to translate a sentence and run once more with
its attention weights returned: torch, transformers and the model load first, about 4.5 s
and 400 MiB for the demo's model before anything is drawn. So the view of a sentence (its
labels and weights, not a drawing) is kept in ``attention_heatmaps.json`` with the stamp
of the model folder it came from (each file's name, size and a digest of its content:
:func:`~workbench.core.model.fingerprint.folder_fingerprint`) and the :data:`FORMAT` of
the views:

- a run that finishes keeps the view of its first test sample, the sentence its report
  shows when the console has not translated one (:func:`sample_heatmap`,
  :func:`keep_heatmap`);
- a report on another sentence (a console line, ``--sentence``) computes its view and
  keeps it for the next report (:func:`heatmap_view`).

A model folder whose stamp changed (a resume saved another best model), or views of
another format, are stale: they are computed again. A run folder copied with ``cp -r`` or
``scp -r`` (new modification times, the same files) keeps its views. A view is the same
numbers whether kept or computed (:func:`compute_heatmap`, on the CPU, with the model's
own decoding settings).
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psutil

from workbench.core.atomic import write_text
from workbench.core.model.fingerprint import folder_fingerprint
from workbench.core.records.files import read_json_dict
from workbench.core.records.run_records import Sample
from workbench.core.records.typed import decode
from workbench.core.run_folder.layout import RunFolder

#: Views kept per run folder, the newest last; the oldest goes first.
KEPT_VIEWS = 32
#: The largest model folder (bytes of its files) whose view a finishing run computes:
#: OPUS-MT's 300 MB, NLLB-200-distilled-600M's 2.5 GB in float32 is not.
RUN_END_BYTES = 2 << 30
#: How the views are computed; views of another format are computed again. Raise it when
#: :func:`compute_heatmap` changes what it takes (the layer and head, words, labels).
FORMAT = 1


@dataclass(frozen=True)
class HeatmapView:
    """One sentence's attention, as the report draws it."""

    sentence: str
    translation: str
    kind: str  # what the rows read ("cross-attention", or a decoder-only model's kind)
    heading: str  # the kind and the layer/head choice, e.g. "cross-attention · layer 2/2 …"
    view: str  # the layer/head choice alone
    rows: list[str]  # the translation's words
    cols: list[str]  # the source's words
    matrix: list[list[float]]  # rows x cols

    def __post_init__(self) -> None:
        if len(self.matrix) != len(self.rows) or any(len(r) != len(self.cols) for r in self.matrix):
            raise ValueError(
                f"its matrix is not {len(self.rows)} rows of {len(self.cols)} (its labels)"
            )


@dataclass(frozen=True)
class KeptView:
    """A view and the sentence it was asked for (the view's own is the cleaned one)."""

    asked: str
    view: HeatmapView


@dataclass(frozen=True)
class KeptHeatmaps:
    """What ``attention_heatmaps.json`` holds: the views' format, the model's stamp, and
    the views, oldest first."""

    format: int
    model: list[Any]
    views: list[KeptView]


def compute_heatmap(model_dir: Path, sentence: str) -> HeatmapView:
    """Translate ``sentence`` with the model in ``model_dir`` and take its attention, by
    words (loads torch and the model)."""
    from workbench.core.attention.extract import load_attention_model

    amap = load_attention_model(str(model_dir)).map(sentence)
    view = amap.view(words=True)
    return HeatmapView(
        sentence=amap.sentence,
        translation=amap.translation,
        kind=amap.kind,
        heading=amap.heading(view),
        view=view.title,
        rows=list(view.row_labels),
        cols=list(view.col_labels),
        matrix=[[float(v) for v in row] for row in view.matrix.tolist()],
    )


def model_stamp(model_dir: Path) -> list[list[Any]]:
    """What says the model folder is the one a view came from: what it holds, each file's
    name, size and content digest, whenever and however it was written or copied; empty
    when the folder is missing or empty, which no view matches."""
    return folder_fingerprint(model_dir)


def kept_views(run_dir: Path, model_dir: Path, notes: list[str] | None = None) -> list[KeptView]:
    """The views kept for the model as it is now, oldest first: none when the file is
    missing, unreadable, of another format or from another model. A view that does not
    read is left out, to be computed again when asked for, and ``notes`` says so."""
    return _views(run_dir, model_stamp(model_dir), notes)


def _views(run_dir: Path, stamp: list[list[Any]], notes: list[str] | None = None) -> list[KeptView]:
    path = RunFolder(run_dir).heatmaps
    record = read_json_dict(path) if stamp else None
    kept = decode(KeptHeatmaps, record, notes, where=path.name) if record is not None else None
    return kept.views if kept is not None and (kept.format, kept.model) == (FORMAT, stamp) else []


def keep_heatmap(
    run_dir: Path, model_dir: Path, kept: KeptView, stamp: list[list[Any]] | None = None
) -> None:
    """Keep a view for the model as it is now, in place of an older view of its sentence;
    at most :data:`KEPT_VIEWS`, the oldest going first. With ``stamp`` (the model's when
    the view was computed), a model folder that changed since keeps nothing."""
    now = model_stamp(model_dir)
    if not now or (stamp is not None and stamp != now):
        return
    views = [v for v in _views(run_dir, now) if v.asked != kept.asked]
    record = KeptHeatmaps(FORMAT, now, [*views, kept][-KEPT_VIEWS:])
    text = json.dumps(dataclasses.asdict(record), ensure_ascii=False)
    write_text(RunFolder(run_dir).heatmaps, text + "\n")


def sample_heatmap(model_dir: Path, samples: Sequence[Sample]) -> KeptView | None:
    """The view of the first sample, which a report on the run shows unless the console
    translated a sentence; None when there is no sample, the model is too big to load
    again at the end of the run (:func:`small_enough`), or its attention cannot be
    computed (the report then tries again and says why)."""
    if not samples or not small_enough(model_dir):
        return None
    try:
        return KeptView(samples[0].source, compute_heatmap(model_dir, samples[0].source))
    except Exception:  # a figure must never fail the run that trained the model
        return None


def small_enough(model_dir: Path) -> bool:
    """Whether a finishing run loads its model once more, on the CPU, for the view: at
    most :data:`RUN_END_BYTES` of files, and half the RAM available. A bigger model (an
    LLM trained on a GPU) would hold the run's end for its load and decoding, or not fit
    beside what the run holds; its report computes the view when asked."""
    size = sum(model_bytes(model_dir))
    return 0 < size <= RUN_END_BYTES and 2 * size <= psutil.virtual_memory().available


def model_bytes(model_dir: Path) -> list[int]:
    """The size of each file of the model folder (none when it is missing)."""
    sizes = []
    for path in model_dir.iterdir() if model_dir.is_dir() else []:
        with contextlib.suppress(OSError):  # a file that went meanwhile
            if path.is_file():
                sizes.append(path.stat().st_size)
    return sizes


def keep_sample_heatmap(run_dir: Path, model_dir: Path, kept: KeptView | None) -> None:
    """:func:`keep_heatmap` at the end of a run, which a view that cannot be kept (a full
    disk, a torn file) must not fail: the report computes it again."""
    if kept is not None:
        with contextlib.suppress(Exception):
            keep_heatmap(run_dir, model_dir, kept)


def heatmap_view(run_dir: Path, model_dir: Path, sentence: str) -> HeatmapView:
    """The kept view of ``sentence``, else one computed now and kept (loads torch). A run
    folder that cannot be written to (read-only, a full disk) still gets its view; a model
    folder that changed while the view was computed keeps nothing."""
    stamp = model_stamp(model_dir)
    for kept in reversed(_views(run_dir, stamp)):
        if kept.asked == sentence:
            return kept.view
    view = compute_heatmap(model_dir, sentence)
    with contextlib.suppress(OSError):  # not kept: the next report computes it again
        keep_heatmap(run_dir, model_dir, KeptView(sentence, view), stamp)
    return view
