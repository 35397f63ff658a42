"""How a decoder-only model is asked to translate: the prompt around the source.

An LLM translator has no source side: the source sits inside a prompt, and the
translation is what the model writes after it. Four prompts are built in:

- ``chat``: the model's own chat template (``tokenizer.apply_chat_template``, with
  ``enable_thinking=False`` for templates that take it, as Qwen3's does), the user message
  being the family's published instruction (Tower's, Hunyuan-MT's, or a general one);
- ``alma``: ALMA's plain prompt, ``Translate this from {Src} to {Tgt}:\\n{Src}: {source}\\n
  {Tgt}:``, the target following after a space;
- ``seed-x``: Seed-X's tagged prompt, ``Translate the following {Src} sentence into
  {Tgt}:\\n{source} <{tgt}>``;
- ``template``: the user's own text with ``{source}``, ``{source_lang}`` and
  ``{target_lang}`` (``--prompt-template FILE``).

:func:`prompt_frame` renders the chosen prompt once, with a marker where the source goes,
and cuts it there: every later use (training ids, before/after, the console, attention,
the Lab, a CTranslate2 export) is then plain text around the source, the same everywhere.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from workbench.core.config.settings import PROMPTS, check_template
from workbench.core.languages import Direction, base_language, language_name
from workbench.errors import WorkbenchError

#: A user's own prompt (``--prompt-template``); the built-in ones are ``PROMPTS``.
TEMPLATE = "template"

#: Stands for the source while a prompt is rendered; cut out again at once.
_MARK = "\u2063WORKBENCH-SOURCE\u2063"

#: The user message of a chat prompt, by the family that published it.
TOWER_INSTRUCTION = "Translate the following text from {src} into {tgt}.\n{src}: {source}\n{tgt}:"
HUNYUAN_ZH_INSTRUCTION = "把下面的文本翻译成{tgt_zh}，不要额外解释。\n\n{source}"
GENERAL_INSTRUCTION = (
    "Translate the following segment into {tgt}, without additional explanation.\n\n{source}"
)
ALMA_PROMPT = "Translate this from {src} to {tgt}:\n{src}: {source}\n{tgt}:"
SEED_X_PROMPT = "Translate the following {src} sentence into {tgt}:\n{source} <{tgt_code}>"

#: Hunyuan-MT names the target in Chinese when Chinese is one side of the pair.
_CHINESE_NAMES = {
    "zh": "中文", "en": "英语", "ja": "日语", "ko": "韩语", "fr": "法语", "de": "德语",
    "es": "西班牙语", "pt": "葡萄牙语", "it": "意大利语", "ru": "俄语", "ar": "阿拉伯语",
    "th": "泰语", "vi": "越南语", "id": "印尼语", "tr": "土耳其语", "nl": "荷兰语",
    "pl": "波兰语", "cs": "捷克语", "uk": "乌克兰语", "hi": "印地语",
}  # fmt: skip


@dataclass(frozen=True)
class PromptFrame:
    """A rendered prompt cut at the source, and how its answer is told apart."""

    name: str  # chat, alma, seed-x or template
    before: str  # the prompt up to the source
    after: str  # the prompt after it
    target_prefix: str  # put before the target when training (ALMA's space)
    target_suffix: str  # the end of a target: the turn's end token, or EOS
    stop_ids: frozenset[int]  # generation ends at any of these
    first_line: bool  # the answer is one line
    template: str | None = None  # the user's template, recorded with the model


def default_prompt(tokenizer: Any) -> str:
    """``chat`` where the tokenizer has a chat template; else there is no default."""
    return "chat" if getattr(tokenizer, "chat_template", None) else ""


def _names(source_lang: str, target_lang: str) -> dict[str, str]:
    src, tgt = base_language(source_lang) or source_lang, base_language(target_lang) or target_lang
    return {
        "src": language_name(source_lang),
        "tgt": language_name(target_lang),
        "tgt_zh": _CHINESE_NAMES.get(tgt, language_name(target_lang)),
        "tgt_code": tgt,
        "src_code": src,
        "source": _MARK,
    }


def chat_instruction(instruction: str, model_name: str, source_lang: str, target_lang: str) -> str:
    """The user message a chat prompt sends: the wording the family published
    (Hunyuan-MT's, Chinese where Chinese is one side; Tower's), else a general one."""
    names = _names(source_lang, target_lang)
    if instruction == "hunyuan":  # the family's (Family.instruction)
        zh = "zh" in (names["src_code"], names["tgt_code"])
        return (HUNYUAN_ZH_INSTRUCTION if zh else GENERAL_INSTRUCTION).format(**names)
    if re.search(r"tower", model_name, re.IGNORECASE):
        return TOWER_INSTRUCTION.format(**names)
    return GENERAL_INSTRUCTION.format(**names)


def _chat(tokenizer: Any, messages: list[dict[str, str]], generation: bool) -> str:
    return str(
        tokenizer.apply_chat_template(
            messages, tokenize=False, add_generation_prompt=generation, enable_thinking=False
        )
    )


def _token_id(tokenizer: Any, text: str) -> int | None:
    ids = tokenizer(text, add_special_tokens=False)["input_ids"] if text else []
    return int(ids[0]) if len(ids) == 1 else None


def _adds_bos(tokenizer: Any) -> bool:
    bos = tokenizer.bos_token_id
    ids = tokenizer("a")["input_ids"]
    return bos is not None and len(ids) > 0 and ids[0] == bos


def prompt_frame(
    tokenizer: Any,
    wording: str,
    model_name: str,
    source_lang: str,
    target_lang: str,
    prompt: str | None,
    template: str | None,
) -> PromptFrame:
    """The prompt ``prompt`` (or the user's ``template``) for this tokenizer and pair,
    cut at the source; one line naming the fix when it cannot be built."""
    eos = tokenizer.eos_token or ""
    stops = {tokenizer.eos_token_id} if tokenizer.eos_token_id is not None else set()
    names = _names(source_lang, target_lang)
    if template is not None and prompt not in (None, "chat", TEMPLATE):
        raise WorkbenchError(
            f"--prompt {prompt} and --prompt-template are two prompts; pass one of them "
            "(or --prompt chat to send the template as the chat's user message)"
        )
    if template is not None:
        check_template(template, "(--prompt-template)")
        text = template.format(source=_MARK, source_lang=names["src"], target_lang=names["tgt"])
        if prompt != "chat":
            return _plain(TEMPLATE, text, eos, stops, template)
    name = prompt or default_prompt(tokenizer)
    if not name:
        raise WorkbenchError(
            f"model '{model_name}' has no chat template, so it needs a prompt: pass "
            f"--prompt {' or --prompt '.join(p for p in PROMPTS if p != 'chat')}, or "
            "--prompt-template FILE with {source} in it"
        )
    if name == "alma":
        return _plain(name, ALMA_PROMPT.format(**names), eos, stops, None)
    if name == "seed-x":
        return _plain(name, SEED_X_PROMPT.format(**names), eos, stops, None)
    if name != "chat":
        raise WorkbenchError(
            f"prompt '{name}' is not one the workbench knows; pass --prompt "
            f"{', '.join(PROMPTS)}, or --prompt-template FILE"
        )
    if not getattr(tokenizer, "chat_template", None):
        raise WorkbenchError(
            f"--prompt chat needs a chat template and model '{model_name}' has none (a base "
            "model); pass --prompt alma or --prompt seed-x, or --prompt-template FILE"
        )
    instruction = (
        text
        if template is not None
        else chat_instruction(wording, model_name, source_lang, target_lang)
    )
    user = [{"role": "user", "content": instruction}]
    rendered = _chat(tokenizer, user, generation=True)
    if _MARK not in rendered:
        raise WorkbenchError(
            f"the chat template of '{model_name}' drops the user's message; pass "
            "--prompt-template FILE with {source} in it"
        )
    if tokenizer.bos_token and rendered.startswith(tokenizer.bos_token) and _adds_bos(tokenizer):
        rendered = rendered[len(tokenizer.bos_token) :]  # the tokenizer adds it itself
    before, after = rendered.split(_MARK, 1)
    # The turn's end: what the template writes after an answer (<|im_end|>, <end_of_turn>).
    answered = _chat(tokenizer, [*user, {"role": "assistant", "content": _MARK}], False)
    end = answered.rsplit(_MARK, 1)[-1].strip() if _MARK in answered else ""
    end_id = _token_id(tokenizer, end)
    if end_id is None:
        end, end_id = eos, tokenizer.eos_token_id
    return PromptFrame(
        name="chat",
        before=before,
        after=after,
        target_prefix="",
        target_suffix=end,
        stop_ids=frozenset(i for i in (*stops, end_id) if i is not None),
        first_line=False,
        # The user message as sent, so that a saved model is asked in the same words
        # whatever its folder is called (Tower's wording is chosen by the model's name).
        template=instruction.replace("{", "{{").replace("}", "}}").replace(_MARK, "{source}"),
    )


def _plain(name: str, text: str, eos: str, stops: set[int], template: str | None) -> PromptFrame:
    before, after = text.split(_MARK, 1)
    return PromptFrame(
        name=name,
        before=before,
        after=after,
        # ALMA's target follows its "Chinese:" after a space; a prompt ending in a line
        # break or a tag (Seed-X's "<zh>") is followed directly.
        target_prefix=" " if after.endswith(":") else "",
        target_suffix=eos,
        stop_ids=frozenset(stops),
        first_line=True,
        template=template,
    )


def prompted_direction(
    common: dict[str, Any],
    tokenizer: Any,
    instruction: str,
    model_name: str,
    prompt: str | None,
    prompt_template: str | None,
) -> Direction:
    """A decoder-only model's direction: the prompt rendered once and cut at the source
    (:func:`~workbench.core.model.prompts.prompt_frame`), checked against the positions."""
    frame = prompt_frame(
        tokenizer,
        instruction,
        model_name or "the model",
        common["source_lang"],
        common["target_lang"],
        prompt,
        prompt_template,
    )
    positions = common["max_positions"]
    overhead = len(tokenizer(frame.before + frame.after)["input_ids"])
    if positions is not None and overhead >= positions:
        raise WorkbenchError(
            f"the {frame.name} prompt alone takes {overhead} tokens, and this model has "
            f"{positions} positions for prompt, source and translation together; pass a "
            "shorter --prompt-template"
        )
    notes: tuple[str, ...] = ()
    if tokenizer.pad_token is None:
        notes = (
            f"this tokenizer has no pad token: batches are padded with its EOS "
            f"({tokenizer.eos_token}), masked out of attention and loss",
        )
    return Direction(
        **common,
        causal=True,
        prompt=frame.name,
        prompt_template=frame.template,
        source_prefix=frame.before,
        source_suffix=frame.after,
        target_prefix=frame.target_prefix,
        target_suffix=frame.target_suffix,
        stop_ids=frame.stop_ids,
        first_line=frame.first_line,
        notes=notes,
    )


def prompt_overhead(tokenizer: Any, direction: Direction) -> int:
    """Tokens a prompt adds around every source (0 for a seq2seq model's direction)."""
    if not direction.causal:
        return 0
    return len(tokenizer(direction.source_text(""))["input_ids"])


def apply_prompt(tokenizer: Any, direction: Direction, model: Any) -> None:
    """A decoder-only model's padding (EOS where the tokenizer has no pad token) and its
    stops: generation ends at EOS or the turn's end, whichever comes."""
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    if model is None:
        return
    if model.config.pad_token_id is None:
        model.config.pad_token_id = tokenizer.pad_token_id
    generation = model.generation_config
    if generation.pad_token_id is None:
        generation.pad_token_id = tokenizer.pad_token_id
    eos = generation.eos_token_id
    own = set(eos if isinstance(eos, list) else [] if eos is None else [eos])
    generation.eos_token_id = sorted(own | set(direction.stop_ids))
