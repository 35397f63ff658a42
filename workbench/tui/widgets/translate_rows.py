"""The Translate pane's rows: what one history row holds, a queued translation, and how
a row is shown (cut to its column, or in full in the detail lines under the table, a
pick's candidates with it)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from rich.text import Text

from workbench.core.picking.pick_text import fit, pick_lines
from workbench.core.translate.judgements import JUDGE_USAGE, Judgement

if TYPE_CHECKING:
    from workbench.core.picking.picks import Pick

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
#: A pick's candidates listed under the table (the rest counted): with the source, the
#: translation and the heading, the detail takes 9 of an 80×24 screen's lines.
PANE_SHOWN = 5
#: The switch between a pick and one beam search, when the TUI was started with --pick.
SWITCH_KEY = "ctrl+b"


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
    pick: Pick | None = None  # its candidates and the one picked (tui --pick)


@dataclass(frozen=True)
class Job:
    """A queued translation: which row, which sentence, which model, which overrides."""

    key: str
    text: str
    model: str
    overrides: tuple[int | None, int | None]
    picked: bool = True  # picked among candidates, when the model picks (tui --pick)


def cut(text: str, width: int) -> Text:
    """``text`` on one line, cut to ``width`` cells with "…" (the detail line has it all)."""
    shown = Text(" ".join(text.split()))
    shown.truncate(width, overflow="ellipsis")
    return shown


def typing_hint(pick_label: str | None, picking: bool) -> str:
    """What the keys do while typing: with ``--pick``, whether Enter picks (by
    ``pick_label``, ``mbr:chrF``) or runs one beam search, and the key that switches."""
    if pick_label is None:
        return TYPING_HINT
    now, other = (f"pick by {pick_label}", "beam") if picking else ("beam search", "pick")
    return fit(f"Enter: {now} · {SWITCH_KEY}: {other} · ↑↓: row · :judge … · Esc: keys", 78)


def detail_text(entry: Entry, width: int = 78) -> Text:
    """A row in full: source, translation, notices, judgement, and a pick's candidates
    cut to ``width`` columns (user text never markup)."""
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
    if entry.pick is not None:
        detail.append("\n" + "\n".join(pick_lines(entry.pick, width, "", PANE_SHOWN)))
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
