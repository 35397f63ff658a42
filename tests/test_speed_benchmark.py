"""The speed benchmark's code paths at toy size: correctness only, never timing."""

from __future__ import annotations

import dataclasses
import importlib
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO

TINY = {
    "d_model": 16,
    "encoder_layers": 1,
    "decoder_layers": 1,
    "encoder_attention_heads": 2,
    "decoder_attention_heads": 2,
    "encoder_ffn_dim": 32,
    "decoder_ffn_dim": 32,
}


def load_speed():
    sys.path.insert(0, str(REPO / "benchmarks"))  # as benchmarks/speed.py does
    return importlib.import_module("speed_bench")


def toy_mode(speed):
    return speed.Mode(
        "quick",
        epoch=64,
        train_batches=1,
        validation_pool=4,
        validation_batches=None,
        reps=1,
        check_batch=2,
        check_steps=2,
        threads=1,
    )


@pytest.fixture(scope="module")
def speed():
    import torch

    # One thread: on a shared 2-core machine, two threads wait on each other at every
    # one of the toy model's many tiny ops (seconds per test instead of a fraction).
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield load_speed()
    torch.set_num_threads(threads)


@pytest.fixture(scope="module")
def workdir(speed, tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("speed")
    speed.prepare_workdir(folder, toy_mode(speed), shape=TINY)
    return folder


def test_lengths_follow_the_model_and_stay_in_range(speed):
    pairs = speed.make_pairs(2000, seed=3)
    sources = [len(s) + 1 for s, _ in pairs]
    targets = [len(t) + 1 for _, t in pairs]
    assert min(sources + targets) >= 3 and max(sources + targets) <= 128
    stats = speed.length_stats(sources)
    assert 26 <= stats["median"] <= 30  # lognormal median 28
    assert 30 <= stats["mean"] <= 36  # and a long tail: mean above median
    assert speed.make_pairs(5, seed=3) == pairs[:5]  # seeded


def test_strata_are_whole_length_sorted_batches_that_sort_back_the_same(speed):
    pool = speed.make_pairs(800, seed=5)
    kept = speed.length_strata(pool, 3, seed=6)
    assert len(kept) == 48 and len(set(map(str, kept))) == 48
    ranked = sorted(pool, key=lambda p: len(p[0]), reverse=True)
    resorted = sorted(kept, key=lambda p: len(p[0]), reverse=True)
    widths = [len(resorted[i][0]) for i in (0, 16, 32)]  # each batch's longest source
    assert widths == [len(ranked[r * 16][0]) for r in (8, 25, 41)]  # ranks (i + 0.5) * 50 / 3
    assert kept != resorted  # stored shuffled: the reference's dataset order is random


def test_planned_batches_come_from_the_workbench_sampler_and_span_the_widths(speed, workdir):
    model, _, _ = speed.load_model(workdir, "cpu")
    epoch = speed.make_lengths(6400, seed=7)  # big enough for 800-pair megabatches
    kept, widths = speed.plan_training(model, epoch, 4, workdir, "cpu")
    for side in ("source", "target"):  # as wide as the whole epoch's batches on average
        assert abs(widths[f"kept_{side}"] - widths[f"epoch_{side}"]) < 4
    batches = [[epoch[i] for i in kept[k : k + 16]] for k in range(0, 64, 16)]
    sizes = [max(s for s, _ in b) + max(t for _, t in b) for b in batches]
    sources = [[s for s, _ in b] for b in batches]
    assert sizes == sorted(sizes) and sizes[0] < sizes[-1]  # small to large
    assert max(max(b) - min(b) for b in sources) <= 6  # grouped by the source length


def test_tokenizer_maps_words_to_their_ids(speed):
    tokenizer = speed.build_tokenizer()
    assert tokenizer("t5 t64999")["input_ids"] == [5, 64999, speed.EOS]
    padded = tokenizer(["t5"], padding="max_length", max_length=4)["input_ids"][0]
    assert padded == [5, speed.EOS, speed.PAD, speed.PAD]


@pytest.mark.parametrize("beams", [1, 4])
def test_generation_ends_at_each_reference_length(speed, workdir: Path, beams: int):
    model, tokenizer, data = speed.load_model(workdir, "cpu")
    sources = [s for s, _ in data["validation"]]
    wanted = [len(tokenizer(text_target=t)["input_ids"]) for _, t in data["validation"]]
    batch = tokenizer(sources, return_tensors="pt", padding=True)
    out = model.generate(**batch, num_beams=beams, max_length=200)
    lengths = [int((row[1:] != speed.PAD).sum()) for row in out]  # after the start token
    assert lengths == wanted
    assert all(int(row[n]) == speed.EOS for row, n in zip(out, wanted, strict=True))


def test_padding_to_128_and_per_batch_give_the_same_losses(speed, workdir: Path):
    found = speed.child_check(workdir, "cpu", batch=2, steps=2)
    losses = found["losses"]
    assert all(10 < v < 12 for v in losses["reference"])  # ln(65001) = 11.08 at random init
    assert found["max_abs_diff"] < 1e-4
    # The workbench's loss went through its real-token projection, the reference's did not.
    assert found["projected_rows"]["workbench"] == found["real_tokens"] > 0
    assert found["projected_rows"]["reference"] == 2 * 2 * 128


def test_model_flops_count_real_tokens_only(speed, workdir: Path):
    model, _, _ = speed.load_model(workdir, "cpu")
    one = speed.model_flops(model, [(10, 10)])
    assert speed.model_flops(model, [(10, 10), (10, 10)]) == pytest.approx(2 * one)
    assert speed.model_flops(model, [(20, 10)]) > one


@pytest.mark.slow
def test_one_repetition_at_toy_size_writes_the_report(speed, workdir: Path, tmp_path: Path):
    """Every phase runs (in-process here) and RESULTS.md renders from what they return."""
    runs = {
        arm: {
            "train": [speed.child_train(arm, workdir, "cpu")],
            "eval": [speed.child_eval(arm, workdir, "cpu")],
        }
        for arm in ("reference", "workbench")
    }
    # The workdir fixture keeps only the files; the same seeds give its data summary again.
    data = speed.prepare_workdir(tmp_path / "again", toy_mode(speed), shape=TINY)
    ref, wb = runs["reference"]["train"][0], runs["workbench"]["train"][0]
    assert ref["padded_widths"] == [[128, 128]]  # the reference pads every batch to 128
    assert ref["projected_rows"] == 16 * 128
    assert wb["projected_rows"] == data["train_target_tokens"]  # real target tokens only
    measured = speed.Measurements(
        mode=toy_mode(speed),
        device="cpu",
        wall=1.0,
        machine=speed.machine(),
        load_before="0 0 0",
        load_after="0 0 0",
        data=data,
        runs=runs,
        check=speed.child_check(workdir, "cpu", batch=2, steps=2),
        matmul={"dtype": "float32", "n": 64, "tflops": 0.05},
        gpu_lines=speed.GPU_NONE,
    )
    text = speed.write_report(tmp_path / "RESULTS.md", measured)
    assert (tmp_path / "RESULTS.md").read_text(encoding="utf-8") == text
    assert "| training samples/s |" in text and "| evaluation during training" in text
    assert f"workbench {data['train_target_tokens']:,}; real target tokens" in text
    # The GPU rows render too (the full mode has not run on a GPU here; its numbers would
    # come from torch.cuda.max_memory_allocated in the same result dicts).
    for arm in runs.values():
        for phase in arm.values():
            phase[0]["gpu_mib"] = 1000.0
    gpu_text = speed.write_report(
        tmp_path / "GPU.md",
        dataclasses.replace(
            measured, device="cuda", machine={**measured.machine, "gpu": "a GPU", "bf16": True}
        ),
    )
    assert "| peak GPU memory, training (MiB) | 1,000 | 1,000 | **1.00×**" in gpu_text
    assert "GPU a GPU (bf16)" in gpu_text
