"""The direction resolution: what a user asks of a model's languages
(:class:`~workbench.core.config.direction_request.DirectionRequest`) turned into what
that model is told (:class:`~workbench.core.languages.Direction`), and set where
transformers reads it.

Each family has its mechanism (:mod:`workbench.core.model.family`): Marian (OPUS-MT)
takes a label such as ``>>cmn_Hans<<`` before a multi-target model's source; NLLB-200,
M2M100 and mBART-50 take the tokenizer's ``src_lang``/``tgt_lang`` and the target code
forced as the first token (the Hub's folders do not force it); T5 takes a task prefix;
decoder-only LLMs (Qwen, Llama, Gemma, Mistral, Hunyuan) take a prompt
(:mod:`workbench.core.model.prompts`). :func:`resolve_direction` resolves a request for
one model and :func:`apply_direction` sets the answer on the tokenizer and the generation
config, so no other module asks which family a model is. An unlisted family goes the
generic path, with a note.
"""

from __future__ import annotations

from typing import Any

from workbench.core.config.direction_request import DirectionRequest
from workbench.core.decoding import AUTO_LABEL
from workbench.core.languages import DEFAULT_SOURCE_LANG, DEFAULT_TARGET_LANG, Direction
from workbench.core.model.family import BY_NAME, GENERIC, MARIAN, T5, Family, detect_family
from workbench.errors import WorkbenchError


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
    request: DirectionRequest,
    model_name: str = "",
) -> Direction:
    """The direction ``request`` asks, as this model is told it.

    ``model_type`` and ``tokenizer`` say the family (:func:`detect_family`), ``positions``
    bounds its sequences (:func:`~workbench.core.model.family.max_positions`), and
    ``model_name`` names it to the user (and picks a decoder-only model's instruction).
    A language left out is the workbench's default (en → zh): a request that leaves it
    to what the model recorded is completed first (:meth:`DirectionRequest.over`). A
    language the model does not know is one line listing the codes it does.

    A decoder-only model is told the pair by its prompt:
    :func:`~workbench.core.model.prompts.prompted_direction`.
    """
    family = detect_family(model_type, tokenizer)
    _refuse_the_other_kinds_flags(family, request, model_name)
    codes = family.codes(tokenizer)
    target_lang = request.target_lang or DEFAULT_TARGET_LANG
    common: dict[str, Any] = {
        "family": family.name,
        "source_lang": request.source_lang or DEFAULT_SOURCE_LANG,
        "target_lang": target_lang,
        "max_positions": positions,
    }
    label = request.target_label
    prefix = request.source_prefix or ""
    if family.causal:
        from workbench.core.model.prompts import prompted_direction

        return prompted_direction(
            common,
            tokenizer,
            family.instruction,
            model_name,
            request.prompt,
            request.prompt_template,
        )
    if family is MARIAN:
        if label == AUTO_LABEL:
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
        if label not in (AUTO_LABEL, None) and label in codes:  # --label zho_Hans: a target
            target_lang = label
        source = _code(family, common["source_lang"], codes, "--source-lang")
        target = _code(family, target_lang, codes, "--target-lang")
        return Direction(
            **common,
            source_code=source,
            target_code=target,
            source_prefix=prefix,
            first_token_id=int(tokenizer.convert_tokens_to_ids(target)),
            code_ids=frozenset(int(i) for i in tokenizer.convert_tokens_to_ids(codes)),
        )
    if label not in (AUTO_LABEL, None):
        raise WorkbenchError(
            f"target label '{label}' is for Marian models; this is a {family.title} model: "
            "drop --label" + (" and pass --source-prefix" if family is T5 else "")
        )
    notes: tuple[str, ...] = ()
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


def _refuse_the_other_kinds_flags(
    family: Family, request: DirectionRequest, model_name: str
) -> None:
    """One line for a seq2seq flag (a label, a prefix) asked of a decoder-only model, or a
    prompt asked of a seq2seq one."""
    if family.causal:
        if request.target_label not in (AUTO_LABEL, None) or request.source_prefix:
            flag = "--source-prefix" if request.source_prefix else "--label"
            raise WorkbenchError(
                f"{flag} is for seq2seq models; {model_name or 'this'} is a decoder-only "
                f"model, told the pair by its prompt: drop {flag} (--prompt-template FILE "
                "sets the prompt)"
            )
    elif request.prompt or request.prompt_template:
        raise WorkbenchError(
            f"--prompt and --prompt-template are for decoder-only models; this is a "
            f"{family.title} model, which takes no prompt: drop them"
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
