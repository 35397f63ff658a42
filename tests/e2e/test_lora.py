"""``workbench train --lora`` on the tiny Hub-shaped NLLB and T5 models of
tests/helpers/family_models.py, through the real command line.

Each family trains LoRA adapters once (two epochs, lr 1e-3): the run prints peft's count of
trainable parameters, a small share of the model, and publishes the base model with the
best adapter merged in, which ``translate``, ``attention`` and ``export --ctranslate2``
read as any model, with the adapter kept in ``best_model/adapter/``. The merged model must
decode as the base model wrapped with that adapter does, and a LoRA run killed with
SIGKILL (in a process of its own) and resumed must end bit for bit as one that ran
straight through.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.cli import CommandLine, Result, Started, start_cli
from tests.helpers.family_models import T5_PREFIX
from tests.helpers.processes import same_weights, wait_for_line
from workbench.core.decoding import DecodeOptions
from workbench.core.train.checkpoints import last_complete_checkpoint
from workbench.core.train.lora import ADAPTER_FOLDER, ADAPTER_WEIGHTS

FAMILIES = ("nllb", "t5")
#: The layers the adapters go on by default (workbench/core/model/family.py).
TARGETS = {"nllb": ("q_proj", "v_proj"), "t5": ("q", "v")}
#: peft's count as the run prints it (workbench/core/train/lora.py trainable_line).
TRAINABLE_LINE = re.compile(
    r"LoRA rank 8, alpha 16 on (?P<targets>[\w, ]+): (?P<trainable>[\d,]+) trainable "
    r"parameters of (?P<total>[\d,]+) \((?P<share>[\d.]+)%\)"
)
#: Greedy, as short as the runs decode.
GREEDY = DecodeOptions(num_beams=1, max_new_tokens=8)


def train_args(model: Path, data: Path, output: Path, family: str, epochs: int = 2) -> list[str]:
    """``workbench train --lora`` of ``model`` on ``data`` (en -> zh), a few seconds long."""
    prefix = ["--source-prefix", T5_PREFIX] if family == "t5" else []
    return [
        "train", "--headless", "--model", str(model), "--data", str(data),
        "--source-lang", "en", "--target-lang", "zh", "--lora", *prefix,
        "--samples", "0", "--epochs", str(epochs), "--batch-size", "16",
        "--learning-rate", "1e-3", "--max-new-tokens", "8", "--num-beams", "1",
        "--logging-steps", "2", "--output-dir", str(output), "--no-interact",
    ]  # fmt: skip


@pytest.fixture(scope="module")
def unseen_sentences(hsk_pairs) -> list[str]:
    """20 English sentences the runs never saw."""
    return [p.source for p in hsk_pairs[100:120]]


@dataclass
class LoraRun:
    """One finished ``train --lora``: its family, base model, what it printed and left."""

    family: str
    base: Path
    proc: Result
    summary: dict[str, Any]

    @property
    def best_model(self) -> Path:
        return Path(self.summary["best_model"])


@pytest.fixture(scope="module", params=FAMILIES)
def lora_run(request, family_models, pairs_file, tmp_path_factory) -> LoraRun:
    """The family's tiny model trained with ``--lora`` once by the command line; nothing
    may write into its folder (a test that writes works on a copy)."""
    family = request.param
    work = tmp_path_factory.mktemp(f"lora-{family}")
    output = work / "out"
    with pytest.MonkeyPatch.context() as patch:
        proc = CommandLine(patch)(
            *train_args(family_models[family], pairs_file, output, family),
            cwd=work,
            # A module fixture is set up before the autouse private cache: its own, here.
            env=start_env(work),
        )
    summary_files = list((output / "runs").glob("*/summary.json"))
    summary = json.loads(summary_files[0].read_text()) if len(summary_files) == 1 else {}
    return LoraRun(family, family_models[family], proc, summary)


def finished(run: LoraRun) -> LoraRun:
    """``run``, failing the test at once with its stderr unless it finished."""
    assert run.proc.returncode == 0, run.proc.stderr[-3000:]
    assert run.summary.get("status") == "finished", run.proc.stdout[-3000:]
    return run


def trainable(run: LoraRun) -> re.Match[str]:
    match = TRAINABLE_LINE.search(finished(run).proc.stdout)
    assert match is not None, run.proc.stdout[-3000:]
    return match


# ---- 1. the run


def test_a_lora_run_finishes_and_prints_its_trainable_parameters(lora_run: LoraRun):
    match = trainable(lora_run)
    assert match["targets"] == ", ".join(TARGETS[lora_run.family])


def test_a_lora_run_trains_under_a_tenth_of_the_model(lora_run: LoraRun):
    match = trainable(lora_run)
    trained = int(match["trainable"].replace(",", ""))
    total = int(match["total"].replace(",", ""))
    assert 0 < trained < total / 10
    assert float(match["share"]) == pytest.approx(100 * trained / total, abs=0.01)


def test_the_memory_plan_counts_the_parameters_peft_trains(lora_run: LoraRun):
    """The plan, printed before any weight is loaded, counts from the config what peft
    counts on the loaded model."""
    match = trainable(lora_run)
    targets = ", ".join(TARGETS[lora_run.family])
    plan = f"memory plan (LoRA rank 8 on {targets}; "
    assert plan in lora_run.proc.stdout
    counted = f"{match['trainable']} of {match['total']} parameters trained ({match['share']}%)"
    assert counted in lora_run.proc.stdout


# ---- 2. what it publishes


def test_the_published_model_keeps_its_adapter_beside_it(lora_run: LoraRun):
    best = finished(lora_run).best_model
    adapter = best / ADAPTER_FOLDER
    assert (adapter / "adapter_config.json").is_file()
    assert (adapter / ADAPTER_WEIGHTS).is_file()
    config = json.loads((adapter / "adapter_config.json").read_text())
    assert (config["r"], config["lora_alpha"]) == (8, 16)
    assert sorted(config["target_modules"]) == sorted(TARGETS[lora_run.family])


def test_the_published_model_is_a_plain_model(lora_run: LoraRun):
    """The merged weights: no adapter tensor and every key of the base model."""
    from safetensors.torch import load_file

    best = finished(lora_run).best_model
    merged = load_file(str(best / "model.safetensors"))
    base = load_file(str(lora_run.base / "model.safetensors"))
    assert not [k for k in merged if "lora" in k]
    assert merged.keys() == base.keys()


def test_the_published_model_translates(cli, lora_run: LoraRun):
    best = finished(lora_run).best_model
    done = cli("translate", "--model", str(best), "I like tea.")
    assert done.returncode == 0
    assert done.stdout.strip()


def test_the_published_model_draws_attention(cli, lora_run: LoraRun):
    best = finished(lora_run).best_model
    done = cli("attention", "I like tea.", "--model", str(best))
    out = done.stdout
    assert done.returncode == 0
    assert "source:      I like tea." in out
    assert re.search(r"\[[░▒▓█·\s]+\]", out), out


def test_the_published_model_exports_to_ctranslate2(
    cli, lora_run: LoraRun, unseen_sentences: list[str], tmp_path: Path
):
    """Exported at float32 (from a copy), it decodes the transformers greedy strings."""
    pytest.importorskip("ctranslate2")
    from workbench.core.translate.translator import Translator

    folder = tmp_path / "best_model"
    shutil.copytree(finished(lora_run).best_model, folder)
    done = cli("export", "--ctranslate2", "--model", str(folder), "--quantization", "float32")
    assert done.returncode == 0
    assert (folder / "ct2-float32" / "model.bin").is_file()
    reference = Translator.from_pretrained(str(folder), device="cpu", backend="transformers")
    fast = Translator.from_pretrained(str(folder), device="cpu", backend="ct2")
    assert fast.backend.name == "ctranslate2"
    expected = reference.translate_many(unseen_sentences, GREEDY, batch_size=4)
    assert fast.translate_many(unseen_sentences, GREEDY, batch_size=4) == expected


# ---- 3. merged == base + adapter


def adapted_keys(weights: dict[str, Any], family: str) -> set[str]:
    """The weight matrices of the layers the adapters went on."""
    return {k for k in weights if k.endswith(".weight") and k.split(".")[-2] in TARGETS[family]}


def test_only_the_adapted_layers_differ_from_the_base(lora_run: LoraRun):
    """The adapter changed every q and v projection (so the next test compares something)
    and nothing else: the base weights were frozen."""
    from safetensors.torch import load_file

    merged = load_file(str(finished(lora_run).best_model / "model.safetensors"))
    base = load_file(str(lora_run.base / "model.safetensors"))
    changed = {k for k in merged.keys() & base.keys() if not bool((merged[k] == base[k]).all())}
    assert adapted_keys(base, lora_run.family)  # the family's targets name real layers
    assert changed == adapted_keys(base, lora_run.family)


def adapter_and_merged(run: LoraRun) -> tuple[Any, Any]:
    """The base model wrapped with the published adapter (peft), and the merged model as
    ``translate`` loads it (its tokenizer and direction: the run's languages, prefix)."""
    from peft import PeftModel
    from transformers import AutoModelForSeq2SeqLM

    from workbench.core.model.direction import apply_direction
    from workbench.core.translate.translator import Translator

    merged = Translator.from_pretrained(str(run.best_model), device="cpu", backend="transformers")
    base = AutoModelForSeq2SeqLM.from_pretrained(str(run.base))
    apply_direction(merged.tokenizer, merged.direction, base)  # NLLB: forced zho_Hans
    adapted = PeftModel.from_pretrained(base, str(run.best_model / ADAPTER_FOLDER)).eval()
    return adapted, merged


def source_ids(translator: Any, sentences: list[str]) -> list[list[int]]:
    direction, tokenizer = translator.direction, translator.tokenizer
    return [tokenizer(direction.source_text(s))["input_ids"] for s in sentences]


def test_the_merged_model_decodes_as_the_adapter_on_its_base(
    lora_run: LoraRun, unseen_sentences: list[str]
):
    from workbench.core.translate.backend import TransformersBackend

    adapted, merged = adapter_and_merged(finished(lora_run))
    ids = source_ids(merged, unseen_sentences)
    assert len(ids) == 20
    if lora_run.family == "nllb":  # the run's direction, as translate decodes it
        assert ids[0][0] == merged.tokenizer.convert_tokens_to_ids("eng_Latn")
        first = merged.tokenizer.convert_tokens_to_ids("zho_Hans")
        assert adapted.generation_config.forced_bos_token_id == first
    want = merged.backend.generate_ids(ids, GREEDY, GREEDY.max_new_tokens)
    got = TransformersBackend(adapted, "cpu").generate_ids(ids, GREEDY, GREEDY.max_new_tokens)
    assert got == want


def test_the_merged_model_computes_the_adapter_models_logits(
    lora_run: LoraRun, unseen_sentences: list[str]
):
    """Greedy ids of a tiny random model can all be one string; its logits cannot: merged
    and adapted agree to float rounding, and both differ from the base model's."""
    import torch
    from transformers import AutoModelForSeq2SeqLM

    adapted, merged = adapter_and_merged(finished(lora_run))
    batch = merged.tokenizer(
        [merged.direction.source_text(s) for s in unseen_sentences],
        text_target=unseen_sentences,  # any decoder input of the right shape
        padding=True,
        return_tensors="pt",
    )
    inputs = {
        "input_ids": batch["input_ids"],
        "attention_mask": batch["attention_mask"],
        "decoder_input_ids": batch["labels"],
    }
    base = AutoModelForSeq2SeqLM.from_pretrained(str(lora_run.base)).eval()
    with torch.inference_mode():
        want = merged.model(**inputs).logits
        got = adapted(**inputs).logits
        before = base(**inputs).logits
    torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-5)
    assert not torch.allclose(before, want, rtol=1e-4, atol=1e-5)


# ---- 4. kill -9, then --resume


def same_tensors(a: Path, b: Path) -> bool:
    """True when two safetensors files hold bit-identical tensors."""
    from safetensors.torch import load_file

    left, right = load_file(str(a)), load_file(str(b))
    return left.keys() == right.keys() and all(
        left[k].dtype == right[k].dtype and bool((left[k] == right[k]).all()) for k in left
    )


def start_env(work: Path) -> dict[str, str]:
    """The extra environment of a run in ``work``: its own sample cache."""
    return {"WORKBENCH_CACHE": str(work / "cache")}


def start_train(args: list[str], work: Path) -> Started:
    """``workbench`` with ``args`` started in ``work`` (a process of its own, to kill),
    stderr into stdout."""
    return start_cli(*args, cwd=work, env=start_env(work), stderr=subprocess.STDOUT)


def test_kill_9_then_resume_of_a_lora_run_matches_an_uninterrupted_one(
    cli, family_models, pairs_file, tmp_path: Path
):
    model = family_models["nllb"]
    killed, straight = tmp_path / "killed", tmp_path / "straight"
    killed.mkdir()
    straight.mkdir()
    args = {
        folder: train_args(model, pairs_file, folder / "out", "nllb", epochs=3)
        for folder in (killed, straight)
    }
    proc = start_train(args[killed], killed)
    try:
        wait_for_line(proc, "epoch 2 done")  # epoch 1's checkpoint is complete by now
    finally:
        proc.kill()
        proc.wait(timeout=30)
        assert proc.stdout is not None
        proc.stdout.close()
    run = next((killed / "out" / "runs").iterdir())
    ckpt = last_complete_checkpoint(run)
    assert ckpt is not None
    assert (ckpt / ADAPTER_WEIGHTS).is_file()
    resumed = cli(*args[killed], "--resume", cwd=killed, env=start_env(killed))
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert f"resuming {run.name} from {ckpt.name}" in resumed.stdout
    uninterrupted = cli(*args[straight], cwd=straight, env=start_env(straight))
    assert uninterrupted.returncode == 0, uninterrupted.stderr[-3000:]

    other = next((straight / "out" / "runs").iterdir())
    got = json.loads((run / "summary.json").read_text())
    want = json.loads((other / "summary.json").read_text())
    assert got["status"] == want["status"] == "finished"
    for key in ("global_step", "test", "validation"):
        assert got[key] == want[key], key
    assert Path(got["best_checkpoint"]).name == Path(want["best_checkpoint"]).name

    def evals(summary: dict[str, Any]) -> list[tuple[Any, ...]]:
        return [(e["step"], e["eval_loss"], e["eval_bleu"]) for e in summary["epochs"]]

    assert evals(got) == evals(want)  # every epoch's loss equal, not just close
    # The tiny model's validation BLEU is flat, so the best epoch may be the first, saved
    # before the kill: the last checkpoint's adapter is the one the resumed steps trained.
    last = f"checkpoints/checkpoint-{want['global_step']}/{ADAPTER_WEIGHTS}"
    assert same_tensors(run / last, other / last)
    assert same_weights(run / "best_model", other / "best_model")
    adapter = Path(ADAPTER_FOLDER) / ADAPTER_WEIGHTS
    assert same_tensors(run / "best_model" / adapter, other / "best_model" / adapter)
