"""The Lab's three attentions (workbench.core.lab.attention_kinds) on the tiny model."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from workbench.cli import main
from workbench.core.attention.extract import load_attention_model
from workbench.core.lab.attention_kinds import (
    CROSS,
    DECODER,
    ENCODER,
    AttentionKinds,
    attention_kinds,
    row_entropy_bits,
)
from workbench.core.records.typed import decode
from workbench.core.run_folder.layout import RunFolder
from workbench.errors import WorkbenchError

SENTENCE = "I like tea."


@pytest.fixture(scope="module")
def kinds(tiny_model_dir: Path) -> AttentionKinds:
    return attention_kinds(load_attention_model(str(tiny_model_dir)), SENTENCE)


def test_decoder_self_attention_is_causal_and_rows_sum_to_one(kinds: AttentionKinds):
    weights = kinds.decoder.weights
    n = len(kinds.decoder.row_tokens)
    assert weights.shape[2:] == (n, n)
    assert n >= 2
    above = np.triu(np.ones((n, n), dtype=bool), k=1)
    for layer in range(weights.shape[0]):
        for head in range(weights.shape[1]):
            assert (weights[layer, head][above] == 0.0).all(), (layer, head)  # exactly 0
            assert (weights[layer, head][~above] > 0.0).all(), (layer, head)  # the past is seen
    np.testing.assert_allclose(weights.sum(axis=-1), 1.0, atol=1e-5)
    assert kinds.decoder.col_tokens[0] == "<start>"
    assert kinds.decoder.col_tokens[1:] == kinds.decoder.row_tokens[:-1]  # reads what it wrote


def test_encoder_self_attention_is_square_over_the_source(
    kinds: AttentionKinds, tiny_model_dir: Path
):
    from workbench.core.model.load import load_model_and_tokenizer

    model, _ = load_model_and_tokenizer(str(tiny_model_dir))
    encoder = kinds.encoder
    n = len(encoder.col_tokens)
    assert encoder.row_tokens == encoder.col_tokens == kinds.cross.col_tokens
    assert encoder.col_tokens[-1] == "</s>"
    assert encoder.weights.shape == (
        model.config.encoder_layers,
        model.config.encoder_attention_heads,
        n,
        n,
    )
    np.testing.assert_allclose(encoder.weights.sum(axis=-1), 1.0, atol=1e-5)
    assert (encoder.weights > 0).all()  # no mask: every source token sees every other


def test_cross_attention_is_the_heatmaps_number_for_number(
    kinds: AttentionKinds, tiny_model_dir: Path
):
    amap = load_attention_model(str(tiny_model_dir)).map(SENTENCE)
    assert kinds.translation == amap.translation
    assert kinds.cross.row_tokens == amap.target_tokens
    assert kinds.cross.col_tokens == amap.source_tokens
    np.testing.assert_array_equal(kinds.cross.weights, amap.weights)
    view, expected = kinds.cross.view(words=True), amap.view(words=True)
    assert view.col_labels == expected.col_labels
    np.testing.assert_allclose(view.matrix, expected.matrix)


def test_head_table_covers_every_head_within_the_entropy_bounds(kinds: AttentionKinds):
    for kmap in kinds.kinds:
        rows = [h for h in kinds.heads if h.kind == kmap.kind]
        assert len(rows) == kmap.num_layers * kmap.num_heads
        ceiling = math.log2(len(kmap.col_tokens))
        for h in rows:
            assert 0.0 <= h.entropy_bits <= h.uniform_bits + 1e-9 <= ceiling + 1e-9
            if kmap.kind == CROSS:
                assert h.agreement is not None
                assert 0.0 <= h.agreement <= 1.0
            else:
                assert h.agreement is None
    assert [k.kind for k in kinds.kinds] == [ENCODER, DECODER, CROSS]


def test_row_entropy_is_exact_at_the_extremes():
    rows = np.array([[1.0, 0.0, 0.0, 0.0], [0.25, 0.25, 0.25, 0.25], [0.5, 0.5, 0.0, 0.0]])
    np.testing.assert_allclose(row_entropy_bits(rows), [0.0, 2.0, 1.0])


def test_views_and_errors_name_the_right_stack(kinds: AttentionKinds):
    assert kinds.encoder.view().title.startswith("mean of 1 layer, mean of 2 heads")
    with pytest.raises(WorkbenchError, match="1 encoder layer "):
        kinds.encoder.view(layer=3)
    with pytest.raises(WorkbenchError, match="1 decoder layer "):
        kinds.decoder.view(layer=3)
    data = json.loads(json.dumps(kinds.to_dict()))
    assert [k["kind"] for k in data["kinds"]] == [ENCODER, DECODER, CROSS]
    assert len(data["heads"]) == len(kinds.heads)


def test_cli_prints_three_titled_heatmaps_and_the_head_table(tiny_model_dir: Path, capsys):
    assert main(["lab", "attention", "--model", str(tiny_model_dir), SENTENCE]) == 0
    out = capsys.readouterr().out
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


def test_cli_writes_the_json_into_the_models_run_folder(
    tiny_model_dir: Path, tmp_path: Path, capsys
):
    import shutil

    model = tmp_path / "best_model"
    shutil.copytree(tiny_model_dir, model)
    run = tmp_path / "runs" / "run-1"
    run.mkdir(parents=True)
    (model / "workbench.json").write_text(
        json.dumps({"target_label": None, "run_dir": str(run)}), encoding="utf-8"
    )
    assert main(["lab", "attention", "--model", str(model), SENTENCE]) == 0
    assert f"saved {RunFolder(run).lab_study('attention')}" in capsys.readouterr().out
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


def test_cli_empty_sentence_is_one_clear_line(tiny_model_dir: Path, capsys):
    assert main(["lab", "attention", "--model", str(tiny_model_dir), "   "]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    assert "empty sentence" in err, err


def test_cli_shows_one_layer_and_head_of_each_kind(tiny_model_dir: Path, capsys):
    assert (
        main(
            [
                "lab",
                "attention",
                "--model",
                str(tiny_model_dir),
                "--layer",
                "1",
                "--head",
                "2",
                "--words",
                SENTENCE,
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    for kind in (ENCODER, DECODER, CROSS):
        assert f"{kind} · layer 1/1, head 2/2 · words" in out
    assert main(["lab", "attention", "--model", str(tiny_model_dir), "--layer", "5", SENTENCE]) == 2
    assert "--layer 5 does not exist" in capsys.readouterr().err
