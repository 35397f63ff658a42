"""A run's precision (workbench.core.train.run_model.Precision): resolved from the flags and
the device, recorded in config.json and summary.json, handed to the Trainer's arguments."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers.paths import REPO
from tests.helpers.runs import tiny_config
from workbench.core.records.run_records import Precision
from workbench.core.train.run_model import resolve_precision
from workbench.errors import WorkbenchError

RECORDED_RUN = REPO / "tests" / "fixtures" / "tiny_runs" / "20260102-000000-demo"


@pytest.fixture
def no_bf16_gpu(monkeypatch: pytest.MonkeyPatch) -> None:
    """The answers of a machine without a bf16 GPU, wherever the tests run."""
    from workbench.core.model import load

    monkeypatch.setattr(load, "bf16_supported", lambda: False)


def test_on_the_cpu_training_is_fp32_without_tf32(no_bf16_gpu: None):
    precision = resolve_precision(tiny_config(), "cpu")
    assert precision == Precision(device="cpu", training="fp32", training_tf32=False)
    assert not precision.fp16
    assert not precision.bf16
    assert precision.decoding == "fp32, TF32 off"


def test_bf16_on_the_cpu_when_asked_and_fp16_refused_without_cuda(no_bf16_gpu: None):
    precision = resolve_precision(tiny_config(bf16=True), "cpu")
    assert precision.training == "bf16"
    assert precision.bf16
    assert not precision.fp16
    with pytest.raises(WorkbenchError, match="--fp16 needs a CUDA GPU"):
        resolve_precision(tiny_config(fp16=True), "cpu")
    with pytest.raises(WorkbenchError, match="not on mps"):
        resolve_precision(tiny_config(bf16=True), "mps")


def test_a_bf16_gpu_trains_in_bf16_with_tf32(monkeypatch: pytest.MonkeyPatch):
    from workbench.core.model import load

    monkeypatch.setattr(load, "bf16_supported", lambda: True)
    assert resolve_precision(tiny_config(), "cuda") == Precision("cuda", "bf16", True)
    fp16 = resolve_precision(tiny_config(fp16=True), "cuda")
    assert fp16.training == "fp16"
    assert fp16.fp16
    assert not fp16.bf16
    assert fp16.training_tf32


def test_the_recorded_form_is_the_one_runs_wrote(no_bf16_gpu: None):
    recorded = resolve_precision(tiny_config(), "cpu").to_dict()
    assert list(recorded) == ["device", "training", "training_tf32", "decoding"]
    for name in ("config.json", "summary.json"):
        written = json.loads((RECORDED_RUN / name).read_text(encoding="utf-8"))["precision"]
        assert written == recorded
    assert json.loads(json.dumps(recorded)) == recorded  # survives the JSON round trip


def test_training_arguments_follow_the_precision(tmp_path: Path, no_bf16_gpu: None):
    from workbench.core.train.recipe import training_arguments

    config = tiny_config()
    plain = training_arguments(config, tmp_path, resolve_precision(config, "cpu"))
    assert (plain.fp16, plain.bf16, plain.use_cpu) == (False, False, True)
    bf16 = training_arguments(config, tmp_path, Precision("cpu", "bf16", False))
    assert (bf16.fp16, bf16.bf16) == (False, True)
