"""CTranslate2 exports of every family beside Marian (tests/unit/test_ct2_backend.py has it):
NLLB-200, M2M100, mBART-50 and T5, from the tiny Hub-shaped models of
tests/helpers/family_models.py. Each export at float32 must give transformers' greedy strings
with the target language code forced (CTranslate2's target prefix), show no language
code, bound the output as ``max_new_tokens`` does, and go stale when its tokenizer
changes."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from workbench.core.config.direction_request import DirectionRequest
from workbench.core.decoding import DecodeOptions
from workbench.core.translate.ct2_export import export_ctranslate2
from workbench.core.translate.translator import Translator
from workbench.errors import WorkbenchError

pytest.importorskip("ctranslate2")

FAMILIES = ("nllb", "m2m100", "mbart50", "t5")
#: The prefix T5 is told the task with (tests/helpers/family_models.py's T5_PREFIX).
T5_PREFIX = "translate English to Chinese: "
#: The tokenizer files each family's folder holds (tests/helpers/family_models.py).
TOKENIZER_FILES = {
    "nllb": ("tokenizer.json", "sentencepiece.bpe.model", "tokenizer_config.json"),
    "m2m100": ("vocab.json", "sentencepiece.bpe.model", "tokenizer_config.json"),
    "mbart50": ("tokenizer.json", "sentencepiece.bpe.model", "tokenizer_config.json"),
    "t5": ("tokenizer.json", "spiece.model", "tokenizer_config.json"),
}
MODEL_TYPES = {"nllb": "m2m_100", "m2m100": "m2m_100", "mbart50": "mbart", "t5": "t5"}


def _languages(family: str) -> DirectionRequest:
    prefix = T5_PREFIX if family == "t5" else None
    return DirectionRequest(source_lang="en", target_lang="zh", source_prefix=prefix)


def _translators(folder: Path, family: str) -> tuple[Translator, Translator]:
    """The transformers reference and the CTranslate2 export of ``folder``."""
    reference = Translator.from_pretrained(
        str(folder), device="cpu", backend="transformers", request=_languages(family)
    )
    fast = Translator.from_pretrained(
        str(folder), device="cpu", backend="ct2", request=_languages(family)
    )
    assert reference.backend.name == "transformers"
    assert fast.backend.name == "ctranslate2"
    return reference, fast


def _varied_copy(source: Path, folder: Path) -> Path:
    """A copy of the tiny model ``source`` in ``folder``, with weights whose output depends
    on the input.

    The builder's init (std 0.02) and even std 0.3 everywhere make these pre-norm models
    repeat one token (often a language code, which is never shown) for every sentence;
    embeddings at 0.3 and the other matrices at 1.0 give 14 to 20 different outputs for 20
    sentences, so "the same strings" compares something.
    """
    import torch
    from transformers import AutoModelForSeq2SeqLM

    shutil.copytree(source, folder)
    model = AutoModelForSeq2SeqLM.from_pretrained(str(folder))
    generator = torch.Generator().manual_seed(0)
    with torch.no_grad():
        for name, parameter in model.named_parameters():
            if parameter.dim() >= 2:
                scale = 0.3 if ("embed" in name or "shared" in name or "lm_head" in name) else 1.0
                parameter.copy_(torch.randn(parameter.shape, generator=generator) * scale)
    model.save_pretrained(str(folder))
    return folder


def _export(folder: Path) -> None:
    """``workbench export --ctranslate2 --quantization float32``'s export of ``folder``."""
    export_ctranslate2(str(folder), "float32")


def _set_json(path: Path, **values: object) -> None:
    data = json.loads(path.read_text(encoding="utf-8"))
    data.update(values)
    path.write_text(json.dumps(data), encoding="utf-8")


@pytest.fixture(scope="module", params=FAMILIES)
def exported(request, family_models, tmp_path_factory) -> tuple[str, Path]:
    """A copy of the family's tiny model (:func:`_varied_copy`), exported at float32."""
    family = request.param
    folder = _varied_copy(family_models[family], tmp_path_factory.mktemp(f"ct2-{family}") / "model")
    _export(folder)
    return family, folder


@pytest.fixture(scope="module")
def sentences(hsk_pairs) -> list[str]:
    return [p.source for p in hsk_pairs[:10]]


@pytest.mark.parametrize(("ngram", "max_new"), [(0, 16), (2, 16), (0, 4)])
def test_float32_export_gives_the_transformers_greedy_strings(
    exported, sentences, ngram: int, max_new: int
):
    family, folder = exported
    reference, fast = _translators(folder, family)
    options = DecodeOptions(num_beams=1, max_new_tokens=max_new, no_repeat_ngram_size=ngram)
    expected = reference.translate_many(sentences, options, batch_size=4)
    assert fast.translate_many(sentences, options, batch_size=4) == expected
    assert [fast.translate(s, options).text for s in sentences[:3]] == expected[:3]
    assert len(set(expected)) >= 4  # different strings, not one answer ten times
    codes = [c for c in fast.tokenizer.convert_ids_to_tokens(sorted(fast.direction.code_ids))]
    assert not [text for text in expected if any(c in text for c in codes)]


def test_the_bound_counts_the_code_and_the_forced_end_as_transformers(exported):
    """``max_new_tokens`` 5 counts the forced language code (and mBART's forced ``</s>``):
    CTranslate2 must stop where transformers does, with the same ids."""
    family, folder = exported
    reference, fast = _translators(folder, family)
    ids = reference.tokenizer(reference.direction.source_text("I like to drink tea."))["input_ids"]
    slow = reference.backend.generate_ids([ids], DecodeOptions(1, 16), 5)[0]
    quick = fast.backend.generate_ids([ids], DecodeOptions(1, 16), 5)[0]
    assert len(slow) == 1 + 5  # the decoder start, then five new tokens
    forced_end = reference.backend.generation_config.forced_eos_token_id is not None
    assert quick == (slow[1:-1] if forced_end else slow[1:])
    first = fast.direction.first_token_id
    assert (quick[0] == first) if family != "t5" else first is None


def test_the_export_records_the_model_and_keeps_its_tokenizer(exported):
    from workbench.core.translate.ct2 import export_model_facts
    from workbench.core.translate.ct2_export_info import read_export_info

    family, folder = exported
    export = folder / "ct2-float32"
    facts = export_model_facts(export)
    assert facts.model_type == MODEL_TYPES[family]
    assert facts.max_positions == (None if family == "t5" else 1024)
    for name in TOKENIZER_FILES[family]:
        assert (export / name).read_bytes() == (folder / name).read_bytes(), name
        assert name in read_export_info(export).source_files, name
    _, fast = _translators(folder, family)
    assert "ctranslate2 float32 (cpu" in fast.backend_label
    assert not fast.notices


def test_a_changed_tokenizer_file_makes_the_export_stale(exported, tmp_path: Path):
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


#: mBART-50 configs with a special id null, each beside what transformers falls back to:
#: transformers 5's MBart50Tokenizer has no bos token (its saved tokenizer_config.json has
#: no bos_token), so a config built from it has bos_token_id null in config.json and
#: generation_config.json; MBartConfig's default decoder_start_token_id is None, while the
#: generation config keeps the Hub's 2.
NULL_IDS = {
    "bos_token_id": ("config.json", "generation_config.json"),
    "decoder_start_token_id": ("config.json",),
}


@pytest.mark.parametrize("key", sorted(NULL_IDS))
def test_an_mbart50_config_with_a_null_special_id_exports_and_translates(
    key: str, family_models, sentences, tmp_path
):
    """bos_token_id null: the export's bos is the tokenizer's ``<s>``; decoder_start_token_id
    null: it starts from the generation config's ``</s>``; both translate as transformers."""
    folder = _varied_copy(family_models["mbart50"], tmp_path / "model")
    for name in NULL_IDS[key]:
        _set_json(folder / name, **{key: None})
    tokenizer_config = json.loads((folder / "tokenizer_config.json").read_text(encoding="utf-8"))
    assert "bos_token" not in tokenizer_config  # as transformers 5 saves mBART-50's
    _export(folder)
    export = folder / "ct2-float32"
    written = json.loads((export / "config.json").read_text(encoding="utf-8"))
    assert (written["bos_token"], written["decoder_start_token"]) == ("<s>", "</s>")
    reference, fast = _translators(folder, "mbart50")
    options = DecodeOptions(num_beams=1, max_new_tokens=16)
    expected = reference.translate_many(sentences, options, batch_size=4)
    assert fast.translate_many(sentences, options, batch_size=4) == expected
    assert len(set(expected)) >= 4


def test_an_mbart50_without_a_bos_id_or_an_s_token_is_refused_in_one_line(family_models, tmp_path):
    """bos_token_id null and a tokenizer whose ``<s>`` is renamed ``<cls>``: nothing names
    the bos token CTranslate2 needs, so the export says so and the fix, and writes nothing."""
    folder = tmp_path / "model"
    shutil.copytree(family_models["mbart50"], folder)
    for name in ("tokenizer.json", "tokenizer_config.json"):
        path = folder / name
        path.write_text(path.read_text(encoding="utf-8").replace('"<s>"', '"<cls>"'), "utf-8")
    _set_json(folder / "config.json", bos_token_id=None)
    with pytest.raises(WorkbenchError) as refused:  # as `workbench export --ctranslate2`
        export_ctranslate2(str(folder))
    err = str(refused.value)
    assert refused.value.exit_code == 2, err
    assert len(err.splitlines()) == 1, err
    assert "bos_token_id null in config.json" in err
    assert "no bos token and no <s>" in err
    assert "set bos_token_id in its config.json" in err
    assert not [p for p in folder.iterdir() if p.name.startswith((".ct2", "ct2"))]


def test_a_family_without_a_loader_is_refused_in_one_line(family_models, tmp_path):
    """A BART model (the generic family) is refused naming its model_type and the fix."""
    folder = tmp_path / "bart"
    shutil.copytree(family_models["mbart50"], folder)
    config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    config.update(model_type="bart", architectures=["BartForConditionalGeneration"])
    (folder / "config.json").write_text(json.dumps(config), encoding="utf-8")
    with pytest.raises(WorkbenchError) as refused:  # as `workbench export --ctranslate2`
        export_ctranslate2(str(folder))
    err = str(refused.value)
    assert refused.value.exit_code == 2, err
    assert len(err.splitlines()) == 1, err
    assert "is a bart model" in err
    assert "--backend transformers" in err
    assert not [p for p in folder.iterdir() if p.name.startswith((".ct2", "ct2"))]
