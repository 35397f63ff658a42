"""A user's verdict on one console translation: good, has omissions, has errors, and a note.

The assignment asks the student to try sentences of their own and judge each. The console
(``:judge omission dropped "yesterday"``) and the TUI's Translate pane record the verdict
in the console history next to the line it judges, and the run report prints it in its
Judgement column. The command and the words are defined here once for every front end.
"""

from __future__ import annotations

from dataclasses import dataclass

from workbench.errors import WorkbenchError

#: Verdict -> how the report and the TUI say it.
VERDICTS = {"good": "good", "omission": "has omissions", "error": "has errors"}
#: What the user may type for each verdict.
_SPELLINGS = {
    "good": "good",
    "ok": "good",
    "omission": "omission",
    "omissions": "omission",
    "error": "error",
    "errors": "error",
}
#: Which console lines the report lists: the judged ones when any, else all (``auto``).
CONSOLE_CHOICES = ("auto", "all", "judged")
JUDGE_COMMAND = ":judge"
#: The command as the console's banner and the TUI's hint show it.
JUDGE_USAGE = f"{JUDGE_COMMAND} good|omission|error [note]"


@dataclass(frozen=True)
class Judgement:
    """A verdict on one translation and the user's optional note."""

    verdict: str
    note: str = ""

    def text(self) -> str:
        """``has omissions — dropped "yesterday"``: the verdict in words, then the note."""
        words = VERDICTS.get(self.verdict, self.verdict)
        return f"{words} — {self.note}" if self.note else words


def is_judge_command(line: str) -> bool:
    """Whether a typed line is the judge command rather than a sentence to translate."""
    head = line.strip().split(maxsplit=1)
    return bool(head) and head[0].lower() == JUDGE_COMMAND


def parse_judgement(line: str) -> Judgement:
    """``:judge omission dropped "yesterday"`` as a :class:`Judgement`; a wrong verdict
    raises a WorkbenchError that names the right ones."""
    parts = line.strip().split(maxsplit=2)
    word = parts[1].lower() if len(parts) > 1 else ""
    verdict = _SPELLINGS.get(word)
    if verdict is None:
        given = f"'{parts[1]}' is not a verdict" if len(parts) > 1 else "no verdict given"
        raise WorkbenchError(f"{given}: type {JUDGE_USAGE}")
    return Judgement(verdict, parts[2].strip() if len(parts) > 2 else "")
