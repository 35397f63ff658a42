"""The CTranslate2 path: export, the same greedy output as transformers, backend choice,
and one clear line when the package or the export is missing. No timings here: the speed
comparison is in benchmarks/CT2.md."""

from __future__ import annotations

import io
import json
import shutil
import sys
from pathlib import Path

import pytest
from textual.widgets import Input

from workbench.core.decoding import DecodeOptions
from workbench.core.translate.translator import Translator
from workbench.errors import WorkbenchError

try:
    import ctranslate2  # noqa: F401

    HAVE_CT2 = True
except ImportError:
    HAVE_CT2 = False

needs_ct2 = pytest.mark.skipif(not HAVE_CT2, reason="ctranslate2 is not installed")


def _copy_model(source: Path, target: Path) -> Path:
    shutil.copytree(source, target, ignore=shutil.ignore_patterns("ct2-*"))
    return target


@pytest.fixture(scope="module")
def exported(tiny_model_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tiny model with weights whose output depends on the input, exported twice.

    The fixture's own init (std 0.02) answers every sentence with the same string, which
    would make "same output" a weak check; std 0.3 gives 20 different outputs for 20
    sentences, and a non-zero <pad> row (the decoder start) as fine-tuned models have.
    """
    import torch
    from transformers import AutoModelForSeq2SeqLM

    from workbench.core.translate.ct2_export import export_ctranslate2

    pytest.importorskip("ctranslate2")
    model_dir = _copy_model(tiny_model_dir, tmp_path_factory.mktemp("ct2") / "model")
    model = AutoModelForSeq2SeqLM.from_pretrained(str(model_dir))
    generator = torch.Generator().manual_seed(0)
    with torch.no_grad():
        for parameter in model.parameters():
            if parameter.dim() >= 2:
                parameter.copy_(torch.randn(parameter.shape, generator=generator) * 0.3)
    model.save_pretrained(str(model_dir))
    model = model_dir
    export_ctranslate2(str(model), "float32")
    export_ctranslate2(str(model), "int8")
    return model


@pytest.fixture(scope="module")
def sentences(hsk_pairs) -> list[str]:
    return [p.source for p in hsk_pairs[:20]]


@needs_ct2
@pytest.mark.parametrize(("ngram", "max_new"), [(0, 16), (2, 16), (0, 4)])
def test_float32_export_gives_the_transformers_greedy_output(
    exported: Path, sentences, ngram: int, max_new: int
):
    reference = Translator.from_pretrained(str(exported), device="cpu", backend="transformers")
    fast = Translator.from_pretrained(str(exported / "ct2-float32"), device="cpu")
    assert fast.backend.name == "ctranslate2"
    assert reference.backend.name == "transformers"
    options = DecodeOptions(num_beams=1, max_new_tokens=max_new, no_repeat_ngram_size=ngram)
    # Batched (padding, length sorting) and one by one: both must agree with transformers.
    expected = reference.translate_many(sentences, options, batch_size=8)
    assert fast.translate_many(sentences, options, batch_size=8) == expected
    assert [fast.translate(s, options).text for s in sentences[:5]] == expected[:5]
    # A real comparison, not one string twenty times (4-token outputs collide more often:
    # 11 distinct of 20 with the vocabulary SentencePiece's soft limit gives the fixture).
    assert len(set(expected)) >= (15 if max_new > 4 else 10)


@needs_ct2
def test_the_length_bound_wins_over_the_generation_config(exported: Path):
    """The tiny model's generation config says max_new_tokens=16; a bound of 4 must hold."""
    reference = Translator.from_pretrained(str(exported), device="cpu", backend="transformers")
    fast = Translator.from_pretrained(str(exported / "ct2-float32"), device="cpu")
    assert reference.default_options().max_new_tokens == 16
    ids = reference.tokenizer("I like to drink tea with my friends.")["input_ids"]
    slow_ids = reference.backend.generate_ids([ids], DecodeOptions(1, 16), 4)[0]
    fast_ids = fast.backend.generate_ids([ids], DecodeOptions(1, 16), 4)[0]
    assert len(slow_ids) == 1 + 4  # decoder start, three tokens, the forced </s>
    assert fast_ids == slow_ids[1:-1]


@needs_ct2
def test_int8_export_is_smaller_and_translates(exported: Path, sentences):
    from workbench.core.translate.ct2 import CT2Backend
    from workbench.core.translate.ct2_export_info import read_export_info

    int8, f32 = exported / "ct2-int8", exported / "ct2-float32"
    assert read_export_info(int8).quantization == "int8"
    assert (int8 / "model.bin").stat().st_size < 0.5 * (f32 / "model.bin").stat().st_size
    translator = Translator.from_pretrained(str(exported), device="cpu", backend="ct2")
    assert isinstance(translator.backend, CT2Backend)
    assert translator.backend.quantization == "int8"  # int8 is preferred over float32
    out = translator.translate_many(sentences, DecodeOptions(1, 16))
    assert len(out) == len(sentences)
    assert any(out)


@needs_ct2
def test_export_is_self_contained_and_atomic(exported: Path):
    for folder in ("ct2-int8", "ct2-float32"):
        names = {p.name for p in (exported / folder).iterdir()}
        assert {
            "model.bin",
            "vocab.json",
            "source.spm",
            "target.spm",
            "workbench.json",
            "generation_config.json",
            "workbench_export.json",
        } <= names
    assert not [p for p in exported.iterdir() if p.name.startswith(".")]  # no partial left


@needs_ct2
def test_second_export_reuses_a_fresh_one_and_force_rebuilds(exported: Path):
    from workbench.core.translate.ct2_export import export_ctranslate2

    assert export_ctranslate2(str(exported), "int8").rebuilt is False
    assert export_ctranslate2(str(exported), "int8", force=True).rebuilt is True


@needs_ct2
def test_auto_uses_a_fresh_export_and_not_a_stale_one(tiny_model_dir: Path, tmp_path: Path):
    import torch
    from transformers import AutoModelForSeq2SeqLM

    from workbench.core.translate.ct2_export import export_ctranslate2

    model_dir = _copy_model(tiny_model_dir, tmp_path / "model")
    assert Translator.from_pretrained(str(model_dir), device="cpu").backend.name == "transformers"
    export_ctranslate2(str(model_dir), "int8")
    auto = Translator.from_pretrained(str(model_dir), device="cpu")
    assert auto.backend.name == "ctranslate2"
    assert not auto.notices

    # A copy without preserved mtimes is still the same model: the hashes decide.
    copied = tmp_path / "copied"
    shutil.copytree(model_dir, copied, copy_function=shutil.copy)
    assert Translator.from_pretrained(str(copied), device="cpu").backend.name == "ctranslate2"

    # "Retrain" after the export: new weights saved in place.
    model = AutoModelForSeq2SeqLM.from_pretrained(str(model_dir))
    with torch.no_grad():
        model.lm_head.weight.mul_(1.5)
    model.save_pretrained(str(model_dir))
    auto = Translator.from_pretrained(str(model_dir), device="cpu")
    assert auto.backend.name == "transformers"
    assert len(auto.notices) == 1
    assert "older version" in auto.notices[0]
    assert f"workbench export --ctranslate2 --model {model_dir}" in auto.notices[0]
    with pytest.raises(WorkbenchError, match="older version"):
        Translator.from_pretrained(str(model_dir), device="cpu", backend="ct2")


@needs_ct2
def test_long_input_is_still_split_on_the_ct2_path(exported: Path):
    translator = Translator.from_pretrained(str(exported), device="cpu", backend="ct2")
    long_text = " ".join(["I like to drink green tea with my friends."] * 120)
    item = translator.translate(long_text, DecodeOptions(1, 4))
    assert any("parts" in n for n in item.notices)
    item = translator.translate("word " * 3000, DecodeOptions(1, 4))
    assert any("truncated" in n for n in item.notices)


@needs_ct2
def test_console_banner_names_the_backend(exported: Path, tmp_path: Path):
    from workbench.cli.interact import run_console
    from workbench.core.translate.console_session import ConsoleModel, ConsoleSession

    model = ConsoleModel(str(exported), device="cpu", num_beams=1, max_new_tokens=8)
    out = io.StringIO()
    run_console(
        ConsoleSession({"model": model}, tmp_path / "h.jsonl"),
        stdin=io.StringIO("I like tea.\n"),
        stdout=out,
    )
    assert "Backend: ctranslate2 int8 (cpu" in out.getvalue()
    assert out.getvalue().count("zh> ") == 1


@needs_ct2
def test_an_export_folder_can_be_the_model(exported: Path):
    translator = Translator.from_pretrained(str(exported / "ct2-int8"), device="cpu")
    assert translator.backend.name == "ctranslate2"
    with pytest.raises(WorkbenchError) as refused:  # as `translate --backend transformers`
        Translator.from_pretrained(str(exported / "ct2-int8"), backend="transformers")
    assert refused.value.exit_code == 2
    assert "is a CTranslate2 export" in str(refused.value)
    assert "\n" not in str(refused.value)


@needs_ct2
def test_auto_without_the_package_falls_back_and_says_so(exported: Path, monkeypatch):
    monkeypatch.setitem(sys.modules, "ctranslate2", None)
    translator = Translator.from_pretrained(str(exported), device="cpu")
    assert translator.backend.name == "transformers"
    assert "ctranslate2 is not installed" in translator.notices[0]


@needs_ct2
def test_export_record_names_its_source(exported: Path):
    info = json.loads((exported / "ct2-int8" / "workbench_export.json").read_text("utf-8"))
    assert info["source"] == str(exported)
    assert "model.safetensors" in info["source_files"]
    assert (info["model_type"], info["max_positions"]) == ("marian", 512)


def test_an_export_without_model_facts_is_refused_in_one_line(tmp_path: Path):
    """A hand-made or damaged export that names no model type: refused with the fix, never
    guessed (a guess decodes with another family's language codes)."""
    from workbench.core.translate.ct2 import export_model_facts
    from workbench.core.translate.ct2_export_info import EXPORT_INFO
    from workbench.errors import WorkbenchError

    (tmp_path / EXPORT_INFO).write_text(json.dumps({"quantization": "int8"}), "utf-8")
    with pytest.raises(WorkbenchError, match=r"names no model_type\); export it again with"):
        export_model_facts(tmp_path)
    (tmp_path / EXPORT_INFO).write_text(
        json.dumps({"model_type": "t5", "max_positions": None}), "utf-8"
    )
    assert export_model_facts(tmp_path) == ("t5", None)


@needs_ct2
async def test_tui_translate_pane_names_the_ct2_backend(exported: Path, tmp_path: Path):
    from textual.app import App, ComposeResult
    from textual.widgets import DataTable

    from workbench.tui.widgets.translate_pane import TranslatePane

    class Host(App):
        def compose(self) -> ComposeResult:
            yield TranslatePane(str(exported), None, tmp_path / "history.jsonl")

    app = Host()
    async with app.run_test(size=(100, 30)) as pilot:
        pane = app.query_one(TranslatePane)
        field = pane.query_one("#translate-input", Input)
        field.value = "I like tea."
        field.focus()
        await pilot.press("enter")
        table = pane.query_one("#translate-history", DataTable)
        for _ in range(200):
            if not pane.pending:
                break
            await pilot.pause(0.05)
        assert table.get_row_at(0)[0] == "tuned/ct2"
        messages = [n.message for n in app._notifications]
        assert any(m.startswith("fine-tuned model: ctranslate2 int8") for m in messages)
