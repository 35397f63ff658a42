"""What is odd about a line a user typed, said before its translation is trusted.

A model answers every input with something fluent-looking: emoji it has no piece for are
read as its unknown token and silently dropped, and a sentence already in the target
language comes back as nonsense (``我喜欢喝茶。`` → ``高于于坚持。``). The console, the
TUI and ``workbench translate`` show these notices beside the translation and the
history keeps them, so a judgement of the translation can cite them. Written once here,
called by :meth:`Translator.translate <workbench.core.translate.translator.Translator.translate>`.
"""

from __future__ import annotations

from typing import Any

from workbench.core.data.writing_systems import script_share
from workbench.core.languages import Direction, script_of

#: More than this share of the input's letters in the target's script: already translated.
TARGET_SCRIPT_SHARE = 0.5
#: At most this many unknown characters are quoted in the notice.
QUOTED_UNKNOWN = 8


def unknown_characters(tokenizer: Any, direction: Direction, text: str) -> list[str] | None:
    """None when the tokenizer reads all of ``text``; else the distinct characters of it
    that it reads as its unknown piece (possibly none that can be named).

    The whole line is tokenized first; only then each character alone, to name them (a
    sentence piece has no offsets to map back). A tokenizer whose vocabulary is shared
    with the target side (Marian's) may know a lone Han character that it cannot read
    inside a run of them, so the list can be empty while the line has unknown pieces.
    """
    unk = getattr(tokenizer, "unk_token_id", None)
    if unk is None or unk not in tokenizer(direction.source_text(text))["input_ids"]:
        return None
    plain = set(tokenizer(direction.source_text(""))["input_ids"])  # prefix, </s>
    return [
        char
        for char in dict.fromkeys(text)
        if not char.isspace()
        and unk in set(tokenizer(direction.source_text(char))["input_ids"]) - plain
    ]


def in_target_script(text: str, direction: Direction) -> bool:
    """Whether most of the input's letters are in the target language's script, where the
    source's script differs (en → de shares Latin letters: nothing can be told)."""
    target, source = direction.target_lang, direction.source_lang
    if script_of(target) is None or script_of(target) == script_of(source):
        return False
    share = script_share(text, target)
    return share is not None and share > TARGET_SCRIPT_SHARE


def input_notices(tokenizer: Any, direction: Direction, text: str) -> list[str]:
    """One sentence for each oddity of ``text``: unknown characters, the target language."""
    notices = []
    unknown = unknown_characters(tokenizer, direction, text)
    if unknown is not None:
        more = " …" if len(unknown) > QUOTED_UNKNOWN else ""
        quoted = f" ({' '.join(unknown[:QUOTED_UNKNOWN])}{more})" if unknown else ""
        notices.append(
            f"the model cannot represent part of the input{quoted}: it reads it as its "
            "unknown token, and the translation ignores it"
        )
    if in_target_script(text, direction):
        notices.append(
            f"the input looks like {direction.target_lang} already (the target language): "
            f"the model expects {direction.source_lang or 'the source language'}"
        )
    return notices
