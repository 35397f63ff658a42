"""CTranslate2 exports of decoder-only models: Qwen3, ALMA's Llama, Gemma 3
and Seed-X's Mistral from tests/helpers/causal_models.py, plus the variants whose conversion
needs care (Qwen2, Gemma 1, a Gemma 3 with scaled RoPE and its own query scale, sliding
windows shorter than the prompt).

Each float32 export must give transformers' greedy output as ``workbench translate
--backend ct2`` prints it against ``--backend transformers`` (on 20 HSK sentences), the
same ids at the backend level (batched, with prompts of different lengths, n-gram blocks,
short bounds and extra stop tokens), be loadable from the export folder alone, and go
stale when a tokenizer file or the chat template changes. A decoder-only type CTranslate2
cannot convert is refused in one line before any weight is read."""

from __future__ import annotations

import dataclasses
import io
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.causal_models import CAUSAL_FAMILIES
from workbench.cli.translate import run_pipe
from workbench.core.decoding import DecodeOptions
from workbench.core.records.model_settings import SETTINGS_FILE
from workbench.core.translate.ct2_export import export_ctranslate2
from workbench.core.translate.translator import Translator
from workbench.errors import WorkbenchError

pytest.importorskip("ctranslate2")

#: The model_type each tiny model's config.json has.
MODEL_TYPES = {"qwen3": "qwen3", "llama": "llama", "gemma": "gemma3_text", "mistral": "mistral"}
#: A model without a chat template is asked with its family's plain prompt, which a
#: trained run records in workbench.json beside the model (the others use their chat).
PROMPTS = {"llama": "alma", "mistral": "seed-x"}
#: The tokenizer files each family's folder holds, the chat template among them.
TOKENIZER_FILES = {
    "qwen3": ("chat_template.jinja", "merges.txt", "vocab.json", "tokenizer.json"),
    "llama": ("tokenizer.model", "tokenizer.json", "tokenizer_config.json"),
    "gemma": ("chat_template.jinja", "tokenizer.model", "tokenizer.json"),
    "mistral": ("tokenizer.model", "tokenizer.json", "tokenizer_config.json"),
}
#: The std of the redrawn embedding rows (every other matrix gets 1.0): Gemma multiplies
#: its embeddings by the square root of the width, so it needs smaller ones.
EMBEDDING_STD = {"gemma": 0.05}


def _varied_copy(family: str, source: Path, folder: Path) -> Path:
    """A copy of the tiny model ``source`` whose output depends on the input.

    The builder's init (std 0.02) makes Qwen3 answer every sentence with line breaks
    (an empty translation); embeddings at 0.3 (Gemma 0.05) and the other matrices at
    1.0 give 18 to 20 different translations of 20 sentences in every family, so "the
    same output" compares something. A plain-prompt model gets its prompt recorded.
    """
    import torch
    from transformers import AutoModelForCausalLM

    shutil.copytree(source, folder)
    model = AutoModelForCausalLM.from_pretrained(str(folder))
    generator = torch.Generator().manual_seed(0)
    std = EMBEDDING_STD.get(family, 0.3)
    with torch.no_grad():
        for name, parameter in model.named_parameters():
            if parameter.dim() >= 2:
                scale = std if ("embed" in name or "lm_head" in name) else 1.0
                parameter.copy_(torch.randn(parameter.shape, generator=generator) * scale)
    model.save_pretrained(str(folder))
    if family in PROMPTS:
        settings = {"prompt": PROMPTS[family], "source_lang": "en", "target_lang": "zh"}
        (folder / SETTINGS_FILE).write_text(json.dumps(settings), encoding="utf-8")
    return folder


def _export(folder: Path) -> None:
    """``workbench export --ctranslate2 --quantization float32``'s export of ``folder``."""
    export_ctranslate2(str(folder), "float32")


def _translators(folder: Path | str) -> tuple[Translator, Translator]:
    """The transformers reference and the CTranslate2 export of ``folder``."""
    reference = Translator.from_pretrained(str(folder), device="cpu", backend="transformers")
    fast = Translator.from_pretrained(str(folder), device="cpu", backend="ct2")
    assert reference.backend.name == "transformers"
    assert fast.backend.name == "ctranslate2"
    return reference, fast


def _stops(reference: Translator) -> set[int]:
    """Where transformers ends an output: its generation config's EOS ids, which the
    prompt's stops were added to."""
    eos = reference.backend.generation_config.eos_token_id
    return set(eos if isinstance(eos, list) else [eos])


def _written(rows: list[list[int]], stops: set[int]) -> list[list[int]]:
    """transformers' rows as written: up to the first stop (kept), its padding dropped."""
    cut = []
    for row in rows:
        end = next((k + 1 for k, t in enumerate(row) if t in stops), len(row))
        cut.append(row[:end])
    return cut


def _prompts(translator: Translator, sentences: list[str]) -> list[list[int]]:
    tokenizer, direction = translator.tokenizer, translator.direction
    return [tokenizer(direction.source_text(s))["input_ids"] for s in sentences]


def _same_ids(
    reference: Translator,
    fast: Translator,
    prompts: list[list[int]],
    options: DecodeOptions,
    bound: int,
    batch: int = 8,
) -> list[list[int]]:
    """CTranslate2's ids for ``prompts`` in batches of ``batch``, checked against
    transformers' (left-padded) ones; returns them."""
    out: list[list[int]] = []
    for start in range(0, len(prompts), batch):
        chunk = prompts[start : start + batch]
        slow = _written(reference.backend.generate_ids(chunk, options, bound), _stops(reference))
        quick = fast.backend.generate_ids(chunk, options, bound)
        assert quick == slow
        assert all(len(row) <= bound for row in quick)
        out += quick
    return out


@pytest.fixture(scope="module", params=CAUSAL_FAMILIES)
def exported(request, causal_models, tmp_path_factory) -> tuple[str, Path]:
    """A varied copy of the family's tiny model, exported at float32."""
    family = request.param
    folder = tmp_path_factory.mktemp(f"ct2-{family}") / "model"
    _varied_copy(family, causal_models[family], folder)
    _export(folder)
    return family, folder


@pytest.fixture(scope="module")
def translators(exported) -> tuple[Translator, Translator]:
    """The transformers reference and the export of ``exported``, loaded once; tests that
    change a translator load their own."""
    return _translators(exported[1])


@pytest.fixture(scope="module")
def sentences(hsk_pairs) -> list[str]:
    return [p.source for p in hsk_pairs[:20]]


def test_translate_with_ct2_prints_the_transformers_greedy_output(exported, sentences):
    """What ``workbench translate --backend ct2|transformers --num-beams 1 --max-new-tokens
    24`` runs: the translator the flags name, its own decoding with the user's beams and
    length, and the pipe's lines."""
    _, folder = exported
    outputs = {}
    for backend in ("ct2", "transformers"):
        translator = Translator.from_pretrained(str(folder), backend=backend)
        options = translator.default_options().overridden(1, 24)
        out, err = io.StringIO(), io.StringIO()
        assert run_pipe(translator, sentences, options, stdout=out, stderr=err) == 0
        outputs[backend] = (out.getvalue(), err.getvalue())
    (fast, fast_err), (slow, slow_err) = outputs["ct2"], outputs["transformers"]
    assert "backend: ctranslate2 float32" in fast_err
    assert "backend: transformers" in slow_err
    assert fast == slow
    lines = fast.splitlines()
    assert len(lines) == len(sentences)
    assert len(set(lines)) >= 15, lines  # different translations, not one twenty times


@pytest.mark.parametrize(("ngram", "max_new"), [(0, 24), (2, 24), (0, 4)])
def test_batched_translations_and_ids_equal_transformers(
    translators, sentences, ngram: int, max_new: int
):
    """Batches of prompts of different lengths (left-padded for transformers), with and
    without an n-gram block (transformers blocks the prompt's n-grams too), and a bound
    of 4 new tokens: the same strings and, row by row, the same ids up to the stop."""
    reference, fast = translators
    options = DecodeOptions(num_beams=1, max_new_tokens=max_new, no_repeat_ngram_size=ngram)
    expected = reference.translate_many(sentences, options, batch_size=8)
    assert fast.translate_many(sentences, options, batch_size=8) == expected
    # One at a time (each bounded by its own length, not its batch's longest).
    one = [reference.translate(s, options).text for s in sentences[:3]]
    assert [fast.translate(s, options).text for s in sentences[:3]] == one
    prompts = _prompts(reference, sentences)
    assert len({len(p) for p in prompts[:8]}) > 1  # the batch really pads
    rows = _same_ids(reference, fast, prompts, options, bound=max_new)
    if max_new == 4:
        assert all(len(row) == 4 for row in rows if not set(row) & _stops(reference))


def test_beams_and_one_token_prompts_equal_transformers(translators, sentences):
    """Beam search (4 beams) gives transformers' ids; a one-token prompt batched with
    long ones too (CTranslate2 would count the long ones' prompts in max_length)."""
    reference, fast = translators
    prompts = _prompts(reference, sentences[:8])
    beams = _same_ids(reference, fast, prompts, DecodeOptions(num_beams=4, max_new_tokens=16), 16)
    assert len({tuple(row) for row in beams}) > 1
    mixed = [[prompts[0][-1]], prompts[1], [prompts[2][-1]], prompts[3]]
    rows = _same_ids(reference, fast, mixed, DecodeOptions(num_beams=1, max_new_tokens=8), 8)
    assert all(rows)  # each wrote something after its prompt


def test_generation_stops_at_every_stop_of_the_direction(exported, sentences):
    """A stop token the direction adds (as a chat turn's end is added) ends CTranslate2's
    output where it ends transformers': a token written fourth in the first output."""
    from workbench.core.model.direction import apply_direction
    from workbench.core.translate.ct2 import CT2Backend

    _, folder = exported
    reference, fast = _translators(folder)
    prompts = _prompts(reference, sentences[:8])
    options = DecodeOptions(num_beams=1, max_new_tokens=12)
    first = reference.backend.generate_ids(prompts[:1], options, 12)[0]
    stop = next(t for t in first[3:] if t not in _stops(reference))
    direction = dataclasses.replace(
        reference.direction, stop_ids=reference.direction.stop_ids | {stop}
    )
    apply_direction(reference.tokenizer, direction, reference.model)
    assert stop in _stops(reference)
    export = folder / "ct2-float32"
    backend = CT2Backend(export, fast.tokenizer, "cpu", direction=direction)
    assert stop in backend.stop_ids
    fast.backend = backend
    rows = _same_ids(reference, fast, prompts, options, 12)
    assert rows[0] == first[: first.index(stop) + 1]


def test_the_export_records_the_model_and_keeps_its_tokenizer(exported, translators):
    from workbench.core.translate.ct2 import export_model_facts
    from workbench.core.translate.ct2_export_info import read_export_info, read_vocabulary

    family, folder = exported
    export = folder / "ct2-float32"
    info = read_export_info(export)
    assert info.causal
    assert export_model_facts(export) == (MODEL_TYPES[family], 512)
    assert info.sliding_window == (128 if family == "gemma" else 0)
    for name in (*TOKENIZER_FILES[family], "generation_config.json"):
        assert (export / name).read_bytes() == (folder / name).read_bytes(), name
        assert name in info.source_files, name
    # One token per embedding row, each at the id the tokenizer gives it (Qwen's rows
    # past its tokens included).
    reference, fast = translators
    vocabulary = read_vocabulary(export)
    assert len(vocabulary) == reference.model.get_input_embeddings().weight.shape[0]
    tokenizer = reference.tokenizer
    known = min(len(tokenizer), len(vocabulary))
    assert vocabulary[:known] == tokenizer.convert_ids_to_tokens(list(range(known)))
    assert fast.backend.causal
    assert fast.backend.generator is not None
    assert "ctranslate2 float32 (cpu" in fast.backend_label
    assert fast.notices == reference.notices
    assert fast.default_options() == reference.default_options()


def test_the_export_folder_alone_translates_without_the_model(
    exported, translators, sentences, tmp_path
):
    """Loading an export reads no weights: the export folder copied away from its model
    (``--model`` naming it) translates as the model does."""
    _, folder = exported
    alone = tmp_path / "ct2-float32"
    shutil.copytree(folder / "ct2-float32", alone)
    fast = Translator.from_pretrained(str(alone), device="cpu", backend="ct2")
    reference = translators[0]
    options = DecodeOptions(num_beams=1, max_new_tokens=16)
    expected = reference.translate_many(sentences[:8], options)
    assert fast.translate_many(sentences[:8], options) == expected
    with pytest.raises(WorkbenchError, match="sampling"):  # the one sampler it lacks
        fast.backend.generate_ids(
            [[1, 2, 3]], DecodeOptions(do_sample=True, epsilon_cutoff=0.02), 4
        )


def test_a_changed_tokenizer_file_or_chat_template_makes_the_export_stale(exported, tmp_path):
    from workbench.core.translate.ct2_export import choose_export

    family, folder = exported
    for name in TOKENIZER_FILES[family][:2]:
        copy = tmp_path / name / "model"
        shutil.copytree(folder, copy)
        assert choose_export(str(copy), "auto")[0] == copy / "ct2-float32"
        with (copy / name).open("ab") as fh:
            fh.write(b"\n")
        export, notices = choose_export(str(copy), "auto")
        assert export is None, name
        assert len(notices) == 1, name
        assert "older version" in notices[0], name


# --- the conversions that need care ------------------------------------------------------


def _rebuilt(source: Path, folder: Path, config: Any) -> Path:
    """``source``'s tokenizer beside a new random model of ``config`` (varied weights)."""
    import torch
    from transformers import AutoModelForCausalLM, GenerationConfig

    shutil.copytree(source, folder, ignore=shutil.ignore_patterns("*.safetensors", "config.json"))
    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_config(config)
    generator = torch.Generator().manual_seed(0)
    with torch.no_grad():
        for name, parameter in model.named_parameters():
            if parameter.dim() >= 2:
                scale = 0.05 if ("embed" in name or "lm_head" in name) else 1.0
                parameter.copy_(torch.randn(parameter.shape, generator=generator) * scale)
    model.generation_config = GenerationConfig.from_pretrained(str(source))
    model.save_pretrained(str(folder))
    return folder


def _edited(source: Path, folder: Path, **changes: Any) -> Path:
    """A copy of ``source`` with ``changes`` in its config.json (the weights fit it)."""
    shutil.copytree(source, folder)
    path = folder / "config.json"
    config = json.loads(path.read_text(encoding="utf-8"))
    config.update(changes)
    path.write_text(json.dumps(config), encoding="utf-8")
    return folder


def _variant(name: str, causal_models: dict[str, Path], folder: Path) -> Path:
    from transformers import AutoConfig, GemmaConfig, Qwen2Config

    shape: dict[str, Any] = dict(
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=1,
        max_position_embeddings=512,
    )
    if name == "qwen2":  # Qwen2/2.5: biases on q, k and v, no q/k norm
        qwen = AutoConfig.from_pretrained(str(causal_models["qwen3"]))
        qwen2_config = Qwen2Config(
            **shape,
            vocab_size=qwen.vocab_size,
            tie_word_embeddings=True,
            bos_token_id=qwen.bos_token_id,
            eos_token_id=qwen.eos_token_id,
        )
        return _rebuilt(causal_models["qwen3"], folder, qwen2_config)
    if name == "gemma":  # Gemma 1: its RoPE base in rope_parameters
        gemma = AutoConfig.from_pretrained(str(causal_models["gemma"]))
        gemma_config = GemmaConfig(
            **shape,
            head_dim=16,
            vocab_size=gemma.vocab_size,
            bos_token_id=gemma.bos_token_id,
            eos_token_id=gemma.eos_token_id,
            pad_token_id=gemma.pad_token_id,
            rope_parameters={"rope_type": "default", "rope_theta": 5000.0},
        )
        return _rebuilt(causal_models["gemma"], folder, gemma_config)
    if name == "gemma3-scaled":  # as Gemma 3 4B and up: global positions scaled by 8
        rope = {
            "full_attention": {"rope_type": "linear", "factor": 8.0, "rope_theta": 1e6},
            "sliding_attention": {"rope_type": "default", "rope_theta": 1e4},
        }
        return _edited(
            causal_models["gemma"], folder, rope_parameters=rope, query_pre_attn_scalar=24
        )
    # A sliding window shorter than every prompt: CTranslate2 forwards such a prompt in
    # chunks that see more than the window, so the prompt goes through step by step.
    family = name.removesuffix("-window")
    source = _varied_copy(family, causal_models[family], folder.parent / f"{family}-source")
    return _edited(source, folder, sliding_window=16)


VARIANTS = ("qwen2", "gemma", "gemma3-scaled", "gemma-window", "mistral-window")


@pytest.mark.parametrize("name", VARIANTS)
def test_the_conversions_that_need_care_give_the_transformers_output(
    name: str, causal_models, sentences, tmp_path
):
    folder = _variant(name, causal_models, tmp_path / "model")
    _export(folder)
    reference, fast = _translators(folder)
    options = DecodeOptions(num_beams=1, max_new_tokens=24)
    expected = reference.translate_many(sentences, options, batch_size=8)
    assert fast.translate_many(sentences, options, batch_size=8) == expected
    assert len(set(expected)) >= 10, expected
    prompts = _prompts(reference, sentences)
    if name.endswith("-window"):
        assert min(len(p) for p in prompts) > 16 + 1
    _same_ids(reference, fast, prompts, options, 24)
    _same_ids(reference, fast, prompts[:8], DecodeOptions(1, 24, no_repeat_ngram_size=3), 24)


# --- refusals ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("model_type", "architecture", "says"),
    [
        ("hunyuan_v1_dense", "HunYuanDenseV1ForCausalLM", "has no converter for"),
        ("gemma2", "Gemma2ForCausalLM", "soft-capping"),
    ],
)
def test_a_decoder_type_ctranslate2_cannot_convert_is_refused_in_one_line(
    model_type: str, architecture: str, says: str, causal_models, tmp_path
):
    """Hunyuan-MT's type has no CTranslate2 loader, Gemma 2's loader leaves out its
    soft-capping: one line naming the type and --backend transformers, before any weight
    is read (the folder here has none), and no export folder."""
    folder = tmp_path / model_type
    shutil.copytree(causal_models["llama"], folder)
    (folder / "model.safetensors").unlink()
    path = folder / "config.json"
    config = json.loads(path.read_text(encoding="utf-8"))
    config.update(model_type=model_type, architectures=[architecture])
    path.write_text(json.dumps(config), encoding="utf-8")
    with pytest.raises(WorkbenchError) as refused:  # as `workbench export --ctranslate2`
        export_ctranslate2(str(folder))
    err = str(refused.value)
    assert refused.value.exit_code == 2, err
    assert len(err.splitlines()) == 1, err
    assert f"decoder-only {model_type} model" in err
    assert says in err
    assert "--backend transformers" in err
    assert not [p for p in folder.iterdir() if p.name.startswith((".ct2", "ct2"))]
