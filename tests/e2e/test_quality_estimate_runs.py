"""``--qe``: a reference-free score beside each translation of the user's own sentences, in
``interact`` and the Translate pane, kept in the console history and shown in the report next to
the student's own judgement (the fixture CometKiwi-shaped model, offline).

The tests that train (or build), split from tests/unit/test_quality_estimate.py, whose other
tests do not.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from textual.widgets import DataTable, Static

from tests.helpers.comet import KIWI, qe_records
from tests.helpers.runs import FinishedRun, small
from tests.helpers.tui import open_translate, wait_for
from workbench.core.report.write import create_report
from workbench.core.run_folder.layout import REPORT_MD
from workbench.tui.app import WorkbenchApp


async def test_the_translate_pane_scores_each_row_and_the_report_shows_it_beside_the_judgement(
    tmp_path: Path, finished_run: FinishedRun
):
    run_dir = finished_run.copy_to(tmp_path / "out")
    app = WorkbenchApp(small(tmp_path), qe_model=str(KIWI))
    async with app.run_test(size=(80, 24)) as pilot:
        pane = await open_translate(pilot)
        table = pane.query_one("#translate-history", DataTable)
        labels = [str(c.label) for c in table.columns.values()]
        assert labels == ["model", "source", "translation", "ms", "QE", "judged"]
        widths = sum(c.get_render_width(table) for c in table.columns.values())
        assert widths <= table.size.width  # still fits 80 columns
        await pilot.press(*"I like tea.", "enter")
        await wait_for(pilot, lambda: pane.pending == 0, what="translated and scored")
        (entry,) = pane.entries.values()
        assert entry.quality.startswith("COMET-QE ")
        assert str(table.get_row_at(0)[4]) == f"{float(entry.quality.split()[1]):.1f}"
        detail = str(pane.query_one("#translate-detail", Static).render())
        assert "QE: COMET-QE " in detail
        await pilot.press(*":judge error wrong word", "enter")
    history = tmp_path / "out" / "console_history.jsonl"
    (line,) = [r for r in qe_records(history) if "judges" not in r]
    assert line["qe"]["metric"] == "COMET-QE"
    _, written = create_report(run_dir, sentence="I like tea.")
    md = next(p for p in written if p.name == REPORT_MD).read_text(encoding="utf-8")
    assert "| QE (no reference) | Judgement (one line) |" in md
    assert f"| COMET-QE {line['qe']['score']:.2f} | has errors — wrong word |" in md
    shutil.rmtree(tmp_path / "out")
