"""The Translate pane as a student uses it at 80×24: rows at once, a queue, the focus kept, the
highlighted row's heatmap, and judgements that reach the run report.

The tests that train (or build), split from tests/tui/test_tui_translate.py, whose other tests
do not.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

from textual.widgets import DataTable, Input

from tests.helpers.runs import FinishedRun, small
from tests.helpers.tui import open_translate, wait_for
from workbench.cli.interact import run_console
from workbench.core.report.write import create_report
from workbench.core.run_folder.layout import REPORT_HTML, REPORT_MD
from workbench.core.translate.console_session import ConsoleModel, ConsoleSession
from workbench.core.views.document import escape_markdown
from workbench.tui.app import WorkbenchApp


async def test_judgements_in_the_pane_and_in_interact_reach_the_report(
    cli, tmp_path: Path, finished_run: FinishedRun
):
    run_dir = finished_run.copy_to(tmp_path / "out")
    history = tmp_path / "out" / "console_history.jsonl"
    app = WorkbenchApp(small(tmp_path))
    async with app.run_test(size=(80, 24)) as pilot:
        pane = await open_translate(pilot)
        for line in ("I like tea.", "Some tea.", "I like tea."):
            await pilot.press(*line, "enter")
        await wait_for(pilot, lambda: pane.pending == 0, what="three translated")
        await pilot.press("up")  # "Some tea.": left unjudged
        await pilot.press("escape")  # out of the input: g, o, e judge the highlighted row
        await wait_for(pilot, lambda: not isinstance(app.focused, Input))
        await pilot.press("down", "g")
        await pilot.press("slash")  # back to typing: a note needs the command
        await pilot.press(*":judge good [b]reads well[/b]", "enter")
        table = pane.query_one("#translate-history", DataTable)
        assert str(table.get_row_at(2)[4]) == "good"
        assert pane.query_one("#translate-input", Input).value == ""
    model = ConsoleModel(str(run_dir / "best_model"), device="cpu", num_beams=1, max_new_tokens=8)
    lines = 'My brother is a doctor.\n:judge omission dropped "brother"\n:q\n'
    run_console(
        ConsoleSession({"model": model}, history),
        stdin=io.StringIO(lines),
        stdout=io.StringIO(),
    )
    records = [json.loads(r) for r in history.read_text(encoding="utf-8").splitlines()]
    assert len([r for r in records if "judges" in r]) == 3  # g, :judge, interact's

    _, written = create_report(run_dir, sentence="I like tea.")
    texts = {p.name: p.read_text(encoding="utf-8") for p in written}
    md, page = texts[REPORT_MD], texts[REPORT_HTML]
    assert escape_markdown("good — [b]reads well[/b]") in md  # as typed, not styled
    assert "good — [b]reads well[/b]</td>" in page
    assert 'has omissions — dropped "brother"' in md
    assert "has omissions — dropped &quot;brother&quot;</td>" in page
    assert "| 2× |" in md  # "I like tea." twice, listed once
    assert "Some tea." not in md.split("## Translations tried in the console")[1].split("##")[0]
    assert "the 2 judged of 3 distinct lines" in md
    assert (
        cli("report", str(run_dir), "--console", "all", "--sentence", "I like tea.").returncode == 0
    )
    md = (run_dir / REPORT_MD).read_text(encoding="utf-8")
    assert "| Some tea. |" in md
    assert "Listed: all 3 distinct lines" in md
