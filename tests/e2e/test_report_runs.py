"""The run report from a real tiny run: files, the run's numbers, no external references.

The tests that train (or build), split from tests/unit/test_report.py, whose other tests do not.
"""

from __future__ import annotations

import html
import importlib.util
import json
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests.helpers.cli import imports_of
from tests.helpers.report import SVG, summary_of
from tests.helpers.runs import FinishedRun, tiny_config
from tests.helpers.tui import wait_for
from workbench.core.attention.kept_heatmaps import kept_views
from workbench.core.report.read import build_report
from workbench.core.report.write import create_report
from workbench.core.run_folder.layout import REPORT_FIGURES, REPORT_HTML, REPORT_MD, RunFolder
from workbench.core.translate.console_lines import same_folder
from workbench.core.translate.history import append_history
from workbench.core.translate.translator import Translation
from workbench.core.views.document import escape_markdown

SCRIPTY = "<script>alert('x')</script> [/bold] I love 中文"


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


def test_report_files_exist_and_hold_the_runs_numbers(tiny_run: Path, written: dict[str, str]):
    assert set(written) == {REPORT_MD, REPORT_HTML, *REPORT_FIGURES.values()}
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
    for name in REPORT_FIGURES.values():  # markdown links the figures written beside it
        assert f"]({name})" in written[REPORT_MD]
    assert "| epochs | 2 |" in written[REPORT_MD]  # as the user writes it, not 2.0
    assert "| learning_rate | 0.003 | 0.0007 |" in written[REPORT_MD]  # changed from the preset


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


def test_figures_parse_as_svg(written: dict[str, str]):
    for name in REPORT_FIGURES.values():
        assert ET.fromstring(written[name]).tag == f"{SVG}svg"
    for key in ("loss", "bleu"):
        assert "nan" not in written[REPORT_FIGURES[key]]
        assert "inf" not in written[REPORT_FIGURES[key]]
    loss = ET.fromstring(written[REPORT_FIGURES["loss"]])
    assert len(loss.findall(f".//{SVG}polyline")) == 2  # training and validation loss


def test_heatmap_is_of_the_first_console_sentence(tiny_run: Path, written: dict[str, str]):
    report = build_report(tiny_run)
    att = report.attention
    assert att.sentence == "I like tea."
    assert att.svg
    assert not att.missing
    root = ET.fromstring(written[REPORT_FIGURES["attention"]])
    labels = [t.text for t in root.iter(f"{SVG}text")]
    assert "tea" in labels
    assert "like" in labels
    assert "I like tea." in written[REPORT_MD]


def test_a_finished_run_keeps_its_first_samples_heatmap_for_the_report(
    finished_run: FinishedRun, tmp_path: Path
):
    """The report draws the kept view without torch, in a copy of the run folder too, and it
    is the figure a report that computes the view now draws."""
    run = Path(finished_run.result.run_dir)
    samples = finished_run.result.summary.samples
    assert samples
    first = samples[0].source
    assert [k.asked for k in kept_views(run, run / "best_model")] == [first]
    # Copied as cp -r and scp -r copy: the files, with new modification times.
    copy = Path(shutil.copytree(run, tmp_path / "run", copy_function=shutil.copy))
    reported = imports_of("report", str(copy), modules=("torch",))  # a new interpreter
    assert reported.returncode == 0, reported.stderr
    assert reported.imported == []
    kept = (copy / REPORT_FIGURES["attention"]).read_text(encoding="utf-8")
    RunFolder(copy).heatmaps.unlink()
    computed = build_report(copy).attention
    assert computed.sentence == first
    assert computed.svg == kept


def test_console_lines_of_other_models_are_left_out(tiny_run: Path):
    report = build_report(tiny_run, with_attention=False)
    assert [c.source for c in report.console] == ["I like tea.", SCRIPTY]
    assert all(c.role == "fine-tuned" for c in report.console)
    assert report.console_note.startswith("2 of the 3 lines")


def test_console_history_records_the_run_and_backend(tiny_run: Path, tmp_path: Path):
    from workbench.core.translate.translator import Translator

    model = str(tiny_run / "best_model")
    translator = Translator.from_pretrained(model, backend="transformers")
    append_history(tmp_path / "h.jsonl", model, Translation("a", "甲"), translator)
    record = json.loads((tmp_path / "h.jsonl").read_text(encoding="utf-8"))
    assert same_folder(record["run_dir"], tiny_run)
    assert record["backend"] == "transformers"


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
    assert not (run / REPORT_FIGURES["attention"]).exists()
    assert {p.name for p in paths} == {
        REPORT_MD,
        REPORT_HTML,
        REPORT_FIGURES["loss"],
        REPORT_FIGURES["bleu"],
    }


def test_cli_writes_the_report_of_the_newest_finished_run(cli, tiny_run: Path):
    out = tiny_run.parent.parent
    done = cli("report", "--output-dir", str(out), "--sentence", "Tea, please.")
    assert done.returncode == 0, done.stderr
    assert f"wrote {tiny_run / REPORT_HTML}" in done.stdout
    assert "Tea, please." in (tiny_run / REPORT_MD).read_text(encoding="utf-8")


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


def test_the_lab_studies_run_for_a_run_appear_in_its_report(
    cli, tiny_run: Path, written: dict[str, str]
):
    assert "The Lab" not in written[REPORT_MD]  # no study run yet: no section
    model = str(tiny_run / "best_model")
    assert cli("lab", "decoding", "--model", model, "--limit", "3").returncode == 0
    cache = cli("lab", "cache", "--model", model, "--lengths", "2", "4", "--repeats", "1")
    assert cache.returncode == 0
    assert cli("lab", "attention", "--model", model, "I like tea.").returncode == 0
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
