"""The registry of model families: which family a model is, and what that family is.

A family is named by the ``model_type`` of a model's config (NLLB-200 by its tokenizer as
well): how it is told the language pair (its mechanism: Marian's label, NLLB's, M2M100's
and mBART-50's language codes, T5's task prefix, a decoder-only model's prompt), what its
codes look like, which layers LoRA adapts, its position bound and its layers' norms. What
follows from the mechanism for one model and one request is
:mod:`workbench.core.model.direction`'s; everything else asks this registry, so no module
branches on ``model_type``. An unlisted type is a generic seq2seq or decoder-only family.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from workbench.core.languages import LANGUAGES, base_language
from workbench.errors import WorkbenchError


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
    #: The transformer blocks ``--shard`` gathers one at a time, by class name, where the
    #: model's own ``_no_split_modules`` does not say them (Marian declares none; mBART's
    #: also names its attention, a unit inside a block).
    blocks: tuple[str, ...] = ()

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
MARIAN = Family(
    "marian",
    "Marian (OPUS-MT)",
    "label",
    r"^>>[A-Za-z_]+<<$",
    _QV,
    blocks=("MarianEncoderLayer", "MarianDecoderLayer"),
)
NLLB = Family("nllb", "NLLB-200", "codes", r"^[a-z]{3}_[A-Z][a-z]{3}$", _QV)
M2M100 = Family("m2m100", "M2M100", "codes", r"^__[a-z]{2,3}__$", _QV)
MBART50 = Family(
    "mbart50",
    "mBART-50",
    "codes",
    r"^[a-z]{2}_[A-Z]{2}$",
    _QV,
    blocks=("MBartEncoderLayer", "MBartDecoderLayer"),
)
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


def shard_blocks(model: Any) -> tuple[str, ...]:
    """The class names of the transformer blocks ``--shard`` wraps, each its own unit: the
    family's where it names them, else the model's ``_no_split_modules`` (transformers'
    own list of the blocks not to split); only classes the model has, by name. Empty: no
    block is known, and the whole model is one unit."""
    base = model.get_base_model() if hasattr(model, "get_base_model") else model
    named = family_of(base.config).blocks or tuple(getattr(base, "_no_split_modules", None) or ())
    present = {type(module).__name__ for module in base.modules()}
    return tuple(sorted(name for name in named if name in present))
