"""The speed benchmark's code paths at toy size: correctness only, never timing."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest


@pytest.fixture(scope="module")
def workdir(speed, tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("speed")
    smoke = speed.MODES["smoke"]  # the toy size: a 16-wide model, 64 pairs
    speed.prepare_workdir(folder, smoke, shape=smoke.shape)
    return folder


def test_lengths_follow_the_model_and_stay_in_range(speed):
    pairs = speed.make_pairs(2000, seed=3)
    sources = [len(s) + 1 for s, _ in pairs]
    targets = [len(t) + 1 for _, t in pairs]
    assert min(sources + targets) >= 3
    assert max(sources + targets) <= 128
    stats = speed.length_stats(sources)
    assert 26 <= stats["median"] <= 30  # lognormal median 28
    assert 30 <= stats["mean"] <= 36  # and a long tail: mean above median
    assert speed.make_pairs(5, seed=3) == pairs[:5]  # seeded


def test_strata_are_whole_length_sorted_batches_that_sort_back_the_same(speed):
    pool = speed.make_pairs(800, seed=5)
    kept = speed.length_strata(pool, 3, seed=6)
    assert len(kept) == 48
    assert len(set(map(str, kept))) == 48
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
    assert sizes == sorted(sizes)  # small to large
    assert sizes[0] < sizes[-1]
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


def toy_measurements(speed) -> Any:
    """A finished run's results as the phases return them, with made-up figures."""

    def train(projected: int) -> dict:
        return dict(
            samples=16, steps=1, seconds=1.0, samples_per_s=16.0, target_tokens_per_s=500.0,
            model_flops_per_s=1e9, step_seconds=[1.0], padded_widths=[[128, 128]],
            projected_rows=projected, losses=[11.0], precision="fp32", attention="sdpa",
            rss_mib=1000.0,
        )  # fmt: skip

    def evaluation() -> dict:
        return dict(
            sentences=4, seconds=1.0, sentences_per_s=4.0, target_tokens_per_s=100.0, beams=4,
            eval_loss=None, rss_mib=900.0, final_sentences_per_s=2.0, final_beams=4,
        )  # fmt: skip

    lengths = dict(mean=30.0, median=28, p90=50, p99=60, max=70, share_over_64=0.05)
    return speed.Measurements(
        mode=speed.MODES["smoke"],
        device="cpu",
        wall=60.0,
        machine=speed.machine(),
        load_before="0 0 0",
        load_after="0 0 0",
        data=dict(
            parameters=1_100_000,
            train_pairs=16,
            train_target_tokens=560,
            train_text="16 pairs",
            validation_pairs=4,
            validation_text="4 sentences",
            lengths={"source, this run's pairs": lengths},
        ),
        runs={
            arm: {"train": [train(projected)], "eval": [evaluation()]}
            for arm, projected in (("reference", 2048), ("workbench", 560))
        },
        profile=dict(
            measure="as shipped",
            threads=1,
            first_step=2.0,
            losses=[11.0, 10.9],
            rss_mib=900.0,
            parts={name: [0.1, 0.2] for name in (*speed.PARTS, "other", "step")},
            top_ops=[["aten::mm", 0.5, 40], ["aten::copy_", 0.01, 12]],
        ),
        check=dict(
            batch=2,
            steps=2,
            losses={"reference": [11.0, 10.9], "workbench": [11.0, 10.9]},
            max_abs_diff=1e-7,
            real_tokens=50,
            projected_rows={"reference": 512, "workbench": 50},
        ),
        matmul={"dtype": "float32", "n": 64, "tflops": 0.05},
        gpu_lines=speed.GPU_NONE,
    )


def test_the_report_renders_gpu_rows_from_the_same_results(speed, tmp_path: Path):
    """The full mode has not run on a GPU here; its numbers would come from
    torch.cuda.max_memory_allocated in the same result dicts."""
    measured = toy_measurements(speed)
    for arm in measured.runs.values():
        for phase in arm.values():
            phase[0]["gpu_mib"] = 1000.0
    gpu_text = speed.write_report(
        tmp_path / "GPU.md",
        dataclasses.replace(
            measured, device="cuda", machine={**measured.machine, "gpu": "a GPU", "bf16": True}
        ),
    )
    assert (tmp_path / "GPU.md").read_text(encoding="utf-8") == gpu_text
    assert "| peak GPU memory, training (MiB) | 1,000 | 1,000 | **1.00×**" in gpu_text
    assert "GPU a GPU (bf16)" in gpu_text
    assert "n/a" not in gpu_text


def test_a_figure_a_run_did_not_measure_prints_as_na(speed, tmp_path: Path):
    """A missing figure costs its cell, never the report: a None formatted as a number
    would end a ten-minute quick run at its last step, with nothing written."""
    measured = toy_measurements(speed)
    for arm in measured.runs.values():
        del arm["eval"][0]["final_sentences_per_s"]
        arm["train"][0]["losses"] = []
    del measured.check["max_abs_diff"]
    measured.matmul["tflops"] = None
    startup = speed.report.startup_section({"help_runs": 0, "paint_all": []})
    text = speed.write_report(
        tmp_path / "RESULTS.md", dataclasses.replace(measured, startup_lines=startup)
    )
    assert (
        "| final before/after decoding, sentences/s (4 beams both) | n/a | n/a | **n/a** |" in text
    )
    assert "Largest per-step difference: **n/a**" in text
    assert "matmul rate (n/a GFLOPS, 64×64 matmuls): reference: n/a, workbench: n/a." in text
    assert "- reference:  (mean n/a)" in text
    assert "footer keys at n/a, data at n/a" in text


def test_each_row_gives_its_spread_and_a_noisy_one_is_no_result(speed, tmp_path: Path):
    """An arm whose repetitions differ by more than 25% is flagged on its row, its ratio is
    not bolded, and the summary above the table names it."""
    measured = toy_measurements(speed)
    text = speed.write_report(tmp_path / "ONE.md", measured)
    assert "Noise: 1 repetition per arm: no spread" in text
    assert "| reference: 16; workbench: 16 | 1 repetition: no spread |" in text
    for arm in measured.runs.values():  # a second repetition of each phase
        arm["train"].append({**arm["train"][0]})
        arm["eval"].append({**arm["eval"][0]})
    measured.runs["reference"]["train"][1]["samples_per_s"] = 16.0 * 1.1  # 10%: a result
    measured.runs["workbench"]["train"][1]["samples_per_s"] = 16.0 * 1.31  # 31%: noise
    text = speed.write_report(tmp_path / "RESULTS.md", measured)
    assert (
        "| training samples/s | 16.8 | 18.5 | (1.10×: noisy) | ≥ 2.5× | reference: 16, 17.6; "
        "workbench: 16, 21 | reference 10%; workbench 31%: **noisy: workbench repetitions "
        "differ by 31% (> 25%); not a result** |" in text
    )
    assert (
        "| training target tokens/s | 500 | 500 | **1.00×** |  | reference: 500, 500; "
        "workbench: 500, 500 | reference 0%; workbench 0% |" in text
    )
    summary = text.split("| metric |")[0]  # above the table
    assert (
        "**Noisy, not results (repetitions differ by more than 25%): training samples/s "
        "(workbench 31%).**" in summary
    )
    assert "Load average (1/5/15 min) before: 0 0 0; after: 0 0 0" in summary


def test_the_step_profile_splits_a_step_into_parts_that_add_up(speed, workdir: Path):
    shipped = speed.child_profile(workdir, "cpu", "as shipped", steps=2)
    parts = shipped["parts"]
    assert len(parts["step"]) == 2
    for n, step in enumerate(parts["step"]):
        measured = sum(parts[name][n] for name in speed.PARTS)
        assert all(parts[name][n] >= 0 for name in speed.PARTS)
        assert measured + parts["other"][n] == pytest.approx(step)
        assert measured > 0.5 * step  # the parts, not "other", hold most of a step
    assert any(name == "aten::mm" or name == "aten::addmm" for name, _, _ in shipped["top_ops"])
    lines = speed.profile_lines(shipped)
    assert any(line.startswith("| forward, projection |") for line in lines)
    # A measure that only changes how AdamW runs keeps the losses at float rounding.
    assert shipped["adamw"] == {"fused": True, "foreach": None}  # the Trainer's default
    kernels = {"AdamW foreach": {"fused": False, "foreach": True}}
    kernels["AdamW for-loop"] = {"fused": False, "foreach": False}
    for measure in ("AdamW foreach", "AdamW for-loop", "loss in chunks"):
        other = speed.child_profile(workdir, "cpu", measure, steps=2)
        assert other["losses"] == pytest.approx(shipped["losses"], abs=1e-5), measure
        assert other["adamw"] == kernels.get(measure, shipped["adamw"]), measure
    import torch.nn.functional as F

    assert F.cross_entropy.__name__ == "cross_entropy"  # the chunked loss was undone
