"""Two processes on CPU (gloo) through torchrun: one run, rank 0's outputs, same metrics."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.helpers import torchrun
from tests.helpers.runs import tiny_toml
from tests.helpers.torchrun import failure


def launch(
    work: Path, batch: int, procs: int, cache: Path, **settings
) -> subprocess.CompletedProcess:
    """``train`` in ``work``, as one process or under torchrun with ``procs`` ranks."""
    toml = tiny_toml(epochs=2, batch_size=batch, num_beams=1, **settings)
    return torchrun.launch(work, procs, cache, toml)


def losses(run: Path) -> list[float]:
    rows = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]
    return [r["loss"] for r in rows if r["event"] == "TrainStep"]


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("ddp")
    cache = root / "cache"
    # Not the default 1800 s, so the check below cannot pass by accident.
    two = launch(root / "two", batch=8, procs=2, cache=cache, ddp_timeout=1234)
    one = launch(root / "one", batch=16, procs=1, cache=cache)
    return root, two, one


def test_two_processes_finish_with_one_set_of_outputs(runs):
    root, two, _ = runs
    assert two.returncode == 0, failure(root / "two", two)
    folders = list((root / "two" / "translation_output" / "runs").iterdir())
    assert len(folders) == 1
    out = two.stdout
    # rank 0 printed alone
    assert out.count("[data]") == 1
    assert out.count("[done]") == 1
    assert "effective batch size 16 (8 per process x 2 processes)" in out
    # Read back from torch's process group: created with the setting, not NCCL/gloo's default.
    assert "processes wait up to 1234 s for each other (ddp_timeout)" in out
    assert out.count("epoch 1 done") == 1
    from workbench.core.translate.translator import Translator

    translator = Translator.from_pretrained(str(root / "two" / "translation_output" / "best_model"))
    assert isinstance(translator.translate("I like tea.").text, str)


def test_two_processes_match_one_with_the_same_global_batch(runs):
    root, two, one = runs
    assert two.returncode == 0, failure(root / "two", two)
    assert one.returncode == 0, one.stderr[-3000:]
    run2 = next((root / "two" / "translation_output" / "runs").iterdir())
    run1 = next((root / "one" / "translation_output" / "runs").iterdir())
    s2 = json.loads((run2 / "summary.json").read_text())
    s1 = json.loads((run1 / "summary.json").read_text())
    assert s2["global_step"] == s1["global_step"] == 18
    assert s2["validation_pairs"] == s1["validation_pairs"]
    assert s2["before"] == s1["before"]  # the same untrained model, scored once
    assert len(s2["epochs"]) == len(s1["epochs"]) == 2  # evaluated once per epoch
    l2, l1 = losses(run2), losses(run1)
    assert len(l2) == len(l1) == 18
    for a, b in zip(l2, l1, strict=True):
        assert abs(a - b) <= 0.02 * b, (l2, l1)
    for e2, e1 in zip(s2["epochs"], s1["epochs"], strict=True):
        assert abs(e2["eval_loss"] - e1["eval_loss"]) <= 0.02 * e1["eval_loss"]
    assert abs(s2["test"]["bleu_after"] - s1["test"]["bleu_after"]) <= 1.0
