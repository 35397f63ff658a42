"""The KV-cache study on a real tiny model: same output, the formula's sizes, the command."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from workbench.core.lab.kv_cache import (
    CacheStudy,
    cache_study,
    cross_attention_floats,
    self_attention_floats,
)
from workbench.core.records.typed import decode
from workbench.core.run_folder.layout import RunFolder
from workbench.errors import WorkbenchError


@pytest.fixture(scope="module")
def study(tiny_model_dir: Path):
    """One quick study of the tiny model (1 layer, d=32, 2 heads)."""
    return cache_study(
        str(tiny_model_dir),
        sentences=["I like tea.", "Where is it?"],
        lengths=(1, 3, 8, 16),
        repeats=1,
    )


def test_the_cache_does_not_change_the_output(study) -> None:
    assert [row.new_tokens for row in study.timings] == [1, 3, 8, 16]
    assert all(row.identical for row in study.timings)
    assert all(row.ms_cached > 0 and row.ms_uncached > 0 for row in study.timings)


def test_measured_cache_floats_equal_the_formula(study, tiny_model_dir: Path) -> None:
    from workbench.core.model.load import load_model_and_tokenizer

    _, tokenizer = load_model_and_tokenizer(str(tiny_model_dir))
    source_tokens = len(tokenizer("I like tea.")["input_ids"])  # no label; </s> counted
    assert (study.layers, study.d_model, study.heads, study.head_dim) == (1, 32, 2, 16)
    assert study.source_tokens == source_tokens
    assert study.dtype == "float32"
    for size in study.sizes:
        t = size.steps
        assert size.positions == t  # start token + first t-1 outputs
        assert size.self_measured == 2 * 1 * t * 32 == self_attention_floats(1, t, 32)
        assert size.cross_measured == 2 * 1 * source_tokens * 32
        assert size.cross_measured == cross_attention_floats(1, source_tokens, 32)
        assert size.total_bytes == 4 * (size.self_measured + size.cross_measured)
    assert study.agrees


def test_to_dict_is_json_with_the_derived_numbers(study) -> None:
    data = json.loads(json.dumps(study.to_dict()))
    assert data["agrees"] is True
    assert data["identical"] is True
    assert data["sizes"][0]["self_formula"] == data["sizes"][0]["self_measured"]
    assert "speedup" in data["timings"][0]


def test_bad_settings_say_what_to_do(tiny_model_dir: Path) -> None:
    with pytest.raises(WorkbenchError, match=r"output length must be 1\.\.8191, got 0"):
        cache_study(str(tiny_model_dir), lengths=(0,))
    with pytest.raises(WorkbenchError, match="repeats must be at least 1"):
        cache_study(str(tiny_model_dir), repeats=0)


def test_the_command_prints_the_tables_chart_and_saves_to_the_run(
    tiny_model_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import shutil

    from workbench.cli import main

    model = tmp_path / "translation_output" / "best_model"
    shutil.copytree(tiny_model_dir, model)
    run = tmp_path / "translation_output" / "runs" / "r1"
    run.mkdir(parents=True)
    # Relative, as a run records it: found from the folders above the model.
    (model / "workbench.json").write_text(
        json.dumps({"target_label": None, "run_dir": "translation_output/runs/r1"}),
        encoding="utf-8",
    )

    assert (
        main(["lab", "cache", "--model", str(model), "--lengths", "2", "4", "--repeats", "1"]) == 0
    )
    out = capsys.readouterr().out
    assert "ms/token cached" in out
    assert "formula: self-attention 2*L*t*d = 64*t floats" in out
    assert "formula and measured cache agree at every t" in out
    assert "ms per token against t" in out
    saved = json.loads(RunFolder(run).lab_study("cache").read_text(encoding="utf-8"))
    assert [row["new_tokens"] for row in saved["timings"]] == [2, 4]
    notes: list[str] = []
    study = decode(CacheStudy, saved, notes)  # read back typed, derived values recomputed
    assert study is not None
    assert notes == []
    assert [t.new_tokens for t in study.timings] == [2, 4]
    assert study.to_dict() == saved


def test_the_command_without_a_run_folder_writes_nothing(
    tiny_model_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from workbench.cli import main

    assert (
        main(["lab", "cache", "--model", str(tiny_model_dir), "--lengths", "2", "--repeats", "1"])
        == 0
    )
    assert "saved" not in capsys.readouterr().out
    assert not RunFolder(tiny_model_dir).lab_study("cache").exists()
