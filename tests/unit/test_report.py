"""The run report from a real tiny run: files, the run's numbers, no external references."""

from __future__ import annotations

import html
import json
import math
import shutil
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests.fixtures.record_tiny_run import RUN_NAME
from tests.fixtures.record_tiny_run import TARGET as RECORDED_RUN
from tests.helpers.paths import TESTS
from tests.helpers.report import SVG, summary_of
from workbench.core.attention.figures import heatmap_svg
from workbench.core.records.run_records import BaselineRecord
from workbench.core.records.summary import RunSummary
from workbench.core.report.read import build_report
from workbench.core.report.write import create_report
from workbench.core.run_folder.layout import REPORT_HTML, REPORT_MD
from workbench.core.translate.console_lines import console_for_run, same_folder
from workbench.core.translate.history import append_history, history_lines
from workbench.core.translate.translator import Translation
from workbench.core.views.document import escape_markdown
from workbench.core.views.svg import Series, line_chart_svg


def test_unmatched_history_is_listed_whole_and_says_so(tmp_path: Path):
    run = tmp_path / "out" / "runs" / "20260101-000000-demo"
    run.mkdir(parents=True)
    history = [
        {"time": "2026-01-01T00:00:00", "model": "/some/model", "source": "a", "translation": "甲"}
    ]
    lines, note = console_for_run(
        history_lines(history), run, RunSummary(status="finished"), tmp_path / "out"
    )
    assert [c.source for c in lines] == ["a"]
    assert lines[0].role == ""
    assert note.startswith("None of the 1 lines")
    lines, note = console_for_run([], run, RunSummary(), tmp_path / "out")
    assert lines == []
    assert "No console translations yet" in note


def test_history_lines_that_name_their_run_match_exactly(tmp_path: Path):
    out = tmp_path / "translation_output"
    run = out / "runs" / "20260101-000000-demo"
    other = out / "runs" / "20260102-000000-demo"
    for folder in (run, other):
        folder.mkdir(parents=True)
    shared = str(out / "best_model")
    history = [
        {
            "time": "2026-01-03T00:00:00",
            "model": shared,
            "run_dir": str(run),
            "source": "mine",
            "translation": "我的",
        },
        {
            "time": "2026-01-03T00:00:01",
            "model": shared,
            "run_dir": str(other),
            "source": "theirs",
            "translation": "他们的",
        },
        {
            "time": "2026-01-03T00:00:02",
            "model": str(run / "initial_model"),
            "run_dir": "translation_output/runs/20260101-000000-demo",
            "source": "base",
            "translation": "底",
        },
    ]
    lines, note = console_for_run(history_lines(history), run, RunSummary(status="finished"), out)
    assert [(c.source, c.role) for c in lines] == [("mine", "fine-tuned"), ("base", "base")]
    assert note.startswith("2 of the 3 lines")


def test_relative_history_paths_match_by_their_tail(tmp_path: Path):
    folder = tmp_path / "translation_output" / "best_model"
    assert same_folder("translation_output/best_model", folder)
    assert same_folder(str(folder), folder)
    assert not same_folder("best_model", folder)  # one part says too little
    assert not same_folder("other/best_model", folder)


def test_charts_skip_non_finite_points_and_escape_text():
    svg = line_chart_svg(
        [Series("loss <&>", [(0, 1.0), (1, math.nan), (2, math.inf), (3, 0.5), (4, -math.inf)])],
        title="a & b",
        x_label="epoch",
        y_label="loss",
    )
    root = ET.fromstring(svg)
    polyline = root.find(f".//{SVG}polyline")
    assert polyline is not None
    points = polyline.get("points", "").split()
    assert len(points) == 2
    assert "nan" not in svg
    assert "inf" not in svg
    empty = ET.fromstring(
        line_chart_svg([Series("x", [(0, math.nan)])], title="t", x_label="x", y_label="y")
    )
    assert "no data" in [t.text for t in empty.iter(f"{SVG}text")]
    grid = ET.fromstring(
        heatmap_svg(["<s>", "茶"], ["tea", "&"], [[0.5, 0.5], [1.0, math.nan]], title="t")
    )
    assert {"<s>", "茶", "tea", "&"} <= {t.text for t in grid.iter(f"{SVG}text")}


def test_f6_writes_a_png_beside_the_svg_when_cairosvg_is_installed(tmp_path: Path):
    pytest.importorskip("cairosvg")
    from workbench.core.report.screenshots import write_png

    svg = tmp_path / "screenshot-training-20261201-173405.svg"
    shot = TESTS / "tui" / "__snapshots__" / "test_tui_snapshots"
    shutil.copyfile(shot / "test_pane_snapshot[80x24-training].svg", svg)
    png = write_png(svg)
    assert png == svg.with_suffix(".png")
    assert png.read_bytes().startswith(b"\x89PNG")


def test_the_published_score_and_the_warning_stand_beside_before():
    from workbench.core.report.contents import AttentionFigure, RunReport
    from workbench.core.report.render import render_html, render_markdown
    from workbench.core.run_folder.saved_config import SavedConfig

    warning = "before BLEU 0.30 is 21.70 below the published 22.0 on newstest2018; <cause>"
    baseline = BaselineRecord(
        bleu=22.0,
        chrf=21.19,
        source="Helsinki-NLP opus-2020-07-17",
        url="https://example.org/scores.txt",
        test_set="newstest2018",
        before_bleu=0.3,
        difference=-21.7,
        warning=warning,
    )
    none = SavedConfig({})
    report = RunReport(
        Path("runs/x"), none, none, RunSummary(baseline=baseline), [], [], [], "", AttentionFigure()
    )
    row = (
        "0.30 · published 22.0 (Helsinki-NLP opus-2020-07-17, newstest2018): -21.70 "
        "(figure from https://example.org/scores.txt)"
    )
    markdown, page = render_markdown(report), render_html(report)
    assert f"| BLEU before vs published, newstest2018 | {escape_markdown(row)} |" in markdown
    assert f"| Before far from published | {escape_markdown(warning)} |" in markdown
    assert html.escape(row) in page
    assert html.escape(warning) in page
    nothing = RunReport(Path("runs/x"), none, none, RunSummary(), [], [], [], "", AttentionFigure())
    assert "published" not in render_markdown(nothing)


def test_the_report_says_where_the_gain_comes_from_and_reads_runs_without_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.chdir(tmp_path)  # the recorded files name out/... relative paths
    run = tmp_path / "out" / "runs" / RUN_NAME
    shutil.copytree(RECORDED_RUN, run)
    summary = summary_of(run)
    _, paths = create_report(run)
    texts = {p.name: p.read_text(encoding="utf-8") for p in paths}
    md, page = texts[REPORT_MD], texts[REPORT_HTML]
    (bucket,) = summary["by_length"]  # the 18 short HSK sentences: one bucket, 1-10 words
    test = summary["test"]
    assert (bucket["sentences"], bucket["bleu_after"]) == (test["size"], test["bleu_after"])
    bleu = f"{bucket['bleu_before']:.2f} → {bucket['bleu_after']:.2f} (+0.81)"
    chrf = f"{bucket['chrf_before']:.2f} → {bucket['chrf_after']:.2f} (+2.53)"
    assert "## Where the gain comes from (test set)" in md
    assert "| Source length (words) | Sentences | BLEU before → after | chrF before → after |" in md
    assert f"| 1–10 | 18 | {bleu} | {chrf} |" in md
    assert f'<td>1–10</td><td class="num">18</td><td>{bleu}</td>' in page
    assert "test (10% held out, seed 42, 18): its sentences grouped by" in md
    top = summary["most_changed"]["rose"][0]  # rose most: the first row under its heading
    rose = md.split("### Test sentences whose sentence chrF rose most", 1)[1]
    first_row = rose.split("\n")[4]
    assert first_row.startswith(f"| {escape_markdown(top['source'])} |")
    assert first_row.endswith(f"| {top['chrf_after']:.2f} | +{top['change']:.2f} |")
    assert html.escape(top["source"]) in page
    assert f"+{top['change']:.2f}" in page
    fell = md.split("### Test sentences whose sentence chrF fell most", 1)[1]
    assert fell.split("\n")[2] == "None: no test sentence's chrF fell."

    for key in ("by_length", "most_changed"):  # a run that recorded neither
        summary.pop(key)
    (run / "summary.json").write_text(json.dumps(summary), encoding="utf-8")
    _, paths = create_report(run)
    texts = {p.name: p.read_text(encoding="utf-8") for p in paths}
    for text in (texts[REPORT_MD], texts[REPORT_HTML]):
        assert "summary holds no scores by source length" in text
        assert "chrF rose most" not in text


def test_the_reports_show_the_f6_screenshots_with_pane_and_time(tmp_path: Path):
    """A screenshot the TUI saved (a Textual SVG export) is inline in report.html, without
    its web-font URLs, and linked from report.md, captioned with its pane and time."""
    from workbench.core.report.render import NO_SCREENSHOTS, render_html, render_markdown
    from workbench.core.report.screenshots import screenshot_name

    run = tmp_path / "runs" / RUN_NAME
    shutil.copytree(RECORDED_RUN, run)
    before = render_markdown(build_report(run, with_attention=False))
    assert NO_SCREENSHOTS in before
    shot = TESTS / "tui" / "__snapshots__" / "test_tui_snapshots"
    exported = (shot / "test_pane_snapshot[80x24-training].svg").read_text(encoding="utf-8")
    name = screenshot_name("training", time.mktime((2026, 12, 1, 17, 34, 5, 0, 0, -1)))
    assert name == "screenshot-training-20261201-173405.svg"
    (run / name).write_text(exported, encoding="utf-8")
    (run / "screenshot-notes.svg").write_text("<svg/>", encoding="utf-8")  # not F6's: left out
    report = build_report(run, with_attention=False)
    caption = "Training pane, 2026-12-01 17:34:05"
    markdown, page = render_markdown(report), render_html(report)
    assert f"![{caption}]({name})" in markdown
    assert NO_SCREENSHOTS not in markdown
    assert f'<figcaption class="caption">{caption}</figcaption>' in page
    assert page.count("<svg") == 3  # loss, BLEU and the screenshot (no heatmap asked for)
    assert "last&#160;run&#160;20260101-000000-demo:" in page  # its text, inline
    assert "https://" not in page
    assert "http://" not in page
    assert "@font-face" not in page
    assert "Fira Code" in exported
    assert "https://" in exported


def test_judged_lines_are_listed_once_with_their_judgement(tmp_path: Path):
    from workbench.core.translate.history import append_judgement, read_history
    from workbench.core.translate.judgements import Judgement

    out = tmp_path / "out"
    run = out / "runs" / "20260101-000000-demo"
    run.mkdir(parents=True)
    path = out / "console_history.jsonl"
    model = str(run / "best_model")
    ids = [
        append_history(path, model, Translation(source, text))
        for source, text in [("a", "甲"), ("b", "乙"), ("a", "甲"), ("c", "丙")]
    ]
    append_judgement(path, ids[1], Judgement("error"))
    append_judgement(path, ids[1], Judgement("omission", 'dropped "yesterday"'))  # newer wins
    append_judgement(path, ids[2], Judgement("good"))
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    history = read_history(path)
    assert len(history) == 4  # the judgements fold in; no line is lost
    summary = RunSummary(status="finished")

    lines, note = console_for_run(history, run, summary, out)  # auto: the judged ones
    assert [(c.source, c.count, c.judgement) for c in lines] == [
        ("b", 1, 'has omissions — dropped "yesterday"'),
        ("a", 2, "good"),
    ]
    assert "the 2 judged of 3 distinct lines (1 repeated line shown once)" in note
    lines, note = console_for_run(history, run, summary, out, choice="all")
    assert [(c.source, c.count) for c in lines] == [("b", 1), ("a", 2), ("c", 1)]
    assert note.endswith("Listed: all 3 distinct lines (1 repeated line shown once).")
    unjudged = history_lines([r for r in records if "judges" not in r])
    lines, note = console_for_run(unjudged, run, summary, out, choice="judged")
    assert lines == []
    assert "None of them is judged yet" in note
    assert [c.source for c in console_for_run(unjudged, run, summary, out)[0]] == ["b", "a", "c"]
