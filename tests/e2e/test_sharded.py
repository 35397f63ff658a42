"""``train --shard``: FSDP2 over two processes on the CPU (gloo) under torchrun, for a tiny
Marian (tied embeddings, the demo's model built from scratch) and a tiny Qwen3, full and
LoRA.

What would pass without any sharding is not what is checked: transformers' Trainer on the
CPU falls back to DDP without a word, and DDP gives the same losses. So each test reads
what each rank held: the run's own line, counted from the live model's DTensors, and the
checkpoint's files, one per rank, each holding its part of every weight.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import torch
from safetensors.torch import load_file, save_file

from tests.helpers import torchrun
from tests.helpers.runs import tiny_toml
from tests.helpers.torchrun import failure, only_run, step_losses

#: Dropout off: the ranks draw other dropout masks than one process does, and the
#: losses are compared to 1e-5.
MARIAN = {"num_beams": 1, "scratch_dropout": 0.0}
#: The tiny Qwen3 from a saved folder: a gentle step, short lengths and decode.
QWEN3 = {
    "num_beams": 1,
    "learning_rate": 1e-3,
    "max_source_length": 32,
    "max_target_length": 32,
    "max_new_tokens": 8,
}


def both(root: Path, settings: dict, epochs: float = 2) -> tuple[Path, Path, str]:
    """The same run sharded over two processes (8 a batch each) and as one unsharded
    process (16 a batch): the same global batch. Returns both run folders and the
    sharded run's printed lines."""
    cache = root / "cache"
    two = torchrun.launch(
        root / "two", 2, cache, tiny_toml(epochs=epochs, batch_size=8, shard=True, **settings)
    )
    assert two.returncode == 0, failure(root / "two", two)
    one = torchrun.launch(
        root / "one", 1, cache, tiny_toml(epochs=epochs, batch_size=16, **settings)
    )
    assert one.returncode == 0, one.stderr[-3000:]
    return only_run(root / "two"), only_run(root / "one"), two.stdout


def rank_parts(shards: Path) -> dict[str, dict[int, torch.Tensor]]:
    """Each weight's part in each rank's file of a distributed checkpoint folder, read
    from the bytes the metadata points at: weight name -> rank -> its chunk."""
    from torch.distributed.checkpoint import FileSystemReader

    metadata = FileSystemReader(str(shards)).read_metadata()
    parts: dict[str, dict[int, torch.Tensor]] = {}
    for index, info in metadata.storage_data.items():
        rank = int(info.relative_path.split("_")[2])  # __R_0.distcp
        with open(shards / info.relative_path, "rb") as file:
            file.seek(info.offset)
            data = file.read(info.length)
        chunk = torch.load(io.BytesIO(data), weights_only=True)
        parts.setdefault(index.fqn, {})[rank] = chunk
    return parts


def assert_held_in_halves(run: Path, printed: str) -> None:
    """Both ranks held half of the values, no weight whole, in the live model and on disk."""
    line = next(x for x in printed.splitlines() if "each rank holds its shards" in x)
    assert "(no weight held whole)" in line, line
    total = int(line.split(" of the ")[1].split(" weight values")[0].replace(",", ""))
    ranks = line.split(": ")[1].split(" (")[0].split(", ")  # "rank 0 25,712", "rank 1 …"
    held = [int(x.split(" ")[-1].replace(",", "")) for x in ranks]
    assert len(held) == 2
    assert sum(held) == total
    assert abs(held[0] - held[1]) <= total // 10
    checkpoint = max((run / "checkpoints").glob("checkpoint-*"), key=lambda p: int(p.name[11:]))
    parts = rank_parts(checkpoint / "pytorch_model_fsdp_0")
    weights = {name: by_rank for name, by_rank in parts.items() if name.endswith("weight")}
    assert weights
    for name, by_rank in weights.items():
        # A tensor of a single row is not split: every other one is, over both ranks.
        if max(c.shape[0] for c in by_rank.values()) > 1:
            assert set(by_rank) == {0, 1}, name


def best_weights(run: Path) -> dict[str, torch.Tensor]:
    return load_file(str(run / "best_model" / "model.safetensors"))


def generation(run: Path) -> dict:
    """best_model's generation settings (what translate, score and the report decode
    with), the library version left out."""
    saved = json.loads((run / "best_model" / "generation_config.json").read_text())
    saved.pop("transformers_version", None)
    return saved


def translations(run: Path) -> list[str]:
    rows = (run / "test_translations.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(r)["after"] for r in rows]


def test_sharded_marian_matches_one_process_and_publishes_whole_weights(tmp_path, cli):
    two, one, printed = both(tmp_path, MARIAN)
    assert "sharded (FSDP2) over 2 processes" in printed
    assert "MarianDecoderLayer, MarianEncoderLayer" in printed
    assert_held_in_halves(two, printed)
    l2, l1 = step_losses(two), step_losses(one)
    assert len(l2) == len(l1) == 18
    assert max(abs(l2[s] - l1[s]) for s in l1) <= 1e-5, (l2, l1)
    # best_model is ordinary safetensors, the tied embedding once, as the unsharded one's
    w2, w1 = best_weights(two), best_weights(one)
    assert set(w2) == set(w1)
    assert max((w2[k] - w1[k]).abs().max().item() for k in w1) <= 1e-4
    assert not list((two / "best_model").glob("*fsdp*"))
    assert translations(two) == translations(one)
    assert generation(two) == generation(one)
    # export --merge makes the same folder again from the shards
    saved = best_weights(two)
    refused = cli("export", "--merge", str(two))
    assert refused.returncode == 2
    assert "pass --force" in refused.stderr
    remade = cli("export", "--merge", str(two), "--force")
    assert remade.returncode == 0, remade.stderr
    assert f"into {two / 'best_model'}" in remade.stdout
    merged = best_weights(two)
    assert all(torch.equal(merged[k], saved[k]) for k in saved)


def stop_after(work: Path, cache: Path, text: str, step: int) -> int:
    """Start a sharded run and interrupt rank 0 (Ctrl-C) once it has logged ``step``;
    returns the step it stopped at, with a checkpoint."""
    work.mkdir()
    (work / "tiny.toml").write_text(text, encoding="utf-8")
    with (work / "launcher.log").open("w") as log:
        job = subprocess.Popen(
            torchrun.command(work, 2), cwd=work, env=torchrun.environment(cache),
            stdout=log, stderr=subprocess.STDOUT,
        )  # fmt: skip
        deadline = time.monotonic() + 600
        while time.monotonic() < deadline and job.poll() is None:
            runs = work / "translation_output" / "runs"
            run = next(runs.iterdir(), None) if runs.is_dir() else None
            logged = run is not None and (run / "metrics.jsonl").is_file()
            if run is not None and logged and max(step_losses(run), default=0) >= step:
                writer = json.loads((run / "writer.json").read_text())
                os.kill(writer["pid"], signal.SIGINT)
                break
            time.sleep(0.01)
        assert job.wait(timeout=600) != 0, "the run ended before it was stopped"
    summary = json.loads((only_run(work) / "summary.json").read_text())
    assert summary["status"] == "stopped", summary
    return int(summary["global_step"])


def test_sharded_stop_and_resume_is_bit_identical(tmp_path):
    cache = tmp_path / "cache"
    text = tiny_toml(epochs=4, batch_size=8, shard=True, **MARIAN)
    straight = torchrun.launch(tmp_path / "straight", 2, cache, text)
    assert straight.returncode == 0, failure(tmp_path / "straight", straight)
    work = tmp_path / "stopped"
    stopped_at = stop_after(work, cache, text, 3)
    assert 3 <= stopped_at < 36
    run = only_run(work)
    stop_checkpoint = run / "checkpoints" / f"checkpoint-{stopped_at}"
    assert (stop_checkpoint / "pytorch_model_fsdp_0" / "__1_0.distcp").is_file()
    # a rank's file gone: --resume says so in one line, on every rank, before any step
    hidden = stop_checkpoint / "optimizer_0" / "__1_0.distcp"
    hidden.rename(hidden.with_suffix(".away"))
    lost = torchrun.launch(work, 2, cache, text, "--resume")
    assert lost.returncode != 0
    said = [x for x in lost.stderr.splitlines() if x.startswith("[default")]  # the ranks'
    missing = "is a sharded checkpoint with files missing (optimizer_0/__1_0.distcp)"
    assert sum(missing in x for x in said) == 2, said
    assert not [x for x in said if "Traceback" in x]  # torchrun's own follows a failed rank
    hidden.with_suffix(".away").rename(hidden)
    resumed = torchrun.launch(work, 2, cache, text, "--resume")
    assert resumed.returncode == 0, failure(work, resumed)
    assert f"resuming {run.name} from checkpoint-{stopped_at}" in resumed.stdout
    expected, got = step_losses(only_run(tmp_path / "straight")), step_losses(run)
    assert got == expected  # every step's loss, bit for bit
    a, b = best_weights(only_run(tmp_path / "straight")), best_weights(run)
    assert all(torch.equal(a[k], b[k]) for k in a)


def test_sharded_qwen3_matches_one_process(tmp_path, causal_models):
    settings = {**QWEN3, "model": str(causal_models["qwen3"])}
    two, one, printed = both(tmp_path, settings)
    assert "gathering one block at a time: Qwen3DecoderLayer" in printed
    assert_held_in_halves(two, printed)
    l2, l1 = step_losses(two), step_losses(one)
    assert len(l2) == len(l1) == 18
    assert max(abs(l2[s] - l1[s]) for s in l1) <= 1e-5, (l2, l1)
    assert translations(two) == translations(one)
    assert generation(two) == generation(one)
    from workbench.core.translate.translator import Translator

    translator = Translator.from_pretrained(str(two / "best_model"))
    assert isinstance(translator.translate("I like tea.").text, str)


def test_sharded_lora_trains_the_adapters_on_every_rank(tmp_path, causal_models, cli):
    base = tmp_path / "base"  # a copy: the test changes it at the end
    shutil.copytree(causal_models["qwen3"], base)
    settings = {**QWEN3, "model": str(base), "lora": True}
    text = tiny_toml(epochs=1, batch_size=8, shard=True, **settings)
    done = torchrun.launch(tmp_path / "two", 2, tmp_path / "cache", text)
    assert done.returncode == 0, failure(tmp_path / "two", done)
    run = only_run(tmp_path / "two")
    assert "trainable parameters" in done.stdout
    checkpoint = next((run / "checkpoints").glob("checkpoint-*"))
    parts = rank_parts(checkpoint / "pytorch_model_fsdp_0")
    lora_b = {name: by_rank for name, by_rank in parts.items() if "lora_B" in name}
    assert lora_b  # peft starts every B at zero: a changed one trained
    for name, by_rank in lora_b.items():
        assert set(by_rank) == {0, 1}, name
        for rank, chunk in by_rank.items():
            assert chunk.abs().sum().item() > 0, (name, rank)
    # best_model is the base with the adapters merged (it differs from the base), the
    # adapter kept beside it as an unsharded LoRA run keeps it
    from workbench.core.translate.translator import Translator

    base_weights = load_file(str(base / "model.safetensors"))
    tuned = best_weights(run)
    changed = [k for k in tuned if "q_proj" in k and not torch.equal(tuned[k], base_weights[k])]
    assert changed
    assert (run / "best_model" / "adapter" / "adapter_model.safetensors").is_file()
    translator = Translator.from_pretrained(str(run / "best_model"))
    assert isinstance(translator.translate("I like tea.").text, str)
    # the base saved over (as a run publishing over its folder would): no merge onto it
    changed_base = {k: v + 1 if "q_proj" in k else v for k, v in base_weights.items()}
    save_file(changed_base, str(base / "model.safetensors"))
    refused = cli("export", "--merge", str(run), "--force")
    assert refused.returncode == 2
    assert "has changed since (another run saved over it)" in refused.stderr
    assert best_weights(run).keys() == tuned.keys()  # the merged model left as it was


def test_accelerate_launch_with_the_docs_config_is_a_sharded_run(tmp_path):
    """docs/launch/fsdp2.yaml as a user passes it (two processes, no bf16 on this CPU):
    accelerate's FSDP launch shards the run without --shard typed."""
    work = tmp_path / "acc"
    work.mkdir()
    (work / "tiny.toml").write_text(tiny_toml(epochs=1, batch_size=8, **MARIAN), encoding="utf-8")
    config = Path(__file__).resolve().parents[2] / "docs" / "launch" / "fsdp2.yaml"
    launch = [
        sys.executable, "-m", "accelerate.commands.launch", "--config_file", str(config),
        "--num_processes", "2", "--mixed_precision", "no", *torchrun.TRAIN,
    ]  # fmt: skip
    done = subprocess.run(
        launch, cwd=work, env=torchrun.environment(tmp_path / "cache"), capture_output=True,
        text=True, timeout=900,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-4000:]
    assert "sharded (FSDP2) over 2 processes" in done.stdout
    assert_held_in_halves(only_run(work), done.stdout)
