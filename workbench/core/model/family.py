"""The seam for model families: how each is told the language pair, and what follows.

Marian (OPUS-MT) takes a label such as ``>>cmn_Hans<<`` before a multi-target model's
source; NLLB-200, M2M100 and mBART-50 take the tokenizer's ``src_lang``/``tgt_lang`` and
the target code forced as the first token (the Hub's folders do not force it); T5 takes a
task prefix; decoder-only LLMs (Qwen, Llama, Gemma, Mistral, Hunyuan) take a prompt
(:mod:`workbench.core.model.prompts`). :func:`resolve_direction` turns the user's
languages into a :class:`~workbench.core.languages.Direction` for one model and
:func:`apply_direction` sets it on the tokenizer and the generation config, so no other
module asks which family a model is. An unlisted family goes the generic path, with a note.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from workbench.core.decoding import AUTO_LABEL
from workbench.core.languages import (
    DEFAULT_SOURCE_LANG,
    DEFAULT_TARGET_LANG,
    LANGUAGES,
    Direction,
    base_language,
)
from workbench.errors import WorkbenchError

#: ``target_label`` meaning "the label of --target-lang, where the model has labels".
AUTO = AUTO_LABEL


@dataclass(frozen=True)
class Family:
    """One family: the model types it covers and how its language codes look."""

    name: str
    title: str
    #: ``label`` (Marian's source prefix token), ``codes`` (tokenizer languages and a
    #: forced first token), ``prefix`` (a task prefix in the source text) or ``none``.
    mechanism: str
    code_pattern: str | None = None  # what its codes look like in the vocabulary
    #: The linear layers LoRA adapts by default: the attention's query and value
    #: projections, by this family's names (the generic family has none to assume).
    lora_targets: tuple[str, ...] = ()
    causal: bool = False  # decoder-only: a causal LM told the pair by a prompt
    instruction: str = "general"  # whose chat message it is sent (Hunyuan-MT's own)
    layer_norms: int = 2  # norms over the width a layer has (Gemma 2 and 3: four)
    qk_norm: bool = False  # queries and keys normalised per head (Qwen3, Gemma 3)

    def codes(self, tokenizer: Any) -> list[str]:
        """The language codes this tokenizer knows, sorted.

        M2M100's tokenizer keeps its codes outside ``get_vocab()`` (in
        ``lang_token_to_id``); the others list them in the vocabulary.
        """
        if self.code_pattern is None:
            return []
        pattern = re.compile(self.code_pattern)
        tokens = getattr(tokenizer, "lang_token_to_id", None) or tokenizer.get_vocab()
        return sorted(t for t in tokens if pattern.match(t))

    def tokenizer_language(self, code: str) -> str:
        """``code`` as the tokenizer's ``src_lang``/``tgt_lang`` take it (M2M100: ``zh``
        for ``__zh__``; the others: the code itself)."""
        return code.strip("_") if self is M2M100 else code

    def candidates(self, lang: str) -> list[str]:
        """This family's codes for a language, most likely first."""
        iso1 = base_language(lang) or lang
        names, script = LANGUAGES.get(iso1, ((lang,), ""))
        if self.name == "marian":
            return [
                *(f">>{n}_{script}<<" for n in names),
                *(f">>{n}<<" for n in names),
                f">>{iso1}<<",
            ]
        if self.name == "nllb":
            return [f"{n}_{script}" for n in names]
        if self.name == "m2m100":
            return [f"__{iso1}__"]
        return []

    def prefix_matches(self, lang: str, codes: list[str]) -> list[str]:
        """Codes of ``lang`` in another script or region (``zho_Hant``, ``zh_CN``)."""
        iso1 = base_language(lang) or lang
        names = LANGUAGES.get(iso1, ((lang,), ""))[0]
        stems = {"marian": [f">>{n}_" for n in names], "nllb": [f"{n}_" for n in names]}
        return [c for c in codes for s in stems.get(self.name, [f"{iso1}_"]) if c.startswith(s)]


_QV = ("q_proj", "v_proj")
MARIAN = Family("marian", "Marian (OPUS-MT)", "label", r"^>>[A-Za-z_]+<<$", _QV)
NLLB = Family("nllb", "NLLB-200", "codes", r"^[a-z]{3}_[A-Z][a-z]{3}$", _QV)
M2M100 = Family("m2m100", "M2M100", "codes", r"^__[a-z]{2,3}__$", _QV)
MBART50 = Family("mbart50", "mBART-50", "codes", r"^[a-z]{2}_[A-Z]{2}$", _QV)
T5 = Family("t5", "T5 / mT5", "prefix", lora_targets=("q", "v"))
GENERIC = Family("generic", "other seq2seq", "none")
FAMILIES = (MARIAN, NLLB, M2M100, MBART50, T5)
#: Decoder-only translators: ALMA and Tower are Llamas, Seed-X a Mistral; their attention
#: projections are named alike. Each Gemma and Qwen generation is its own shape.
_LM: dict[str, Any] = {"lora_targets": _QV, "causal": True}
QWEN = Family("qwen", "Qwen", "prompt", **_LM)
QWEN3 = Family("qwen", "Qwen", "prompt", **_LM, qk_norm=True)
LLAMA = Family("llama", "Llama", "prompt", **_LM)
GEMMA = Family("gemma", "Gemma", "prompt", **_LM)
GEMMA2 = Family("gemma", "Gemma", "prompt", **_LM, layer_norms=4)
GEMMA3 = Family("gemma", "Gemma", "prompt", **_LM, layer_norms=4, qk_norm=True)
MISTRAL = Family("mistral", "Mistral", "prompt", **_LM)
HUNYUAN = Family("hunyuan", "Hunyuan", "prompt", **_LM, instruction="hunyuan", qk_norm=True)
GENERIC_CAUSAL = Family("causal", "other decoder-only", "prompt", causal=True)
CAUSAL_FAMILIES = (QWEN, QWEN3, LLAMA, GEMMA, GEMMA2, GEMMA3, MISTRAL, HUNYUAN)
BY_NAME = {f.name: f for f in (*FAMILIES, GENERIC, *CAUSAL_FAMILIES, GENERIC_CAUSAL)}


#: ``config.model_type`` -> family. NLLB-200 is an ``m2m_100`` with FLORES-200 codes, told
#: apart by its tokenizer (:func:`detect_family`).
MODEL_TYPES = {
    "marian": MARIAN, "m2m_100": M2M100, "mbart": MBART50, "t5": T5, "mt5": T5, "umt5": T5,
    "qwen2": QWEN, "qwen3": QWEN3, "llama": LLAMA, "mistral": MISTRAL,
    "gemma": GEMMA, "gemma2": GEMMA2, "gemma3_text": GEMMA3, "hunyuan_v1_dense": HUNYUAN,
}  # fmt: skip


#: Encoders that transformers can also load as a causal LM head, which cannot translate.
ENCODER_TYPES = frozenset({"bert", "roberta", "xlm-roberta", "xlm-roberta-xl", "camembert",
                           "electra", "ernie", "distilbert", "deberta", "deberta-v2",
                           "modernbert"})  # fmt: skip


def family_of(model_config: Any) -> Family:
    """The family of a config by its ``model_type`` (NLLB-200 is told apart from M2M100
    by its tokenizer: :func:`detect_family`); an unlisted type is a generic decoder-only
    model when its checkpoint was saved as a causal LM (BertForMaskedLM is none), else a
    generic seq2seq one."""
    model_type = str(getattr(model_config, "model_type", ""))
    if model_type in MODEL_TYPES:
        return MODEL_TYPES[model_type]
    if getattr(model_config, "is_encoder_decoder", False) or model_type in ENCODER_TYPES:
        return GENERIC
    saved_as = getattr(model_config, "architectures", None) or []
    causal = (
        any(a.endswith(("ForCausalLM", "LMHeadModel")) for a in saved_as)
        if saved_as
        else _causal_type(model_type)
    )
    return GENERIC_CAUSAL if causal else GENERIC


def is_causal(model_config: Any) -> bool:
    """Whether a config is a decoder-only model (:func:`family_of`)."""
    return family_of(model_config).causal


def detect_family(model_type: str, tokenizer: Any) -> Family:
    """The family of a model from its ``config.model_type`` (and, for m2m_100, the
    tokenizer: NLLB-200 is an M2M100 with FLORES-200 codes)."""
    family = MODEL_TYPES.get(model_type, GENERIC)
    if family is GENERIC and _causal_type(model_type):
        return GENERIC_CAUSAL
    if family is M2M100 and "eng_Latn" in tokenizer.get_vocab():
        return NLLB
    return family


def _causal_type(model_type: str) -> bool:
    from transformers.models.auto import modeling_auto as auto

    return (
        model_type in auto.MODEL_FOR_CAUSAL_LM_MAPPING_NAMES
        and model_type not in auto.MODEL_FOR_SEQ_TO_SEQ_CAUSAL_LM_MAPPING_NAMES
    )


def max_positions(model_config: Any) -> int | None:
    """Tokens a source (or an output) may have: the position table's rows, or None for
    relative positions (T5), which have no table to run past."""
    if family_of(model_config) is T5:
        return None
    value = getattr(model_config, "max_position_embeddings", None)
    return int(value) if value else None


def default_lora_targets(model_type: str) -> tuple[str, ...]:
    """The layers ``--lora`` adapts when ``--lora-targets`` is not given, or one line
    asking for them (a family the workbench does not know)."""
    targets = MODEL_TYPES.get(model_type, GENERIC).lora_targets
    if not targets:
        raise WorkbenchError(
            f"model type '{model_type}' has no LoRA targets the workbench knows; pass "
            "--lora-targets with its attention projections' names (such as q_proj,v_proj)"
        )
    return targets


def _unknown(what: str, value: str, codes: list[str], family: Family) -> WorkbenchError:
    # All of them, on one line: NLLB's 202 codes are long, but a user looking for theirs
    # needs the full list (and can grep it).
    return WorkbenchError(
        f"{what} '{value}' is not a language of this {family.title} model; pass en, zh, "
        f"... or one of its {len(codes)} codes: {', '.join(codes)}"
    )


def _code(family: Family, lang: str, codes: list[str], what: str) -> str:
    """The model's code for ``lang``: the code itself when the user gave a full one."""
    given = lang.strip()
    for direct in (given, f">>{given}<<" if family is MARIAN else given):
        if direct in codes:
            return direct
    if given.startswith(">>") or "_" in given.strip("_"):  # a full code (zho_Hant): as is
        raise _unknown(what, lang, codes, family)
    for candidate in family.candidates(given):
        if candidate in codes:
            return candidate
    found = family.prefix_matches(given, codes)  # zh -> zh_CN, or another script
    if found:
        return found[0]
    raise _unknown(what, lang, codes, family)


def resolve_direction(
    model_type: str,
    positions: int | None,
    tokenizer: Any,
    source_lang: str,
    target_lang: str,
    label: str | None = AUTO,
    source_prefix: str | None = None,
    prompt: str | None = None,
    prompt_template: str | None = None,
    model_name: str = "",
) -> Direction:
    """The direction ``source_lang`` → ``target_lang`` as this model is told it.

    ``label`` is Marian's: :data:`AUTO` takes the model's label for ``target_lang`` (none
    for a single-pair model), a ``>>xxx<<`` token is checked against the vocabulary, None
    is no label. ``source_prefix`` is put before every source (T5's task prefix). A
    language the model does not know is one line listing the codes it does.

    A decoder-only model is told the pair by ``prompt`` (or ``prompt_template``):
    :func:`prompted_direction`.
    """
    family = detect_family(model_type, tokenizer)
    codes = family.codes(tokenizer)
    common: dict[str, Any] = {
        "family": family.name,
        "source_lang": source_lang,
        "target_lang": target_lang,
        "max_positions": positions,
    }
    prefix = source_prefix or ""
    if family.causal:
        if label not in (AUTO, None) or prefix:
            flag = "--source-prefix" if prefix else "--label"
            raise WorkbenchError(
                f"{flag} is for seq2seq models; {model_name or 'this'} is a decoder-only "
                f"model, told the pair by its prompt: drop {flag} (--prompt-template FILE "
                "sets the prompt)"
            )
        from workbench.core.model.prompts import prompted_direction

        return prompted_direction(
            common, tokenizer, family.instruction, model_name, prompt, prompt_template
        )
    if prompt or prompt_template:
        raise WorkbenchError(
            f"--prompt and --prompt-template are for decoder-only models; this is a "
            f"{family.title} model, which takes no prompt: drop them"
        )
    if family is MARIAN:
        if label == AUTO:
            target = _code(family, target_lang, codes, "--target-lang") if codes else None
        else:
            target = label
            check_target_label(tokenizer, target)
        vocab = tokenizer.get_vocab()
        return Direction(
            **common,
            target_code=target,
            source_prefix=f"{target} {prefix}" if target else prefix,
            code_ids=frozenset(vocab[c] for c in codes),
        )
    if family.mechanism == "codes":
        if label not in (AUTO, None) and label in codes:  # --label zho_Hans: a target code
            target_lang = label
        source = _code(family, source_lang, codes, "--source-lang")
        target = _code(family, target_lang, codes, "--target-lang")
        return Direction(
            **common,
            source_code=source,
            target_code=target,
            source_prefix=prefix,
            first_token_id=int(tokenizer.convert_tokens_to_ids(target)),
            code_ids=frozenset(int(i) for i in tokenizer.convert_tokens_to_ids(codes)),
        )
    notes: tuple[str, ...] = ()
    if label not in (AUTO, None):
        raise WorkbenchError(
            f"target label '{label}' is for Marian models; this is a {family.title} model: "
            "drop --label" + (" and pass --source-prefix" if family is T5 else "")
        )
    if family is T5 and not prefix:
        notes = (
            "T5 models are told the task by a prefix: pass --source-prefix, e.g. "
            "'translate English to German: '",
        )
    if family is GENERIC:
        notes = (
            f"model type '{model_type}' has no language codes the workbench knows: the "
            "source is fed as it is (--source-prefix adds text before it)",
        )
    return Direction(**common, source_prefix=prefix, notes=notes)


def direction_for(
    model_type: str,
    positions: int | None,
    tokenizer: Any,
    settings: dict[str, Any],
    source_lang: str | None = None,
    target_lang: str | None = None,
    label: str | None = AUTO,
    source_prefix: str | None = None,
    prompt: str | None = None,
    prompt_template: str | None = None,
    model_name: str = "",
) -> Direction:
    """The direction a front end decodes a model in: the user's flags first, then what
    the model's ``settings`` recorded (workbench.json, or a Hub id's preset), then the
    workbench's defaults (en → zh).

    ``label`` :data:`AUTO` keeps the recorded label unless a new ``target_lang`` is given.
    A recorded prompt is kept unless a prompt flag is given; a recorded chat message (it
    names the languages) is dropped when new languages are.
    """
    if label == AUTO and target_lang is None and "target_label" in settings:
        label = settings["target_label"]
    if prompt_template is None and prompt in (None, settings.get("prompt")):
        prompt = settings.get("prompt")
        # A recorded chat message names the languages: kept unless other ones are asked.
        new_languages = (source_lang or settings.get("source_lang")) != settings.get(
            "source_lang"
        ) or (target_lang or settings.get("target_lang")) != settings.get("target_lang")
        if not (prompt == "chat" and new_languages):
            prompt_template = settings.get("prompt_template")
    return resolve_direction(
        model_type,
        positions,
        tokenizer,
        source_lang or settings.get("source_lang") or DEFAULT_SOURCE_LANG,
        target_lang or settings.get("target_lang") or DEFAULT_TARGET_LANG,
        label,
        source_prefix if source_prefix is not None else settings.get("source_prefix"),
        prompt,
        prompt_template,
        model_name,
    )


def apply_direction(tokenizer: Any, direction: Direction, model: Any = None) -> None:
    """Set the direction where transformers reads it: the tokenizer's languages (source
    codes and training labels) and the first generated token (every ``generate``)."""
    family = BY_NAME.get(direction.family, GENERIC)
    if direction.causal:
        from workbench.core.model.prompts import apply_prompt

        apply_prompt(tokenizer, direction, model)
        return
    if direction.source_code is not None:
        tokenizer.src_lang = family.tokenizer_language(direction.source_code)
    if direction.target_code is not None and direction.first_token_id is not None:
        tokenizer.tgt_lang = family.tokenizer_language(direction.target_code)
    if model is not None and direction.first_token_id is not None:
        model.generation_config.forced_bos_token_id = direction.first_token_id


def check_target_label(tokenizer: Any, label: str | None) -> None:
    """Fail unless ``label`` is one known token of the tokenizer's vocabulary.

    Multi-target opus-mt models select the output language with a token such as
    ``>>cmn_Hans<<``; an unknown label (the assignment's ``>>cmn<<``) is silently split
    into pieces and the model ignores it.
    """
    if not label:
        return
    vocab = tokenizer.get_vocab()
    if label in vocab:
        return
    known = MARIAN.codes(tokenizer)
    hint = (
        f"known labels include: {', '.join(known[:12])}"
        if known
        else "this model has no language labels; set target_label = none"
    )
    raise WorkbenchError(
        f"target label '{label}' is not a single token of this model's vocabulary, so the "
        f"model would ignore it; {hint}"
    )
