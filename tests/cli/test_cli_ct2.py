"""``workbench export --ctranslate2`` and ``translate --backend``: the export then the same
greedy output on both backends, one line for a missing export, a missing package or a bad
value, and a help that imports nothing heavy. The CTranslate2 path itself is tested in
tests/unit/test_ct2_*.py."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from tests.helpers.cli import imports_of


def test_cli_export_then_translate_with_ct2(cli, tiny_model_dir: Path, tmp_path: Path):
    pytest.importorskip("ctranslate2")
    model_dir = tmp_path / "model"
    shutil.copytree(tiny_model_dir, model_dir, ignore=shutil.ignore_patterns("ct2-*"))
    done = cli(
        "export",
        "--ctranslate2",
        "--model",
        str(model_dir),
        "--quantization",
        "float32",
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert (model_dir / "ct2-float32" / "model.bin").is_file()
    assert "translate --backend ct2" in done.stdout
    fast = cli(
        "translate",
        "--backend",
        "ct2",
        "--model",
        str(model_dir),
        "--num-beams",
        "1",
        cwd=tmp_path,
        input="I like tea.\nHello.\n",
    )
    slow = cli(
        "translate",
        "--backend",
        "transformers",
        "--model",
        str(model_dir),
        "--num-beams",
        "1",
        cwd=tmp_path,
        input="I like tea.\nHello.\n",
    )
    assert fast.returncode == 0, fast.stderr + slow.stderr
    assert slow.returncode == 0, fast.stderr + slow.stderr
    assert fast.stdout == slow.stdout
    assert len(fast.stdout.splitlines()) == 2
    assert "backend: ctranslate2 float32" in fast.stderr
    assert "backend: transformers" in slow.stderr


def test_ct2_without_an_export_says_how_to_make_one(cli, tiny_model_dir: Path):
    pytest.importorskip("ctranslate2")
    done = cli("translate", "--backend", "ct2", "--model", str(tiny_model_dir), "hi")
    err = done.stderr.strip()
    assert done.returncode == 2
    assert len(err.splitlines()) == 1
    assert f"workbench export --ctranslate2 --model {tiny_model_dir}" in err


def test_missing_package_is_one_line(cli, tiny_model_dir: Path, monkeypatch):
    monkeypatch.setitem(sys.modules, "ctranslate2", None)  # import ctranslate2 now fails
    for argv in (
        ["translate", "--backend", "ct2", "--model", str(tiny_model_dir), "hi"],
        ["export", "--ctranslate2", "--model", str(tiny_model_dir)],
    ):
        done = cli(*argv)
        err = done.stderr.strip()
        assert done.returncode == 2, err
        assert len(err.splitlines()) == 1, err
        assert "ctranslate2 is not installed" in err
        assert "'nmt-workbench[ct2]'" in err


def test_export_refuses_a_hub_id_and_bad_values(cli, tmp_path: Path):
    done = cli("export", "--ctranslate2", cwd=tmp_path)  # the default model, not trained yet
    assert done.returncode == 2
    assert "no saved model at translation_output/best_model" in done.stderr
    done = cli("export", "--ctranslate2", "--model", "Helsinki-NLP/opus-mt-en-zh", cwd=tmp_path)
    assert done.returncode == 2
    assert "looks like a Hub id" in done.stderr
    done = cli("export", "--model", str(tmp_path), cwd=tmp_path)
    assert done.returncode == 2
    assert "--ctranslate2" in done.stderr
    done = cli("export", "--ctranslate2", "--model", str(tmp_path / "nowhere"), cwd=tmp_path)
    assert done.returncode == 2
    assert "does not exist" in done.stderr


def test_help_imports_neither_torch_nor_ctranslate2():
    """A new interpreter: what the command imports is the point."""
    helped = imports_of("export", "--help", modules=("torch", "ctranslate2", "transformers"))
    assert helped.returncode == 0, helped.stderr
    assert helped.imported == []
    assert "--quantization" in helped.stdout
