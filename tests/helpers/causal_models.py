"""Tiny random decoder-only translation models of four LLM-translator families, saved as
the Hub ships them.

Next to ``tests/helpers/family_models.py``'s encoder-decoder families these imitate the causal
language models people fine-tune for translation:

- ``qwen3``: Qwen3 (``Qwen3ForCausalLM``, tied embeddings as Qwen3-0.6B) with a byte-level
  BPE tokenizer (``Qwen2Tokenizer``) trained here, Qwen3's special tokens and a chat
  template that renders ChatML turns and the empty ``<think>`` block of
  ``enable_thinking=False`` as Qwen3's does.
- ``llama``: ALMA (``LlamaForCausalLM``) with a Llama-2 SentencePiece BPE tokenizer:
  no pad token and no chat template (ALMA is prompted with plain text).
- ``gemma``: Gemma 3 text (``Gemma3ForCausalLM``, model_type ``gemma3_text``, as
  gemma-3-1b-it; TranslateGemma's text side is this decoder) with Gemma's SentencePiece
  layout, its turn markers and chat template.
- ``mistral``: Seed-X (``MistralForCausalLM``) with a Llama-like SentencePiece tokenizer,
  no chat template, and Seed-X's language tags (``<zh>``, ``<en>``, ...) as special
  tokens of their own: its prompt ends with the target's tag. No pad token, as the
  Mistral-7B tokenizer it follows (Seed-X's own tokenizer files were not at hand to
  confirm that).

Each is a 2-layer, 32-wide random model (2 attention heads sharing 1 key-value head) with
512 positions, written with ``save_pretrained`` next to its tokenizer, whose
``model_max_length`` is those 512 positions. As on the Hub there is no ``workbench.json``;
the generation configs are the families' own (Qwen3's and Gemma 3's sample by default).
Every family converts with CTranslate2's ``TransformersConverter`` (Qwen3Loader,
LlamaLoader, Gemma3Loader, MistralLoader). Building all four takes about a second.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.helpers.family_models import LOAD_KEYS, train_spm

#: The families, in the order the tests go through them.
CAUSAL_FAMILIES = ("qwen3", "llama", "gemma", "mistral")

#: The Hub model each family's tiny model imitates.
HUB_IDS = {
    "qwen3": "Qwen/Qwen3-0.6B",
    "llama": "haoranxu/ALMA-7B",
    "gemma": "google/gemma-3-1b-it",
    "mistral": "ByteDance-Seed/Seed-X-PPO-7B",
}

#: The model class each family's config.json names.
ARCHITECTURES = {
    "qwen3": "Qwen3ForCausalLM",
    "llama": "LlamaForCausalLM",
    "gemma": "Gemma3ForCausalLM",
    "mistral": "MistralForCausalLM",
}

#: The shape every family shares: GQA with one key-value head, head_dim given explicitly.
HIDDEN, FFN, LAYERS, HEADS, KV_HEADS, HEAD_DIM = 32, 64, 2, 2, 1, 16
#: Positions of every model, and its tokenizer's ``model_max_length``.
MAX_POSITIONS = 512

#: Pieces (or BPE tokens) asked for; a small corpus may support fewer.
VOCAB = 1000

#: Load-only keys of tokenizer_config.json: family_models' and the path of the
#: SentencePiece model the tokenizer was converted from.
CAUSAL_LOAD_KEYS = (*LOAD_KEYS, "vocab_file")

# --- Qwen3 -------------------------------------------------------------------------------

#: Qwen3's special tokens, after the byte-level vocabulary as in Qwen3's (151643-151645).
QWEN_ENDOFTEXT, QWEN_IM_START, QWEN_IM_END = "<|endoftext|>", "<|im_start|>", "<|im_end|>"
#: Qwen3's thinking markers: added tokens, not special (decoding keeps them).
QWEN_THINK = ("<think>", "</think>")
#: Qwen3's embedding rows are padded past its tokens (151,669 -> 151,936, a multiple of 128).
QWEN_VOCAB_MULTIPLE = 128

#: Qwen3's chat template, in the parts a translator uses: ChatML turns; an assistant turn
#: after the last user turn renders its reasoning (empty ones too) in <think> tags, and the
#: generation prompt of ``enable_thinking=False`` is followed by an empty <think> block. A
#: reasoning block already in an assistant's content is split off as Qwen3's template does.
#: (Tools and tool responses are left out.)
QWEN3_CHAT_TEMPLATE = r"""
{%- if messages[0].role == 'system' %}
    {{- '<|im_start|>system\n' + messages[0].content + '<|im_end|>\n' }}
{%- endif %}
{%- set ns = namespace(last_query_index=messages|length - 1, found=false) %}
{%- for message in messages[::-1] %}
    {%- if message.role == 'user' and not ns.found %}
        {%- set ns.found = true %}
        {%- set ns.last_query_index = messages|length - 1 - loop.index0 %}
    {%- endif %}
{%- endfor %}
{%- for message in messages %}
    {%- set content = message.content if message.content is string else '' %}
    {%- if message.role == 'user' or (message.role == 'system' and not loop.first) %}
        {{- '<|im_start|>' + message.role + '\n' + content + '<|im_end|>\n' }}
    {%- elif message.role == 'assistant' %}
        {%- set reasoning_content = '' %}
        {%- if message.reasoning_content is string %}
            {%- set reasoning_content = message.reasoning_content %}
        {%- elif '</think>' in content %}
            {%- set reasoning_content = content.split('</think>')[0].rstrip('\n').split('<think>')[-1].lstrip('\n') %}
            {%- set content = content.split('</think>')[-1].lstrip('\n') %}
        {%- endif %}
        {%- if loop.index0 > ns.last_query_index and (loop.last or reasoning_content) %}
            {{- '<|im_start|>assistant\n<think>\n' + reasoning_content.strip('\n') + '\n</think>\n\n' + content.lstrip('\n') }}
        {%- else %}
            {{- '<|im_start|>assistant\n' + content }}
        {%- endif %}
        {{- '<|im_end|>\n' }}
    {%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}
    {{- '<|im_start|>assistant\n' }}
    {%- if enable_thinking is defined and enable_thinking is false %}
        {{- '<think>\n\n</think>\n\n' }}
    {%- endif %}
{%- endif %}
"""  # noqa: E501

# --- Llama (ALMA) ----------------------------------------------------------------------

#: Llama-2's SentencePiece model: BPE, <unk> 0, <s> 1, </s> 2, no pad, bytes as fallback
#: pieces (<0x00>..<0xFF> at 3-258), digits split, a dummy prefix space, no normalisation.
LLAMA_SPM_OPTIONS = {
    "unk_id": 0,
    "bos_id": 1,
    "eos_id": 2,
    "pad_id": -1,
    "byte_fallback": True,
    "split_digits": True,
    "add_dummy_prefix": True,
    "remove_extra_whitespaces": False,
    "normalization_rule_name": "identity",
    "allow_whitespace_only_pieces": True,
}

#: ALMA's prompt (its README's), with ``{source}``.
ALMA_PROMPT = "Translate this from English to Chinese:\nEnglish: {source}\nChinese:"

# --- Gemma 3 -----------------------------------------------------------------------------

#: Gemma's turn markers (105 and 106 in Gemma 3's vocabulary; here right after <mask>).
GEMMA_START_OF_TURN, GEMMA_END_OF_TURN = "<start_of_turn>", "<end_of_turn>"

#: Gemma's SentencePiece model: BPE, <pad> 0, <eos> 1, <bos> 2, <unk> 3, then <mask> and
#: the turn markers; bytes as fallback pieces; no dummy prefix; no normalisation.
GEMMA_SPM_OPTIONS = {
    "pad_id": 0,
    "eos_id": 1,
    "bos_id": 2,
    "unk_id": 3,
    "pad_piece": "<pad>",
    "eos_piece": "<eos>",
    "bos_piece": "<bos>",
    "unk_piece": "<unk>",
    "user_defined_symbols": ["<mask>", GEMMA_START_OF_TURN, GEMMA_END_OF_TURN],
    "byte_fallback": True,
    "split_digits": True,
    "add_dummy_prefix": False,
    "remove_extra_whitespaces": False,
    "normalization_rule_name": "identity",
    "allow_whitespace_only_pieces": True,
}

#: Gemma 3's chat template: <bos>, then ``<start_of_turn>{role}\n{content}<end_of_turn>\n``
#: with "assistant" named "model", a system message put before the first user turn, roles
#: alternating, and ``<start_of_turn>model\n`` as the generation prompt. (Images left out.)
GEMMA_CHAT_TEMPLATE = r"""{{ bos_token }}
{%- if messages[0]['role'] == 'system' -%}
    {%- if messages[0]['content'] is string -%}
        {%- set first_user_prefix = messages[0]['content'] + '\n\n' -%}
    {%- else -%}
        {%- set first_user_prefix = messages[0]['content'][0]['text'] + '\n\n' -%}
    {%- endif -%}
    {%- set loop_messages = messages[1:] -%}
{%- else -%}
    {%- set first_user_prefix = '' -%}
    {%- set loop_messages = messages -%}
{%- endif -%}
{%- for message in loop_messages -%}
    {%- if (message['role'] == 'user') != (loop.index0 % 2 == 0) -%}
        {{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}
    {%- endif -%}
    {%- set role = 'model' if message['role'] == 'assistant' else message['role'] -%}
    {{ '<start_of_turn>' + role + '\n' + (first_user_prefix if loop.first else '') }}
    {%- if message['content'] is string -%}
        {{ message['content'] | trim }}
    {%- else -%}
        {%- for item in message['content'] if item['type'] == 'text' -%}
            {{ item['text'] | trim }}
        {%- endfor -%}
    {%- endif -%}
    {{ '<end_of_turn>\n' }}
{%- endfor -%}
{%- if add_generation_prompt -%}
    {{ '<start_of_turn>model\n' }}
{%- endif -%}
"""

#: Gemma 3's attention pattern, shortened: a sliding-window layer, then a global one.
GEMMA_LAYER_TYPES = ["sliding_attention", "full_attention"]
GEMMA_SLIDING_WINDOW = 128

# --- Mistral (Seed-X) --------------------------------------------------------------------

#: Seed-X's 28 languages: each has a tag token (``<zh>``) that ends the prompt.
SEED_X_LANGUAGES = (
    "ar", "cs", "da", "de", "en", "es", "fi", "fr", "hr", "hu", "id", "it", "ja", "ko",
    "ms", "nb", "nl", "no", "pl", "pt", "ro", "ru", "sv", "th", "tr", "uk", "vi", "zh",
)  # fmt: skip

#: Seed-X's prompt (its README's), with ``{source}``: the target's tag ends it.
SEED_X_PROMPT = "Translate the following English sentence into Chinese:\n{source} <zh>"


def seed_x_tag(language: str) -> str:
    """The tag token of ``language`` (a SEED_X_LANGUAGES code) in the mistral tokenizer."""
    return f"<{language}>"


# --- Building ----------------------------------------------------------------------------


def _tidy_tokenizer_config(repo: Path, **settings: Any) -> None:
    """tokenizer_config.json without load-only keys, with ``settings`` written in, and
    without ``extra_special_tokens`` that repeat a named special token (SentencePiece
    conversion lists the model's control pieces there; the Hub's configs do not)."""
    path = repo / "tokenizer_config.json"
    config = json.loads(path.read_text(encoding="utf-8"))
    for key in CAUSAL_LOAD_KEYS:
        config.pop(key, None)
    config.update(settings)
    named = {config.get(f"{name}_token") for name in ("bos", "eos", "unk", "pad", "mask")}
    extra = [t for t in config.get("extra_special_tokens", []) if t not in named]
    if extra:
        config["extra_special_tokens"] = extra
    else:
        config.pop("extra_special_tokens", None)
    text = json.dumps(config, indent=2, ensure_ascii=False, sort_keys=True)
    path.write_text(text + "\n", encoding="utf-8")


def _qwen3_tokenizer(work: Path, sentences: list[str]) -> Any:
    """A Qwen2Tokenizer over a byte-level BPE trained on ``sentences`` (Qwen's
    pre-tokenizer regex, NFC, ByteLevel decoding), then Qwen3's added tokens."""
    from tokenizers import (
        AddedToken,
        Regex,
        Tokenizer,
        decoders,
        models,
        normalizers,
        pre_tokenizers,
        processors,
        trainers,
    )
    from transformers import Qwen2Tokenizer
    from transformers.models.qwen2.tokenization_qwen2 import PRETOKENIZE_REGEX

    bpe = Tokenizer(models.BPE(unk_token=None, fuse_unk=False, byte_fallback=False))
    bpe.normalizer = normalizers.NFC()
    bpe.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Split(Regex(PRETOKENIZE_REGEX), behavior="isolated", invert=False),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ]
    )
    bpe.decoder = decoders.ByteLevel()
    bpe.post_processor = processors.ByteLevel(trim_offsets=False)
    trainer = trainers.BpeTrainer(
        vocab_size=VOCAB,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),  # every byte is a token
        show_progress=False,
    )
    bpe.train_from_iterator([s for s in sentences if s.strip()], trainer)
    specials = (QWEN_ENDOFTEXT, QWEN_IM_START, QWEN_IM_END)
    bpe.add_special_tokens([AddedToken(t, special=True, normalized=False) for t in specials])
    bpe.add_tokens([AddedToken(t, special=False, normalized=False) for t in QWEN_THINK])
    work.mkdir(parents=True, exist_ok=True)
    bpe.model.save(str(work))  # vocab.json and merges.txt, which the Hub ships too
    return Qwen2Tokenizer(
        tokenizer_object=bpe,
        bos_token=None,
        eos_token=QWEN_IM_END,
        pad_token=QWEN_ENDOFTEXT,
        # Qwen's byte-level BPE has no unknown token; the signature types it str only.
        unk_token=None,  # type: ignore[arg-type]
        model_max_length=MAX_POSITIONS,
        chat_template=QWEN3_CHAT_TEMPLATE,
    )


def _spm_tokenizer(family: str, work: Path, sentences: list[str]) -> Any:
    """The family's tokenizer converted from a SentencePiece model trained on the text
    (written to ``work / "tokenizer.model"``, the file name Llama, Gemma and Seed-X use)."""
    from transformers import GemmaTokenizer, LlamaTokenizer

    work.mkdir(parents=True, exist_ok=True)
    options = GEMMA_SPM_OPTIONS if family == "gemma" else LLAMA_SPM_OPTIONS
    # train_spm passes its ids on to the trainer: the other options travel with them.
    (work / "tokenizer.model").write_bytes(train_spm(sentences, "bpe", options))
    common: dict[str, Any] = dict(
        model_max_length=MAX_POSITIONS, add_bos_token=True, add_eos_token=False
    )
    if family == "gemma":
        tokenizer = GemmaTokenizer.from_pretrained(
            work, chat_template=GEMMA_CHAT_TEMPLATE, **common
        )
        # The turn markers are user-defined pieces, which convert as plain added tokens.
        tokenizer.add_special_tokens(
            {"extra_special_tokens": [GEMMA_START_OF_TURN, GEMMA_END_OF_TURN]}
        )
        return tokenizer
    tokenizer = LlamaTokenizer.from_pretrained(work, legacy=False, **common)
    if family == "mistral":
        tags = [seed_x_tag(code) for code in SEED_X_LANGUAGES]
        tokenizer.add_special_tokens({"extra_special_tokens": tags})
    return tokenizer


def _tokenizer(family: str, work: Path, sentences: list[str]) -> Any:
    if family == "qwen3":
        return _qwen3_tokenizer(work, sentences)
    return _spm_tokenizer(family, work, sentences)


def _model(family: str, tokenizer: Any) -> Any:
    """The family's random model (``torch.manual_seed(0)``) with its generation config."""
    import torch
    from transformers import (
        Gemma3ForCausalLM,
        Gemma3TextConfig,
        GenerationConfig,
        LlamaConfig,
        LlamaForCausalLM,
        MistralConfig,
        MistralForCausalLM,
        Qwen3Config,
        Qwen3ForCausalLM,
    )

    shape: dict[str, Any] = dict(
        hidden_size=HIDDEN,
        intermediate_size=FFN,
        num_hidden_layers=LAYERS,
        num_attention_heads=HEADS,
        num_key_value_heads=KV_HEADS,
        head_dim=HEAD_DIM,
        max_position_embeddings=MAX_POSITIONS,
    )
    torch.manual_seed(0)
    if family == "qwen3":
        endoftext = tokenizer.convert_tokens_to_ids(QWEN_ENDOFTEXT)
        im_end = tokenizer.convert_tokens_to_ids(QWEN_IM_END)
        rows = -(-len(tokenizer) // QWEN_VOCAB_MULTIPLE) * QWEN_VOCAB_MULTIPLE
        qwen3_config = Qwen3Config(
            **shape,
            vocab_size=rows,
            tie_word_embeddings=True,
            rope_parameters={"rope_type": "default", "rope_theta": 1_000_000.0},
            bos_token_id=endoftext,
            eos_token_id=im_end,
        )
        model: Any = Qwen3ForCausalLM(qwen3_config)
        model.generation_config = GenerationConfig(
            bos_token_id=endoftext,
            eos_token_id=[im_end, endoftext],
            pad_token_id=endoftext,
            do_sample=True,
            temperature=0.6,
            top_k=20,
            top_p=0.95,
        )
        return model
    if family == "gemma":
        end_of_turn = tokenizer.convert_tokens_to_ids(GEMMA_END_OF_TURN)
        special: dict[str, Any] = dict(
            bos_token_id=2, eos_token_id=[1, end_of_turn], pad_token_id=0
        )
        gemma_config = Gemma3TextConfig(
            **shape,
            vocab_size=len(tokenizer),
            query_pre_attn_scalar=HEAD_DIM,
            layer_types=GEMMA_LAYER_TYPES,
            sliding_window=GEMMA_SLIDING_WINDOW,
            **special,
        )
        model = Gemma3ForCausalLM(gemma_config)
        model.generation_config = GenerationConfig(**special, do_sample=True, top_k=64, top_p=0.95)
        return model
    # ALMA (Llama-2) and Seed-X (Mistral): <s> 1, </s> 2, no pad token.
    special = dict(bos_token_id=1, eos_token_id=2, pad_token_id=None)
    if family == "llama":
        model = LlamaForCausalLM(LlamaConfig(**shape, vocab_size=len(tokenizer), **special))
    else:
        config = MistralConfig(**shape, vocab_size=len(tokenizer), sliding_window=None, **special)
        model = MistralForCausalLM(config)
    model.generation_config = GenerationConfig(bos_token_id=1, eos_token_id=2)
    return model


def build_causal_model(family: str, folder: Path, sources: list[str], targets: list[str]) -> Path:
    """A tiny random causal LM of ``family`` (one of CAUSAL_FAMILIES) saved under
    ``folder / "repo"`` as its Hub repo is laid out; returns that folder.

    ``sources`` and ``targets`` (English and Chinese) train the tokenizer.
    """
    if family not in CAUSAL_FAMILIES:
        raise ValueError(f"unknown family {family!r}; one of {', '.join(CAUSAL_FAMILIES)}")
    from workbench.core.model.load import quiet_libraries

    quiet_libraries()
    work = folder / "tokenizer"
    sentences = [s for s in sources + targets if s.strip()]
    tokenizer = _tokenizer(family, work, sentences)
    model = _model(family, tokenizer)
    repo = folder / "repo"
    model.save_pretrained(repo)
    tokenizer.save_pretrained(repo)
    # The files the Hub ships beside tokenizer.json: Qwen's vocab.json and merges.txt,
    # the others' SentencePiece model.
    names = ("vocab.json", "merges.txt") if family == "qwen3" else ("tokenizer.model",)
    for name in names:
        (repo / name).write_bytes((work / name).read_bytes())
    if family == "qwen3":
        _tidy_tokenizer_config(repo, add_bos_token=False)
    else:
        _tidy_tokenizer_config(repo, add_bos_token=True, add_eos_token=False)
    return repo


#: The user message the chat families (qwen3, gemma) are asked to translate with.
CHAT_PROMPT = "Translate the following text from English into Chinese:\n{source}"


def translation_prompt(family: str, tokenizer: Any, source: str) -> list[int]:
    """The token ids of ``family``'s English -> Chinese prompt for ``source``: a user turn
    and the generation prompt through the chat template (Qwen3 without thinking), or the
    plain prompt (ALMA's, Seed-X's) with the tokenizer's <s>."""
    if family in ("llama", "mistral"):
        template = ALMA_PROMPT if family == "llama" else SEED_X_PROMPT
        return tokenizer(template.format(source=source))["input_ids"]
    messages = [{"role": "user", "content": CHAT_PROMPT.format(source=source)}]
    text = tokenizer.apply_chat_template(
        messages, add_generation_prompt=True, enable_thinking=False, tokenize=False
    )
    # The template writes Gemma's <bos> itself: the tokenizer must not add another.
    return tokenizer(text, add_special_tokens=False)["input_ids"]


def english_to_chinese(
    model: Path, prompt: str | None = None, template: str | None = None
) -> tuple[Any, Any]:
    """A tiny decoder-only model's tokenizer and its en -> zh direction (the family's own
    prompt, or ``prompt``/``template`` as --prompt and --prompt-template give them), as a
    run resolves and applies them."""
    from workbench.core.config.direction_request import DirectionRequest
    from workbench.core.model.direction import apply_direction, resolve_direction
    from workbench.core.model.family import max_positions
    from workbench.core.model.load import load_tokenizer_and_config

    tokenizer, config = load_tokenizer_and_config(str(model))
    request = DirectionRequest("en", "zh", None, None, prompt, template)
    direction = resolve_direction(
        config.model_type, max_positions(config), tokenizer, request, model_name=str(model)
    )
    apply_direction(tokenizer, direction)
    return tokenizer, direction
