"""A pick in lines a console prints: the candidates, each with its score and count, the
picked one marked, and the metric that picked marked "(used to pick)".

At most :data:`SHOWN` candidates are listed (the best first) and each line is cut to the
width asked, counting a CJK character as two columns: ``interact``'s answer to one line,
with its prompt and notes, then fits an 80×24 terminal.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from workbench.core.views.numbers import number
from workbench.core.views.wide import is_wide

if TYPE_CHECKING:
    from workbench.core.picking.picks import Pick

#: Candidates a console lists under a pick (the rest are counted, not shown).
SHOWN = 8
#: What marks the picked candidate.
PICKED_MARK = "»"


def used_to_pick(metric: str) -> str:
    """``metric`` as every table and line shows the one that picked."""
    return f"{metric} (used to pick)"


def pick_heading(pick: Pick) -> str:
    """``8 drawn, 5 distinct · MBR on chrF (used to pick) ↑``: short enough for 80 columns
    with any metric's name (↑: higher is better, ↓: lower)."""
    method, _, metric = pick.picked_by.partition(":")
    how = {"qe": "QE", "mbr": "MBR", "mbr-pruned": "pruned MBR"}.get(method, method)
    drawn = sum(c.count for c in pick.candidates)
    better = "↑" if pick.higher_is_better else "↓"
    return (
        f"{drawn} drawn, {len(pick.candidates)} distinct · {how} on {used_to_pick(metric)} {better}"
    )


def pick_lines(pick: Pick, width: int = 80, indent: str = "  ", shown: int = SHOWN) -> list[str]:
    """The heading, then the candidates best first, in the pick's own order (equal scores:
    the most drawn, then the first to come, as :mod:`.picks` breaks ties), so the picked
    one is listed first; each cut to ``width`` columns. The first ``shown`` are listed and
    the rest counted (the Translate pane, under its history table, has room for fewer than
    the console)."""

    def rank(i: int) -> tuple[int, float, int, int]:
        candidate = pick.candidates[i]
        if candidate.score is None:
            return (1, 0.0, 0, i)
        score = -candidate.score if pick.higher_is_better else candidate.score
        return (0, score, -candidate.count, i)

    order = sorted(range(len(pick.candidates)), key=rank)
    lines = [fit(f"{indent}{pick_heading(pick)}", width)]
    for i in order[:shown]:
        candidate = pick.candidates[i]
        mark = PICKED_MARK if i == pick.picked else " "
        score = number(candidate.score, 2) if candidate.score is not None else "pruned"
        lines.append(
            fit(f"{indent}{mark} {score:>7} ×{candidate.count:<2} {candidate.text}", width)
        )
    if len(order) > shown:
        lines.append(f"{indent}  … and {len(order) - shown} more")
    return lines


def fit(line: str, width: int) -> str:
    """``line`` cut to ``width`` terminal columns (a CJK character takes two), with ``…``."""
    columns = [2 if is_wide(ch) else 1 for ch in line]
    if sum(columns) <= width:
        return line
    used = 0
    for at, taken in enumerate(columns):
        if used + taken > width - 1:  # one column left for the ellipsis
            return line[:at] + "…"
        used += taken
    return line
