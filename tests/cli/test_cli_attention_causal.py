"""``workbench attention`` and ``workbench lab attention`` on a decoder-only model (tiny
Qwen3 with its chat template, ALMA-shaped Llama with the alma prompt): the map titled as
self-attention over the source, the prompt flags passed through, the prompt study printed
and saved. The core they call is tested in tests/unit/test_attention_causal.py and
tests/unit/test_lab_causal.py."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from workbench.core.attention.causal import CAUSAL_ATTENTION, CAUSAL_AXES
from workbench.core.attention.extract import load_attention_model
from workbench.core.config.direction_request import DirectionRequest
from workbench.core.lab.prompt_attention import PromptAttention
from workbench.core.records.typed import decode
from workbench.core.run_folder.layout import RunFolder

SENTENCE = "I like to drink tea."
WORDS = ["I", "like", "to", "drink", "tea", "."]

#: The two prompt kinds: Qwen3's chat template, ALMA's plain prompt (Llama has no template).
PROMPTS = {"qwen3": None, "llama": "alma"}


def prompt_flags(family: str) -> list[str]:
    prompt = PROMPTS[family]
    return ["--prompt", prompt] if prompt else []


@pytest.mark.parametrize("family", list(PROMPTS))
def test_cli_titles_the_map_as_self_attention_over_the_source(
    cli, family: str, causal_models: dict[str, Path]
):
    model = str(causal_models[family])
    argv = ["attention", SENTENCE, "--model", model, "--words", "--width", "200"]
    done = cli(*argv, *prompt_flags(family))
    assert done.returncode == 0
    title, columns, legend = printed(done.stdout)
    assert title == f"{CAUSAL_ATTENTION} · mean of 2 layers, mean of 2 heads · words"
    assert title.startswith("self-attention of the translation over the source")
    assert columns == WORDS  # the source's words, none of the prompt's
    assert CAUSAL_AXES[1] in legend


def printed(out: str) -> tuple[str, list[str], str]:
    """The title (wrapped at the terminal's width, joined again), the column labels and
    the legend of ``workbench attention``'s output."""
    head, rest = out.split("\nsource:      ", 1)
    assert rest.startswith(f"{SENTENCE}\n"), rest
    lines = rest.splitlines()
    assert lines[1].startswith("translation: ")
    return " ".join(head.split()), lines[2].split(), " ".join(" ".join(lines[-3:]).split())


def test_cli_passes_the_prompt_template_through(
    cli, causal_models: dict[str, Path], tmp_path: Path
):
    template = tmp_path / "prompt.txt"
    template.write_text("Say it in {target_lang}: {source}\nThere:", encoding="utf-8")
    model = str(causal_models["llama"])
    argv = ["attention", SENTENCE, "--model", model, "--words", "--width", "200"]
    done = cli(*argv, "--prompt-template", str(template))
    assert done.returncode == 0
    _, columns, _ = printed(done.stdout)
    assert columns == WORDS  # found inside the user's prompt
    asked = DirectionRequest(prompt_template=template.read_text(encoding="utf-8"))
    loaded = load_attention_model(model, asked)
    assert loaded.direction.prompt == "template"
    assert loaded.direction.source_text(SENTENCE) == f"Say it in Chinese: {SENTENCE}\nThere:"


def test_cli_without_a_prompt_for_a_model_without_a_template_is_one_line(
    cli, causal_models: dict[str, Path]
):
    done = cli("attention", SENTENCE, "--model", str(causal_models["llama"]))
    assert done.returncode == 2
    err = done.stderr.strip()
    assert len(err.splitlines()) == 1, err
    assert "--prompt alma" in err, err


def test_cli_lab_attention_prints_the_prompt_study(cli, causal_models: dict[str, Path]):
    done = cli("lab", "attention", "--model", str(causal_models["qwen3"]), SENTENCE)
    assert done.returncode == 0
    out = done.stdout
    assert "no encoder and no cross-attention" in out
    assert f"source:      {SENTENCE}" in out
    assert "<|im_start|>assistant" in out  # the turn markers after the source, by name
    assert "  the causal mask is the only mask" in out
    table = out.split("first token\n", 1)[1].splitlines()
    assert [line.split()[0] for line in table[:2]] == ["1", "2"]  # one row per layer
    for line in table[:2]:
        shares = [float(cell.rstrip("%")) for cell in line.split()[1:5]]
        assert sum(shares) == pytest.approx(100.0, abs=0.3)
    assert "saved" not in out  # a Hub-shaped model names no run folder


def test_cli_saves_the_study_into_the_models_run_folder(
    cli, causal_models: dict[str, Path], tmp_path: Path
):
    model = tmp_path / "best_model"
    shutil.copytree(causal_models["llama"], model)
    run = tmp_path / "runs" / "run-1"
    run.mkdir(parents=True)
    settings = {"prompt": "alma", "run_dir": str(run)}  # a fine-tuned ALMA records its prompt
    (model / "workbench.json").write_text(json.dumps(settings), encoding="utf-8")
    done = cli("lab", "attention", "--model", str(model), SENTENCE)
    assert done.returncode == 0
    study_file = RunFolder(run).lab_study("prompt_attention")
    assert f"saved {study_file}" in done.stdout
    saved = decode(PromptAttention, json.loads(study_file.read_text(encoding="utf-8")))
    assert saved is not None
    assert saved.prompt == "alma"
    assert saved.part("source").text.strip() == SENTENCE
    assert saved.mask.causal_only
