"""The run report from a real tiny run: files, the run's numbers, no external references."""

from __future__ import annotations

import html
import importlib.util
import json
import math
import shutil
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests.fixtures.record_tiny_run import RUN_NAME
from tests.fixtures.record_tiny_run import TARGET as RECORDED_RUN
from tests.helpers.cli import run_cli
from tests.helpers.paths import TESTS
from tests.helpers.runs import FinishedRun, tiny_config
from tests.helpers.tui import wait_for
from workbench.cli import main
from workbench.core.attention.figures import heatmap_svg
from workbench.core.records.run_records import BaselineRecord
from workbench.core.records.summary import RunSummary
from workbench.core.report.build import build_report, create_report
from workbench.core.report.model import FIGURE_FILES, REPORT_HTML, REPORT_MD
from workbench.core.translate.history import append_history, console_for_run, same_folder
from workbench.core.translate.translator import Translation
from workbench.core.views.document import escape_markdown
from workbench.core.views.svg import Series, line_chart_svg

SCRIPTY = "<script>alert('x')</script> [/bold] I love 中文"
SVG = "{http://www.w3.org/2000/svg}"


@pytest.fixture(scope="module")
def tiny_run(finished_run: FinishedRun, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished 2-epoch run (the shared one, copied: reports and studies are written into
    it) and three console lines: two with its model, one not."""
    out = tmp_path_factory.mktemp("report") / "out"
    run_dir = finished_run.copy_to(out)
    history = out / "console_history.jsonl"
    append_history(history, str(out / "best_model"), Translation("I like tea.", "我喜欢茶。"))
    append_history(history, str(run_dir / "best_model"), Translation(SCRIPTY, "我爱中文"))
    append_history(history, "/elsewhere/other_model", Translation("Not this run.", "不是"))
    return run_dir


@pytest.fixture(scope="module")
def written(tiny_run: Path) -> dict[str, str]:
    """The report of the tiny run, written once: file name -> text."""
    _, paths = create_report(tiny_run)
    return {p.name: p.read_text(encoding="utf-8") for p in paths}


def summary_of(run_dir: Path) -> dict:
    return json.loads((run_dir / "summary.json").read_text(encoding="utf-8"))


@pytest.mark.slow
def test_report_files_exist_and_hold_the_runs_numbers(tiny_run: Path, written: dict[str, str]):
    assert set(written) == {REPORT_MD, REPORT_HTML, *FIGURE_FILES.values()}
    summary = summary_of(tiny_run)
    for text in (written[REPORT_MD], written[REPORT_HTML]):
        for role in ("test", "validation"):
            block = summary[role]
            assert f"{block['bleu_before']:.2f} → {block['bleu_after']:.2f}" in text
            assert f"{block['chrf_after']:.2f} ({block['chrf_after_ci'][0]:.2f}…" in text
            assert f"{role} ({block['name']}, {block['size']:,})" in text
        assert "never to choose the epoch or the recipe" in text
        for epoch in summary["epochs"]:  # one row per epoch with its BLEU and chrF
            assert f"{epoch['eval_bleu']:.2f}" in text
            assert f"{epoch['eval_chrf']:.2f}" in text
    assert len(summary["samples"]) == 5
    for sample in summary["samples"]:
        assert escape_markdown(sample["source"]) in written[REPORT_MD]
        assert escape_markdown(sample["after"]) in written[REPORT_MD]
        assert html.escape(sample["after"]) in written[REPORT_HTML]
    for name in FIGURE_FILES.values():  # markdown links the figures written beside it
        assert f"]({name})" in written[REPORT_MD]
    assert "| epochs | 2 |" in written[REPORT_MD]  # as the user writes it, not 2.0
    assert "| learning_rate | 0.003 | 0.0007 |" in written[REPORT_MD]  # changed from the preset


@pytest.mark.slow
def test_html_is_self_contained_and_escapes_user_text(written: dict[str, str]):
    page = written[REPORT_HTML]
    for external in (
        "http://",
        "https://",
        'src="//',
        "href=",
        "url(",
        "@import",
        "<link",
        "<script",
        "<img",
    ):
        assert external not in page, external
    assert '<meta charset="utf-8">' in page
    assert "Noto Sans CJK SC" in page
    assert "Microsoft YaHei" in page
    assert html.escape(SCRIPTY) in page  # shown as typed, never run or styled
    assert "我爱中文" in page
    assert page.count("<svg") == 3  # loss, BLEU and the heatmap, inline
    assert page.count('class="judgement"') == 2  # one empty cell per console line
    assert "&lt;script&gt;" in written[REPORT_MD]
    assert "<script" not in written[REPORT_MD]


@pytest.mark.slow
def test_figures_parse_as_svg(written: dict[str, str]):
    for name in FIGURE_FILES.values():
        assert ET.fromstring(written[name]).tag == f"{SVG}svg"
    for key in ("loss", "bleu"):
        assert "nan" not in written[FIGURE_FILES[key]]
        assert "inf" not in written[FIGURE_FILES[key]]
    loss = ET.fromstring(written[FIGURE_FILES["loss"]])
    assert len(loss.findall(f".//{SVG}polyline")) == 2  # training and validation loss


@pytest.mark.slow
def test_heatmap_is_of_the_first_console_sentence(tiny_run: Path, written: dict[str, str]):
    report = build_report(tiny_run)
    att = report.attention
    assert att.sentence == "I like tea."
    assert att.svg
    assert not att.missing
    root = ET.fromstring(written[FIGURE_FILES["attention"]])
    labels = [t.text for t in root.iter(f"{SVG}text")]
    assert "tea" in labels
    assert "like" in labels
    assert "I like tea." in written[REPORT_MD]


@pytest.mark.slow
def test_console_lines_of_other_models_are_left_out(tiny_run: Path):
    report = build_report(tiny_run, with_attention=False)
    assert [c.source for c in report.console] == ["I like tea.", SCRIPTY]
    assert all(c.role == "fine-tuned" for c in report.console)
    assert report.console_note.startswith("2 of the 3 lines")


def test_unmatched_history_is_listed_whole_and_says_so(tmp_path: Path):
    run = tmp_path / "out" / "runs" / "20260101-000000-demo"
    run.mkdir(parents=True)
    history = [
        {"time": "2026-01-01T00:00:00", "model": "/some/model", "source": "a", "translation": "甲"}
    ]
    lines, note = console_for_run(history, run, RunSummary(status="finished"), tmp_path / "out")
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
    lines, note = console_for_run(history, run, RunSummary(status="finished"), out)
    assert [(c.source, c.role) for c in lines] == [("mine", "fine-tuned"), ("base", "base")]
    assert note.startswith("2 of the 3 lines")


@pytest.mark.slow
def test_console_history_records_the_run_and_backend(tiny_run: Path, tmp_path: Path):
    from workbench.core.translate.translator import Translator

    model = str(tiny_run / "best_model")
    translator = Translator.from_pretrained(model, backend="transformers")
    append_history(tmp_path / "h.jsonl", model, Translation("a", "甲"), translator)
    record = json.loads((tmp_path / "h.jsonl").read_text(encoding="utf-8"))
    assert same_folder(record["run_dir"], tiny_run)
    assert record["backend"] == "transformers"


def test_relative_history_paths_match_by_their_tail(tmp_path: Path):
    folder = tmp_path / "translation_output" / "best_model"
    assert same_folder("translation_output/best_model", folder)
    assert same_folder(str(folder), folder)
    assert not same_folder("best_model", folder)  # one part says too little
    assert not same_folder("other/best_model", folder)


@pytest.mark.slow
def test_run_without_a_model_still_reports_why(tiny_run: Path, tmp_path: Path):
    run = tmp_path / "runs" / tiny_run.name
    run.mkdir(parents=True)
    for name in ("config.json", "metrics.jsonl"):
        shutil.copy(tiny_run / name, run / name)
    summary = summary_of(tiny_run)
    for key in ("test", "validation", "samples", "epochs", "best_checkpoint"):
        summary.pop(key)
    summary["status"] = "stopped"
    (run / "summary.json").write_text(json.dumps(summary), encoding="utf-8")
    report, paths = create_report(run, sentence="I like tea.")
    text = (run / REPORT_MD).read_text(encoding="utf-8")
    assert "This run is stopped, not finished" in text
    assert "No heatmap: this run has no saved model" in text
    assert len(report.epochs) == 2  # the per-epoch rows come from metrics.jsonl
    assert not (run / FIGURE_FILES["attention"]).exists()
    assert {p.name for p in paths} == {
        REPORT_MD,
        REPORT_HTML,
        FIGURE_FILES["loss"],
        FIGURE_FILES["bleu"],
    }


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


@pytest.mark.slow
def test_cli_writes_the_report_of_the_newest_finished_run(tiny_run: Path):
    out = tiny_run.parent.parent
    done = run_cli("report", "--output-dir", str(out), "--sentence", "Tea, please.")
    assert done.returncode == 0, done.stderr
    assert f"wrote {tiny_run / REPORT_HTML}" in done.stdout
    assert "Tea, please." in (tiny_run / REPORT_MD).read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["report"], "no finished run under translation_output/runs; train one first"),
        (["report", "nowhere"], "run folder nowhere does not exist"),
    ],
)
def test_cli_errors_are_one_line(tmp_path: Path, monkeypatch, capsys, argv, message):
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err
    assert err.count("\n") == 1


def test_cli_folder_without_summary_is_refused(tmp_path: Path, capsys):
    (tmp_path / "run").mkdir()
    assert main(["report", str(tmp_path / "run")]) == 2
    assert "has no summary.json" in capsys.readouterr().err


@pytest.mark.slow
async def test_tui_keys_save_a_screenshot_and_write_the_report(tiny_run: Path, tmp_path: Path):
    from textual.widgets import Input

    from workbench.tui.app import WorkbenchApp

    out = tmp_path / "out"
    shutil.copytree(tiny_run.parent.parent, out)
    run = out / "runs" / tiny_run.name
    (run / REPORT_HTML).unlink(missing_ok=True)  # written there by an earlier test
    app = WorkbenchApp(tiny_config(samples=180, output_dir=str(out)))
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("f4")
        await pilot.pause(0.3)
        field = app.query_one("#translate-input", Input)
        field.focus()
        await pilot.press("s", "r")  # plain letters are typed, not taken as shortcuts
        assert field.value == "sr"
        await pilot.press("f6")
        await pilot.pause(0.2)
        shots = list(run.glob("screenshot-translate-*.svg"))
        assert len(shots) == 1
        assert ET.parse(shots[0]).getroot().tag == f"{SVG}svg"
        # The toast names the file, not a path that would wrap (no PNG without cairosvg).
        saved = next(n for n in app._notifications if n.title == "Screenshot saved")
        # With cairosvg (the png extra, in the test extra) a PNG is written beside it.
        pngs = sorted(run.glob("screenshot-*.png"))
        assert len(pngs) == (importlib.util.find_spec("cairosvg") is not None)
        also = f"\nand {pngs[0].name}" if pngs else ""
        assert saved.message == f"{shots[0].name}{also}\nin runs/{run.name}"
        await pilot.press("f7")
        await wait_for(pilot, (run / REPORT_HTML).exists, timeout=120)
        assert field.value == "sr"
        assert app.is_running
    caption = "Translate pane, "
    assert f"]({shots[0].name})" in (run / REPORT_MD).read_text(encoding="utf-8")
    assert f'<figcaption class="caption">{caption}' in (run / REPORT_HTML).read_text("utf-8")


def test_f6_writes_a_png_beside_the_svg_when_cairosvg_is_installed(tmp_path: Path):
    pytest.importorskip("cairosvg")
    from workbench.core.report.screenshots import write_png

    svg = tmp_path / "screenshot-training-20261201-173405.svg"
    shot = TESTS / "tui" / "__snapshots__" / "test_tui_snapshots"
    shutil.copyfile(shot / "test_pane_snapshot[80x24-training].svg", svg)
    png = write_png(svg)
    assert png == svg.with_suffix(".png")
    assert png.read_bytes().startswith(b"\x89PNG")


@pytest.mark.slow
def test_the_lab_studies_run_for_a_run_appear_in_its_report(
    tiny_run: Path, written: dict[str, str], capsys
):
    assert "The Lab" not in written[REPORT_MD]  # no study run yet: no section
    model = str(tiny_run / "best_model")
    assert main(["lab", "decoding", "--model", model, "--limit", "3"]) == 0
    assert main(["lab", "cache", "--model", model, "--lengths", "2", "4", "--repeats", "1"]) == 0
    assert main(["lab", "attention", "--model", model, "I like tea."]) == 0
    capsys.readouterr()
    decoding = json.loads((tiny_run / "lab_decoding.json").read_text(encoding="utf-8"))
    _, paths = create_report(tiny_run)
    texts = {p.name: p.read_text(encoding="utf-8") for p in paths}
    for text in (texts[REPORT_MD], texts[REPORT_HTML]):
        assert "The Lab: the assignment" in text
        for title in ("Decoding strategies", "The KV cache", "The three attentions"):
            assert title in text
        for result in decoding["results"]:
            assert result["name"] in text
            assert f"{result['bleu']:.2f}" in text
        assert "The measured cache equals the formula at every t." in text
        assert "masked decoder self-attention" in text
    assert decoding["findings"] in texts[REPORT_MD].replace("\\", "")
    # A study file that no longer reads as its study is named and left out, never half-drawn.
    (tiny_run / "lab_cache.json").write_text('{"layers": 2}', encoding="utf-8")
    _, paths = create_report(tiny_run)
    text = next(p for p in paths if p.name == REPORT_MD).read_text(encoding="utf-8")
    assert "The KV cache" not in text
    assert "Left out: lab_cache.json in the run folder does not read as its study" in text
    assert "Decoding strategies" in text


def test_the_published_score_and_the_warning_stand_beside_before():
    from workbench.core.report.model import AttentionFigure, RunReport
    from workbench.core.report.render import render_html, render_markdown
    from workbench.core.run_folder import SavedConfig

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
    from workbench.core.translate.history import append_judgement, fold_judgements
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
    history = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    assert len(fold_judgements(history)) == 4  # the judgements fold in; no line is lost
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
    unjudged = [r for r in history if "judges" not in r]
    lines, note = console_for_run(unjudged, run, summary, out, choice="judged")
    assert lines == []
    assert "None of them is judged yet" in note
    assert [c.source for c in console_for_run(unjudged, run, summary, out)[0]] == ["b", "a", "c"]
