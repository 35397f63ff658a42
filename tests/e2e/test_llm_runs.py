"""Decoder-only translators through the command line, as a user runs them: each tiny
causal family of tests/helpers/causal_models.py (Qwen3 and Gemma with their chat templates,
ALMA's Llama with ``--prompt alma``, Seed-X's Mistral with ``--prompt seed-x``) is
fine-tuned by ``workbench train --headless``, killed and resumed, and its published model
translated with no flag; LoRA runs train a small share, and their merged model equals the
base plus its adapter."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest

from tests.helpers.cli import CommandLine, start_cli
from tests.helpers.processes import same_weights, wait_for_line

#: The prompt each family is run with (the chat families take their template's default).
PROMPTS = {
    "qwen3": (),
    "gemma": (),
    "llama": ("--prompt", "alma"),
    "mistral": ("--prompt", "seed-x"),
}
#: What the run's languages line says of each.
SAID = {
    "qwen3": "qwen: chat",
    "gemma": "gemma: chat",
    "llama": "llama: alma",
    "mistral": "mistral: seed-x",
}

SENTENCES = ["I like tea.", "My brother is a doctor.", "Where is the station?"]


def train_args(model: Path, data: Path, output: Path, family: str, *extra: str) -> list[str]:
    """A run of a few seconds: 80 training pairs, batch 16, three epochs."""
    return [
        "train",
        "--headless",
        "--preset",
        "demo",
        "--model",
        str(model),
        "--data",
        str(data),
        *PROMPTS[family],
        "--samples",
        "0",
        "--epochs",
        "3",
        "--batch-size",
        "16",
        "--learning-rate",
        "1e-3",
        "--max-source-length",
        "32",
        "--max-target-length",
        "32",
        "--max-new-tokens",
        "8",
        "--num-beams",
        "1",
        "--output-dir",
        str(output),
        *extra,
    ]


class Runs(dict):
    """family -> (the output folder of one straight run, what it printed), each run made
    when a test first asks for it (``-k`` on one family trains that family alone)."""

    def __init__(self, models: dict[str, Path], data: Path, root) -> None:
        super().__init__()
        self.models, self.data, self.root = models, data, root

    def __missing__(self, family: str) -> tuple[Path, str]:
        output = self.root.mktemp(f"llm-{family}")
        with pytest.MonkeyPatch.context() as patch:
            done = CommandLine(patch)(*train_args(self.models[family], self.data, output, family))
        assert done.returncode == 0, done.stderr[-3000:]
        self[family] = (output, done.stdout)
        return self[family]


@pytest.fixture(scope="module")
def llm_runs(causal_models, pairs_file, tmp_path_factory) -> Runs:
    """The straight runs, one a family, shared by the module's tests."""
    return Runs(causal_models, pairs_file, tmp_path_factory)


def only_run(output: Path) -> Path:
    return next((output / "runs").iterdir())


@pytest.mark.parametrize("family", ["qwen3", "llama", "gemma", "mistral"])
def test_each_family_fine_tunes_and_prints_before_after_with_intervals(llm_runs, family):
    output, printed = llm_runs[family]
    assert f"languages: en → zh ({SAID[family]} prompt)" in printed
    done = printed[printed.index("[done]") :]
    assert "test (10% held out, seed 42, 10): BLEU" in done
    assert "95% CI" in done
    assert "p = " in done or "p < " in done
    summary = json.loads((only_run(output) / "summary.json").read_text(encoding="utf-8"))
    assert summary["status"] == "finished"
    assert set(summary["test"]) >= {"bleu_before", "bleu_after"}
    settings = json.loads((output / "best_model" / "workbench.json").read_text(encoding="utf-8"))
    assert settings["prompt"] == SAID[family].split(": ")[1]
    if family in ("qwen3", "gemma"):  # the chat message as sent, for a model moved anywhere
        assert "{source}" in settings["prompt_template"]
    if family == "llama":
        assert "no pad token: batches are padded with its EOS (</s>)" in printed


@pytest.mark.parametrize("family", ["qwen3", "llama", "gemma", "mistral"])
def test_kill_9_then_resume_ends_bit_identical_to_the_straight_run(
    cli, llm_runs, causal_models, pairs_file, tmp_path, family
):
    args = train_args(causal_models[family], pairs_file, tmp_path, family)
    proc = start_cli(*args, cwd=Path.cwd())  # a process of its own, to kill
    try:
        wait_for_line(proc, "epoch 2 done")  # epoch 1's checkpoint is whole by now
    finally:
        proc.kill()
        proc.wait(timeout=30)
    resumed = cli(*args, "--resume")
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert "resuming" in resumed.stdout
    got = json.loads((only_run(tmp_path) / "summary.json").read_text(encoding="utf-8"))
    straight = llm_runs[family][0]
    want = json.loads((only_run(straight) / "summary.json").read_text(encoding="utf-8"))
    for key in ("status", "global_step", "test", "validation"):
        assert got[key] == want[key], key
    assert same_weights(tmp_path / "best_model", straight / "best_model")


@pytest.mark.parametrize("family", ["qwen3", "llama"])
def test_translate_and_interact_on_the_published_model_need_no_flag(cli, llm_runs, family):
    from workbench.cli.interact import run_console
    from workbench.core.translate.console_session import ConsoleModel, ConsoleSession

    best = llm_runs[family][0] / "best_model"
    piped = cli("translate", "--model", str(best), input="\n".join(SENTENCES) + "\n")
    assert piped.returncode == 0, piped.stderr[-2000:]
    lines = piped.stdout.splitlines()
    assert len(lines) == len(SENTENCES)
    model = ConsoleModel(str(best), device="cpu", backend="transformers")
    session = ConsoleSession({"model": model}, llm_runs[family][0] / "history.jsonl")
    translator = session.load()
    assert translator.direction.prompt == SAID[family].split(": ")[1]
    assert lines == translator.translate_many(SENTENCES)
    # The same model in the console: one answer a line, as the pipe gave it.
    out = io.StringIO()
    code = run_console(session, stdin=io.StringIO(SENTENCES[0] + "\n:q\n"), stdout=out)
    assert code == 0
    assert lines[0] in out.getvalue()


def first_step_logits(model, tokenizer, prompts: list[str]):
    import torch

    batch = tokenizer(prompts, return_tensors="pt", padding=True)
    with torch.no_grad():
        return model(**batch).logits


@pytest.mark.parametrize("family", ["qwen3", "llama"])
def test_lora_trains_under_a_tenth_and_the_merged_model_equals_base_plus_adapter(
    cli, causal_models, pairs_file, tmp_path, family
):
    import torch
    from peft import PeftModel
    from transformers import AutoModelForCausalLM, AutoTokenizer

    model = causal_models[family]
    done = cli(*train_args(model, pairs_file, tmp_path, family, "--lora", "--epochs", "1"))
    assert done.returncode == 0, done.stderr[-3000:]
    line = next(x for x in done.stdout.splitlines() if "trainable parameters of" in x)
    share = float(line.rsplit("(", 1)[1].rstrip("%)"))
    assert 0 < share < 10, line
    best = tmp_path / "best_model"
    tokenizer = AutoTokenizer.from_pretrained(best)
    tokenizer.padding_side = "left"
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    settings = json.loads((best / "workbench.json").read_text(encoding="utf-8"))
    prompts = [settings["prompt"] + ": " + s for s in SENTENCES]
    merged = AutoModelForCausalLM.from_pretrained(best).eval()
    base = AutoModelForCausalLM.from_pretrained(model)
    adapted = PeftModel.from_pretrained(base, best / "adapter").eval()
    want = first_step_logits(adapted, tokenizer, prompts)
    got = first_step_logits(merged, tokenizer, prompts)
    assert torch.allclose(got, want, atol=1e-5), float((got - want).abs().max())
    base_alone = first_step_logits(AutoModelForCausalLM.from_pretrained(model), tokenizer, prompts)
    assert not torch.allclose(got, base_alone, atol=1e-5)  # the adapter did change it


async def test_the_translate_pane_answers_with_the_published_llm(llm_runs, tmp_path):
    import shutil

    from textual.widgets import Input

    from tests.helpers.runs import small
    from tests.helpers.tui import wait_for
    from workbench.core.translate.translator import Translator
    from workbench.tui.app import WorkbenchApp
    from workbench.tui.widgets.translate_pane import TranslatePane

    best = llm_runs["qwen3"][0] / "best_model"
    shutil.copytree(best, tmp_path / "out" / "best_model")
    want = Translator.from_pretrained(str(best), device="cpu").translate(SENTENCES[1]).text
    assert want  # the trained model writes something: the pane must show that
    app = WorkbenchApp(small(tmp_path))
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: bool(app.query(TranslatePane)), what="the panes mounted")
        await pilot.press("4")
        pane = app.query_one(TranslatePane)
        field = pane.query_one("#translate-input", Input)
        await wait_for(pilot, lambda: app.focused is field, what="the input has the focus")
        await pilot.press(*SENTENCES[1], "enter")
        await wait_for(pilot, lambda: pane.pending == 0, what="translated")
        entries = list(pane.entries.values())
        assert [e.source for e in entries] == [SENTENCES[1]]
        assert entries[0].translation == want


def test_runs_compare_lab_and_report_read_a_decoder_only_run(cli, llm_runs):
    qwen, llama = llm_runs["qwen3"][0], llm_runs["llama"][0]
    listed = cli("runs", "--output-dir", str(qwen), "--json")
    assert listed.returncode == 0, listed.stderr[-2000:]
    assert [r["status"] for r in json.loads(listed.stdout)] == ["finished"]
    compared = cli("compare", str(only_run(qwen)), str(only_run(llama)), "--out", str(qwen / "cmp"))
    assert compared.returncode == 0, compared.stderr[-2000:]
    table = (qwen / "cmp" / "compare.md").read_text(encoding="utf-8")
    assert (qwen / "cmp" / "compare.html").is_file()
    # The two runs differ in their model and in the prompt asked for (none: the chat
    # template's default), and in nothing else the user set.
    differ = table[table.index("## Settings that differ") : table.index("## Curves")]
    assert re.findall(r"^\| (\w+) \|", differ, re.M) == ["Setting", "model", "prompt"], differ
    assert "| prompt | none | alma |" in differ, differ
    lab = cli("lab", "attention", "--model", str(qwen / "best_model"), SENTENCES[0])
    assert lab.returncode == 0, lab.stderr[-2000:]
    assert (only_run(qwen) / "lab_prompt_attention.json").is_file()
    report = cli("report", str(only_run(qwen)), "--sentence", SENTENCES[0])
    assert report.returncode == 0, report.stderr[-2000:]
    text = (only_run(qwen) / "report.md").read_text(encoding="utf-8")
    assert "Attention inside the prompt (a decoder-only model)" in text
    assert "Self-attention" in text
    assert "Cross-attention ·" not in text
