"""``workbench lab decoding|attention|cache`` on the tiny Marian: the lines each study
prints, the study saved into the model's run folder, and a bad value in one line. The
studies themselves are tested in tests/unit/test_lab_*.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from workbench.core.lab.attention_kinds import CROSS, DECODER, ENCODER, AttentionKinds
from workbench.core.lab.decoding_run import decoding_study
from workbench.core.lab.kv_cache import CacheStudy
from workbench.core.records.typed import decode
from workbench.core.run_folder.layout import RunFolder
from workbench.errors import WorkbenchError

SENTENCE = "I like tea."


def test_cli_without_a_test_set_is_one_line(cli, tiny_model_dir: Path):
    done = cli("lab", "decoding", "--model", str(tiny_model_dir))
    assert done.returncode == 2
    err = done.stderr
    assert "pass --run RUN_DIR" in err
    assert err.count("\n") == 1


def test_a_limit_under_one_is_refused_by_the_study_itself(cli, tiny_model_dir: Path):
    # The core checks it (the CLI and the Lab pane both call it), before any model loads.
    with pytest.raises(WorkbenchError, match="limit must be at least 1, got 0"):
        decoding_study(str(tiny_model_dir), limit=0)
    done = cli("lab", "decoding", "--model", str(tiny_model_dir), "--limit", "-3")
    assert done.returncode == 2
    assert "got -3" in done.stderr


def test_cli_prints_three_titled_heatmaps_and_the_head_table(cli, tiny_model_dir: Path):
    done = cli("lab", "attention", "--model", str(tiny_model_dir), SENTENCE)
    assert done.returncode == 0
    out = done.stdout
    titles = [
        f"{kind} · mean of 1 layer, mean of 2 heads · pieces" for kind in (ENCODER, DECODER, CROSS)
    ]
    positions = [out.index(title) for title in titles]
    assert positions == sorted(positions)
    assert "source:      I like tea." in out
    assert "\x1b[" not in out
    # Each map's legend names its own axes (the renderer's default names cross-attention's).
    assert out.count("shade = % of the row's attention") == 3
    from workbench.core.attention.extract import load_attention_model
    from workbench.core.lab.attention_kinds import attention_kinds

    kinds = attention_kinds(load_attention_model(str(tiny_model_dir)), SENTENCE)
    assert all(k.axes in out for k in kinds.kinds)
    assert "rows: translation, columns: source" not in out
    assert "per head" in out
    assert "agreement" in out
    assert "closest to the mean view" in out
    assert "saved" not in out  # the tiny model names no run folder


def test_cli_writes_the_json_into_the_models_run_folder(cli, tiny_model_dir: Path, tmp_path: Path):
    import shutil

    model = tmp_path / "best_model"
    shutil.copytree(tiny_model_dir, model)
    run = tmp_path / "runs" / "run-1"
    run.mkdir(parents=True)
    (model / "workbench.json").write_text(
        json.dumps({"target_label": None, "run_dir": str(run)}), encoding="utf-8"
    )
    done = cli("lab", "attention", "--model", str(model), SENTENCE)
    assert done.returncode == 0
    assert f"saved {RunFolder(run).lab_study('attention')}" in done.stdout
    saved = json.loads(RunFolder(run).lab_study("attention").read_text(encoding="utf-8"))
    assert saved["sentence"] == SENTENCE
    assert len(saved["kinds"]) == 3
    notes: list[str] = []
    study = decode(AttentionKinds, saved, notes)  # read back typed: the same file again
    assert study is not None
    assert notes == []  # each kind's layers and heads are derived again, not unknown
    assert study.to_dict() == saved
    assert study.heads[0].layer == saved["heads"][0]["layer"] - 1
    assert decode(AttentionKinds, {**saved, "kinds": saved["kinds"][::2]}, notes) is None
    assert "has no 'masked decoder self-attention' map" in notes[-1]


def test_cli_empty_sentence_is_one_clear_line(cli, tiny_model_dir: Path):
    done = cli("lab", "attention", "--model", str(tiny_model_dir), "   ")
    assert done.returncode == 2
    err = done.stderr.strip()
    assert len(err.splitlines()) == 1, err
    assert "empty sentence" in err, err


def test_cli_shows_one_layer_and_head_of_each_kind(cli, tiny_model_dir: Path):
    model = str(tiny_model_dir)
    done = cli(
        "lab", "attention", "--model", model, "--layer", "1", "--head", "2", "--words", SENTENCE
    )
    assert done.returncode == 0
    out = done.stdout
    for kind in (ENCODER, DECODER, CROSS):
        assert f"{kind} · layer 1/1, head 2/2 · words" in out
    done = cli("lab", "attention", "--model", model, "--layer", "5", SENTENCE)
    assert done.returncode == 2
    assert "--layer 5 does not exist" in done.stderr


def test_the_command_prints_the_tables_chart_and_saves_to_the_run(
    cli, tiny_model_dir: Path, tmp_path: Path
) -> None:
    import shutil

    model = tmp_path / "translation_output" / "best_model"
    shutil.copytree(tiny_model_dir, model)
    run = tmp_path / "translation_output" / "runs" / "r1"
    run.mkdir(parents=True)
    # Relative, as a run records it: found from the folders above the model.
    (model / "workbench.json").write_text(
        json.dumps({"target_label": None, "run_dir": "translation_output/runs/r1"}),
        encoding="utf-8",
    )

    done = cli("lab", "cache", "--model", str(model), "--lengths", "2", "4", "--repeats", "1")
    assert done.returncode == 0
    out = done.stdout
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


def test_the_command_without_a_run_folder_writes_nothing(cli, tiny_model_dir: Path) -> None:
    done = cli("lab", "cache", "--model", str(tiny_model_dir), "--lengths", "2", "--repeats", "1")
    assert done.returncode == 0
    assert "saved" not in done.stdout
    assert not RunFolder(tiny_model_dir).lab_study("cache").exists()
