"""A run's attention views kept in its folder: the same numbers as computed, used while the
model folder holds the same model (copied with new modification times too), stale once
its weights changed (of the same shapes too), bounded, and each entry that does not read
said and left out (workbench.core.attention.kept_heatmaps)."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

import pytest

from workbench.core.attention import kept_heatmaps
from workbench.core.attention.kept_heatmaps import (
    HeatmapView,
    KeptView,
    compute_heatmap,
    heatmap_view,
    keep_heatmap,
    keep_sample_heatmap,
    kept_views,
    model_stamp,
    sample_heatmap,
)
from workbench.core.model import fingerprint
from workbench.core.records.run_records import Sample
from workbench.core.run_folder.layout import RunFolder

SENTENCE = "I like to drink tea."


def planted_view(sentence: str, translation: str = "planted") -> HeatmapView:
    """A view no model computed: seeing it back proves the kept one was used."""
    return HeatmapView(
        sentence, translation, "cross-attention", "h", "v", ["a"], ["b", "c"], [[0.25, 0.75]]
    )


@pytest.fixture
def model_copy(tiny_model_dir: Path, tmp_path: Path) -> Path:
    """The session's tiny Marian, copied with its modification times (a test touches it)."""
    return Path(shutil.copytree(tiny_model_dir, tmp_path / "best_model"))


def test_a_view_is_computed_once_then_read_back_as_the_same_numbers(
    model_copy: Path, tmp_path: Path
):
    run = tmp_path
    computed = heatmap_view(run, model_copy, SENTENCE)
    assert computed == compute_heatmap(model_copy, SENTENCE)  # the same function, twice
    assert len(computed.rows) == len(computed.matrix) > 0
    assert [k.asked for k in kept_views(run, model_copy)] == [SENTENCE]
    assert kept_views(run, model_copy)[0].view == computed  # through JSON, bit for bit
    # Kept for this model: the kept view is what comes back, not a new computation.
    keep_heatmap(run, model_copy, KeptView(SENTENCE, planted_view(SENTENCE)))
    assert heatmap_view(run, model_copy, SENTENCE).translation == "planted"


def safetensors_header(weights: Path) -> bytes:
    """A safetensors file's header: its length, then tensor names, dtypes, shapes, offsets."""
    data = weights.read_bytes()
    return data[: 8 + int.from_bytes(data[:8], "little")]


def new_weights_of_the_same_shapes(model: Path) -> None:
    """Save the model's weights again, each changed, as a resumed run saves a new best
    model: the header and the file's size stay as they were."""
    from safetensors import safe_open
    from safetensors.numpy import load_file, save_file

    weights = model / "model.safetensors"
    header, size = safetensors_header(weights), weights.stat().st_size
    with safe_open(str(weights), "np") as f:
        metadata = f.metadata()
    tensors = load_file(str(weights))
    save_file({k: v * 1.5 + 0.25 for k, v in tensors.items()}, str(weights), metadata=metadata)
    assert (safetensors_header(weights), weights.stat().st_size) == (header, size)


def copied_with_new_times(source: Path, target: Path) -> Path:
    """``source`` copied as ``cp -r`` and ``scp -r`` copy it: the files, not their times."""
    copy = Path(shutil.copytree(source, target, copy_function=shutil.copy))
    for path in copy.rglob("*"):
        os.utime(path, ns=(path.stat().st_atime_ns, path.stat().st_mtime_ns + 10**9))
    return copy


def test_a_run_folder_copied_with_new_times_keeps_its_views(model_copy: Path, tmp_path: Path):
    run = tmp_path / "run"
    model = Path(shutil.copytree(model_copy, run / "best_model"))
    keep_heatmap(run, model, KeptView(SENTENCE, planted_view(SENTENCE)))
    copy = copied_with_new_times(run, tmp_path / "copied")
    assert [k.asked for k in kept_views(copy, copy / "best_model")] == [SENTENCE]
    assert heatmap_view(copy, copy / "best_model", SENTENCE).translation == "planted"


def test_new_weights_of_the_same_shapes_make_the_kept_views_stale(model_copy: Path, tmp_path: Path):
    keep_heatmap(tmp_path, model_copy, KeptView(SENTENCE, planted_view(SENTENCE)))
    stamp = model_stamp(model_copy)
    new_weights_of_the_same_shapes(model_copy)
    assert model_stamp(model_copy) != stamp
    assert kept_views(tmp_path, model_copy) == []
    view = heatmap_view(tmp_path, model_copy, SENTENCE)
    assert view.translation != "planted"
    assert view == compute_heatmap(model_copy, SENTENCE)


def test_a_big_weights_file_is_told_apart_by_its_header_and_sampled_blocks(
    model_copy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    weights = model_copy / "model.safetensors"
    monkeypatch.setattr(fingerprint, "WHOLE_FILE_BYTES", weights.stat().st_size // 4)
    monkeypatch.setattr(fingerprint, "BLOCK_BYTES", 512)  # a few blocks, not the whole file
    stamp = model_stamp(model_copy)
    whole = hashlib.sha256(weights.read_bytes()).hexdigest()
    assert [name for name, _, digest in stamp if digest == whole] == []  # sampled, not whole
    assert model_stamp(copied_with_new_times(model_copy, tmp_path / "copied")) == stamp
    new_weights_of_the_same_shapes(model_copy)
    assert model_stamp(model_copy) != stamp


def test_the_first_sample_is_drawn_and_a_model_that_cannot_be_or_is_too_big_is_not(
    model_copy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    sample = Sample(SENTENCE, "我喜欢喝茶。", "", "", 0.0, 0.0)
    kept = sample_heatmap(model_copy, [sample])
    assert kept is not None
    assert kept.asked == SENTENCE
    assert kept.view == compute_heatmap(model_copy, SENTENCE)
    assert sample_heatmap(model_copy, []) is None
    assert sample_heatmap(tmp_path / "no_model", [sample]) is None
    monkeypatch.setattr(kept_heatmaps, "RUN_END_BYTES", 1_000)  # a model too big to load
    assert sample_heatmap(model_copy, [sample]) is None


def test_views_are_bounded_and_a_sentence_asked_again_replaces_its_view(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    model = tmp_path / "model"
    model.mkdir()
    (model / "config.json").write_text("{}", encoding="utf-8")
    monkeypatch.setattr(kept_heatmaps, "KEPT_VIEWS", 3)
    for name in ("a", "b", "c", "d"):
        keep_heatmap(tmp_path, model, KeptView(name, planted_view(name)))
    assert [k.asked for k in kept_views(tmp_path, model)] == ["b", "c", "d"]
    keep_heatmap(tmp_path, model, KeptView("b", planted_view("b", "again")))
    assert [(k.asked, k.view.translation) for k in kept_views(tmp_path, model)] == [
        ("c", "planted"),
        ("d", "planted"),
        ("b", "again"),
    ]


def test_an_entry_that_does_not_read_is_said_and_left_out(tmp_path: Path):
    model = tmp_path / "model"
    model.mkdir()
    (model / "config.json").write_text("{}", encoding="utf-8")
    good = {"asked": "a", "view": vars(planted_view("a"))}
    no_matrix = {
        "asked": "b",
        "view": {k: v for k, v in vars(planted_view("b")).items() if k != "matrix"},
    }
    ragged = {"asked": "c", "view": {**vars(planted_view("c")), "matrix": [[0.5]]}}
    record = {
        "format": kept_heatmaps.FORMAT,
        "model": model_stamp(model),
        "views": [good, no_matrix, ragged],
        "planted_key": 1,
    }
    RunFolder(tmp_path).heatmaps.write_text(json.dumps(record), encoding="utf-8")
    notes: list[str] = []
    assert [k.asked for k in kept_views(tmp_path, model, notes)] == ["a"]
    # The run records' one decoder says it (a dropped view is also named as ill-typed).
    said = [n for n in notes if "is ill-typed" not in n]
    assert said == [
        "attention_heatmaps.json.views[1].view: no 'matrix'; the record is read as missing",
        "attention_heatmaps.json.views[1]: an ill-formed record dropped",
        "attention_heatmaps.json.views[2].view: its matrix is not 1 rows of 2 (its labels); "
        "the record is read as missing",
        "attention_heatmaps.json.views[2]: an ill-formed record dropped",
        "attention_heatmaps.json: unknown key 'planted_key' ignored",
    ]
    RunFolder(tmp_path).heatmaps.write_text("{torn", encoding="utf-8")
    assert kept_views(tmp_path, model) == []


def test_no_view_is_kept_for_a_missing_model_another_format_or_a_model_changed_meanwhile(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    model = tmp_path / "model"
    keep_heatmap(tmp_path, model, KeptView("a", planted_view("a")))  # no model folder
    assert not RunFolder(tmp_path).heatmaps.exists()
    model.mkdir()
    (model / "config.json").write_text("{}", encoding="utf-8")
    computed_with = model_stamp(model)
    (model / "config.json").write_text('{"changed": 1}', encoding="utf-8")
    keep_heatmap(tmp_path, model, KeptView("a", planted_view("a")), computed_with)
    assert not RunFolder(tmp_path).heatmaps.exists()
    keep_heatmap(tmp_path, model, KeptView("a", planted_view("a")))
    assert [k.asked for k in kept_views(tmp_path, model)] == ["a"]
    monkeypatch.setattr(kept_heatmaps, "FORMAT", kept_heatmaps.FORMAT + 1)
    assert kept_views(tmp_path, model) == []


def test_the_end_of_a_run_keeps_its_view_over_a_torn_file_and_survives_an_unwritable_one(
    tmp_path: Path,
):
    model = tmp_path / "model"
    model.mkdir()
    (model / "config.json").write_text("{}", encoding="utf-8")
    RunFolder(tmp_path).heatmaps.write_bytes(b"\xff\xfe{torn")  # not even UTF-8
    keep_sample_heatmap(tmp_path, model, KeptView("a", planted_view("a")))
    assert [k.asked for k in kept_views(tmp_path, model)] == ["a"]
    RunFolder(tmp_path).heatmaps.unlink()
    RunFolder(tmp_path).heatmaps.mkdir()  # cannot be written as a file
    keep_sample_heatmap(tmp_path, model, KeptView("b", planted_view("b")))
    keep_sample_heatmap(tmp_path, model, None)
    assert RunFolder(tmp_path).heatmaps.is_dir()
