"""The Translate pane's rows: what one history row holds, a queued translation, and how
a row is shown (cut to its column, or in full in the detail line under the table)."""

from __future__ import annotations

from dataclasses import dataclass, field

from rich.text import Text

from workbench.core.translate.judgements import JUDGE_USAGE, Judgement

CHOICES = [("fine-tuned", "tuned"), ("base", "base"), ("both", "both")]
WAITING = "translating…"
LOADING = "translating… (loading the model)"
#: What the keys do, under the input: while typing, and after Escape (in the history).
TYPING_HINT = f"Enter: translate · ↑↓: row · {JUDGE_USAGE} · Esc: keys"
KEYS_HINT = "g o e: judge good / omission / error · /: type again · 1-7: panes"
#: Fixed columns (cells); source and translation share the rest, the translation more.
MODEL_WIDTH, MS_WIDTH, JUDGED_WIDTH = 9, 5, 8
#: The QE column's width (tui --qe: a reference-free score, one decimal).
QE_WIDTH = 5
SOURCE_SHARE = 0.4


@dataclass
class Entry:
    """One row of the history: a sentence sent to one model, and what came back."""

    key: str  # the row key
    model: str  # "tuned" or "base"
    source: str
    translation: str = ""
    notices: list[str] = field(default_factory=list)
    line_id: str | None = None  # its line in the console history, once translated
    judgement: Judgement | None = None
    failed: bool = False
    quality: str = ""  # its QE score in words (tui --qe)


@dataclass(frozen=True)
class Job:
    """A queued translation: which row, which sentence, which model, which overrides."""

    key: str
    text: str
    model: str
    overrides: tuple[int | None, int | None]


def cut(text: str, width: int) -> Text:
    """``text`` on one line, cut to ``width`` cells with "…" (the detail line has it all)."""
    shown = Text(" ".join(text.split()))
    shown.truncate(width, overflow="ellipsis")
    return shown


def detail_text(entry: Entry) -> Text:
    """A row in full: source, translation, notices, judgement (user text never markup)."""
    detail = Text()
    detail.append("source: ", style="bold").append(entry.source)
    translation = entry.translation or ("" if entry.failed else WAITING)
    detail.append("\n→ ", style="bold").append(translation)
    for notice in entry.notices:
        detail.append("\nnote: ", style="bold yellow").append(notice)
    if entry.quality:
        detail.append("\nQE: ", style="bold").append(entry.quality)
    if entry.judgement is not None:
        detail.append("\njudged: ", style="bold").append(entry.judgement.text())
    return detail


def checked_overrides(beams: str, length: str) -> tuple[int | None, int | None]:
    """The beams and length typed (None: empty, the model's own), checked as the CLI's
    ``--num-beams``/``--max-new-tokens`` are; a bad value raises WorkbenchError."""
    from workbench.core.decoding import check_beams, check_new_tokens

    def number(text: str) -> int | None:
        text = text.strip()
        return int(text) if text.lstrip("-").isdigit() else None

    found = number(beams), number(length)
    if found[0] is not None:
        check_beams(found[0], "beams")
    if found[1] is not None:
        check_new_tokens(found[1], "max new")
    return found
