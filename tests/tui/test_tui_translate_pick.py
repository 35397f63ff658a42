"""The Translate pane picking among candidates at 80×24, as ``workbench tui --pick`` asks:
the row marked, the candidates with scores and counts under the table, the metric that
picked marked "(used to pick)", and Ctrl-B switching to one beam search and back."""

from __future__ import annotations

import shutil
from pathlib import Path

from textual.widgets import DataTable, Static

from tests.helpers.runs import small
from tests.helpers.tui import open_translate, wait_for
from workbench.cli.options import QE_FLAG, without_flags
from workbench.core.picking.pick_text import PICKED_MARK
from workbench.core.translate.candidates import CandidateSettings
from workbench.core.translate.history import read_history
from workbench.core.translate.picked import PickSettings
from workbench.core.translate.translator import Translator
from workbench.core.views.wide import is_wide
from workbench.tui.app import WorkbenchApp
from workbench.tui.widgets.translate_rows import PANE_SHOWN

SENTENCE = "I like to drink tea with my friends."
#: Half beam search's n-best, half samples: the tiny random model's samples, cut at
#: epsilon 0.02 of a flat distribution, are its greedy output, while its n-best differ.
MBR_CHRF = PickSettings("mbr", utility="chrf", candidates=CandidateSettings(8, source="both"))


def columns(line: str) -> int:
    """``line``'s width on a terminal (a CJK character takes two columns)."""
    return sum(2 if is_wide(ch) else 1 for ch in line)


async def test_a_pick_lists_its_candidates_under_the_table_and_ctrl_b_switches_to_beam(
    tmp_path: Path, tiny_model_dir: Path
):
    model = tmp_path / "out" / "best_model"
    shutil.copytree(tiny_model_dir, model)
    app = WorkbenchApp(small(tmp_path), pick=MBR_CHRF)
    async with app.run_test(size=(80, 24)) as pilot:
        pane = await open_translate(pilot)
        hint = pane.query_one("#translate-hint", Static)
        assert str(hint.render()).startswith("Enter: pick by mbr by chrf · ctrl+b: beam")
        await pilot.press(*SENTENCE, "enter")
        await wait_for(pilot, lambda: pane.pending == 0, what="picked")
        entry = next(iter(pane.entries.values()))
        pick = entry.pick
        assert pick is not None
        assert not entry.failed
        assert entry.translation == pick.translation
        assert sum(c.count for c in pick.candidates) == 8  # drawn, duplicates counted
        scores = [c.score for c in pick.candidates]
        assert pick.score == max(s for s in scores if s is not None)  # the best expected chrF
        table = pane.query_one("#translate-history", DataTable)
        assert str(table.get_row_at(0)[2]).startswith(f"{PICKED_MARK} ")

        detail = pane.query_one("#translate-detail", Static)
        lines = str(detail.render()).splitlines()
        heading = lines[2]
        assert len(pick.candidates) > 1
        assert heading == (
            f"8 drawn, {len(pick.candidates)} distinct · MBR on chrF (used to pick) ↑"
        )
        listed = lines[3:]
        assert len(listed) == min(PANE_SHOWN, len(pick.candidates)) + (
            len(pick.candidates) > PANE_SHOWN
        )
        best = listed[0]  # best first, and the pick is a best one
        assert best.startswith(f"{PICKED_MARK} {pick.score:7.2f} ×")
        shown = best.split("×", 1)[1][3:]  # after the count, padded to two columns
        assert pick.translation.startswith(shown.rstrip("…"))
        for candidate, line in zip(
            sorted(pick.candidates, key=lambda c: -(c.score or 0)), listed, strict=False
        ):
            assert f"×{candidate.count:<2} " in line  # each with its count
        # Everything fits 80×24: the detail's lines within its width, on the screen.
        assert all(columns(line) <= detail.size.width for line in lines)
        assert detail.region.bottom <= 24 - 1  # above the footer
        assert table.size.height >= 2  # the history still shows a row under its header

        await pilot.press("ctrl+b")
        assert str(hint.render()).startswith("Enter: beam search · ctrl+b: pick")
        await pilot.press(*SENTENCE, "enter")
        await wait_for(pilot, lambda: pane.pending == 0, what="translated by beam search")
        beamed = list(pane.entries.values())[1]
        assert beamed.pick is None
        translator = Translator.from_pretrained(str(model))
        assert beamed.translation == translator.translate(SENTENCE).text
        assert not str(table.get_row_at(1)[2]).startswith(PICKED_MARK)
        assert "candidates" not in str(detail.render())

        await pilot.press("ctrl+b")  # and back: picked again, the same candidates
        await pilot.press(*SENTENCE, "enter")
        await wait_for(pilot, lambda: pane.pending == 0, what="picked again")
        again = list(pane.entries.values())[2]
        assert again.pick == pick  # seeded: the same candidates, scores and pick

    history = read_history(tmp_path / "out" / "console_history.jsonl")
    assert [h.translation for h in history] == [
        pick.translation,
        beamed.translation,
        pick.translation,
    ]


async def test_without_pick_ctrl_b_says_how_to_ask_for_one(tmp_path: Path, tiny_model_dir: Path):
    shutil.copytree(tiny_model_dir, tmp_path / "out" / "best_model")
    app = WorkbenchApp(small(tmp_path))
    async with app.run_test(size=(80, 24)) as pilot:
        pane = await open_translate(pilot)
        await pilot.press("ctrl+b")
        await pilot.pause()
        said = [n.message for n in app._notifications]
        assert any("workbench tui with --pick qe or --pick mbr" in m for m in said), said
        assert pane.picking is False


def test_a_browser_tab_trains_with_the_picking_flags_and_without_the_panes_qe():
    argv = ["--preset", "demo", "--pick", "mbr", "--utility", "chrf", "--candidates=4"]
    argv += ["--fast-mbr", "--seed", "7", "--qe"]
    kept = without_flags(argv, [QE_FLAG])
    assert kept == argv[:-1]  # the picking flags are the run's too


def test_a_picking_flag_without_pick_is_one_line_before_the_app(cli, tmp_path: Path):
    result = cli("tui", "--preset", "demo", "--candidates", "4", cwd=tmp_path, input="")
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        "workbench: error: --candidates chooses how a pick is made; add --pick qe or --pick mbr"
    ]
