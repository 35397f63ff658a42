"""What a run leaves, named once (workbench.core.run_folder.layout), and each file's typed
reader saying what it did with a key it did not expect and a key it lacked. That a finished
run leaves nothing else is tests/e2e/test_run_folder_runs.py's."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import workbench
from tests.helpers.runs import named_paths
from workbench.core.config.settings import REPORT_TARGETS
from workbench.core.data.cleaning import Dropped
from workbench.core.data.dropped_pairs import read_dropped_pairs
from workbench.core.evaluate.before_after import read_before
from workbench.core.events import EvalDone, JsonlRecorder
from workbench.core.live.follow import MetricsFollower
from workbench.core.live.stop_request import read_stop_request
from workbench.core.live.writer_record import WriterRecord
from workbench.core.report.read import read_lab_studies
from workbench.core.run_folder.layout import OutputFolder, RunFolder
from workbench.core.run_folder.samples import read_picked_translations, read_translations
from workbench.core.run_folder.saved_config import read_saved_config
from workbench.core.run_folder.summary_file import read_summary

PACKAGE = Path(workbench.__path__[0])
LAYOUT = "core/run_folder/layout.py"

FOLDER = RunFolder(Path("out/runs/20260101-000000-demo"))
OUTPUT = OutputFolder(Path("out"))
#: Every name the layout gives a file or folder of a run or of its output folder, as a
#: literal (a split's translations are named by the split); ``tensorboard`` is also a value
#: of ``--report-to``, and ``runs`` a command.
LITERALS = {p.name for p in named_paths(FOLDER) if not p.name.endswith("_translations.jsonl")}
NAMES = sorted((LITERALS | {OUTPUT.history.name, OUTPUT.best_model.name}) - set(REPORT_TARGETS))


@pytest.mark.parametrize("name", NAMES)
def test_each_run_file_is_named_in_one_place(name: str):
    """A grep for the name as a string literal finds the layout and nothing else."""
    literal = re.compile(rf"[\"']{re.escape(name)}[\"']")
    found = [
        path.relative_to(PACKAGE).as_posix()
        for path in sorted(PACKAGE.rglob("*.py"))
        if literal.search(path.read_text(encoding="utf-8"))
    ]
    assert found == [LAYOUT]


def test_the_docs_list_every_file_the_run_folder_names():
    paths = named_paths(FOLDER)
    assert len({p.name for p in paths}) == len(paths)  # no two paths share a file
    runs_doc = (PACKAGE.parent / "docs" / "runs.md").read_text(encoding="utf-8")
    for path in [*paths, OUTPUT.history, OUTPUT.best_model]:
        shown = path.name if "." in path.name else f"{path.name}/"
        if path.name.startswith("report_"):
            shown = "report_*.svg"
        if path.name.endswith("_translations.jsonl"):
            shown = "_translations.jsonl"
        assert shown in runs_doc, f"docs/runs.md does not list {path.name}"
    with pytest.raises(ValueError, match="no Lab study 'nope'"):
        FOLDER.lab_study("nope")


def planted(path: Path, record: dict, drop: str) -> None:
    """``record`` written to ``path`` with one key taken out and one no reader knows."""
    edited = {k: v for k, v in record.items() if k != drop}
    edited["planted_key"] = 1
    path.write_text(json.dumps(edited), encoding="utf-8")


def test_config_json_says_what_it_ignored_and_what_the_preset_fills(tmp_path: Path):
    from workbench.core.config.build import build_config

    record = {
        **build_config("demo").to_dict(),
        "precision": {"device": "cpu", "training": "fp32", "training_tf32": False},
        "cleaning": {"rules": ["empty"], "counts": {"empty": 0}, "pairs_in": 3, "dropped": 0},
    }
    planted(RunFolder(tmp_path).config, record, "epochs")
    notes: list[str] = []
    saved = read_saved_config(tmp_path, notes)
    assert saved is not None
    assert "planted_key" not in saved.settings
    assert "epochs" not in saved.settings
    assert saved.precision is not None
    assert saved.precision.device == "cpu"
    assert saved.cleaning is not None
    assert saved.cleaning.pairs_in == 3
    assert notes == [
        "config.json: unknown setting 'planted_key' ignored",
        "config.json: no 'epochs'; the preset's value is used",
    ]
    assert saved.config("demo").epochs == build_config("demo").epochs


def test_summary_json_says_what_it_ignored_and_read_as_missing(tmp_path: Path):
    record = {"status": "finished", "preset": "demo", "global_step": 12, "train_seconds": 3.0}
    planted(RunFolder(tmp_path).summary, record, "global_step")
    notes: list[str] = []
    summary = read_summary(tmp_path, notes)
    assert summary is not None
    assert (summary.status, summary.global_step, summary.train_seconds) == ("finished", None, 3.0)
    assert notes == ["summary.json: unknown key 'planted_key' ignored"]


def test_translations_say_which_lines_they_dropped(tmp_path: Path):
    row = {
        "source": "I like tea.",
        "reference": "我喜欢茶。",
        "before": "",
        "after": "我喜欢茶。",
        "bleu_before": 0.0,
        "bleu_after": 100.0,
    }
    lines = [
        json.dumps(row),
        json.dumps({**row, "planted_key": 1}),
        json.dumps({k: v for k, v in row.items() if k != "after"}),
        "{torn",
    ]
    RunFolder(tmp_path).translations("test").write_text("\n".join(lines), encoding="utf-8")
    notes: list[str] = []
    rows, skipped = read_translations(tmp_path, "test", notes)
    assert [r.after for r in rows] == ["我喜欢茶。", "我喜欢茶。"]
    assert rows[0].chrf_before is None  # a run from before sentence chrF was kept
    assert skipped == 2
    assert notes == [
        "test_translations.jsonl line 2: unknown key 'planted_key' ignored",
        "test_translations.jsonl line 3: no 'after'; the record is read as missing",
        "test_translations.jsonl: 1 line(s) that are not JSON objects skipped",
    ]


def test_picked_translations_say_which_lines_they_dropped(tmp_path: Path):
    row = {
        "source": "I like tea.",
        "reference": "我喜欢茶。",
        "beam": "我喜欢茶。",
        "picked": "我爱茶。",
        "score": 0.5,
        "distinct": 3,
        "bleu_beam": 100.0,
        "bleu_picked": 30.0,
        "chrf_beam": 100.0,
        "chrf_picked": 50.0,
    }
    lines = [
        json.dumps(row),
        json.dumps({k: v for k, v in row.items() if k != "picked"}),
        "[1, 2]",
        "{torn",
    ]
    RunFolder(tmp_path).picked_translations("test").write_text("\n".join(lines), encoding="utf-8")
    notes: list[str] = []
    rows = read_picked_translations(tmp_path, "test", notes)
    assert [r.picked for r in rows] == ["我爱茶。"]
    assert notes == [
        "test_picked_translations.jsonl line 2: no 'picked'; the record is read as missing",
        "test_picked_translations.jsonl: 2 line(s) that are not JSON objects skipped",
    ]
    assert read_picked_translations(tmp_path, "validation") == []


def test_metrics_jsonl_says_which_lines_it_skipped_and_why(tmp_path: Path):
    path = RunFolder(tmp_path).metrics
    JsonlRecorder(path)(EvalDone(step=9, epoch=1.0, bleu=3.2, chrf=9.0))
    good = path.read_text(encoding="utf-8").strip()
    record = json.loads(good)
    with_planted = json.dumps({**record, "planted_key": 1})
    without_step = json.dumps({k: v for k, v in record.items() if k != "step"})
    path.write_text("\n".join([good, with_planted, without_step, ""]), encoding="utf-8")
    notes: list[str] = []
    events = MetricsFollower(path, notes).read_new()
    assert events == [EvalDone(step=9, epoch=1.0, bleu=3.2, chrf=9.0)]
    assert notes[0].startswith("metrics.jsonl line 2: EvalDone record has fields ['planted_key']")
    assert notes[1].startswith("metrics.jsonl line 3: ")
    assert "step" in notes[1]
    assert notes[1].endswith("; skipped")


def test_before_json_says_what_it_ignored_and_reuses_nothing_it_lacks(tmp_path: Path):
    record = {
        "test": ["a", "b"],
        "validation": ["c"],
        "sources": {"test": "f1", "validation": "f2"},
    }
    planted(RunFolder(tmp_path).before, record, "validation")
    notes: list[str] = []
    before = read_before(tmp_path, notes)
    assert before.translations("test") == ["a", "b"]
    assert before.fingerprint("test") == "f1"
    assert before.translations("validation") is None
    assert notes == ["before.json: unknown key 'planted_key' ignored"]


def test_the_writer_record_says_what_it_lacked(tmp_path: Path):
    record = {
        "host": "gpu1",
        "pid": 42,
        "start_ticks": 7,
        "started": 1.0,
        "heartbeat": 2.0,
        "state": "running",
    }
    planted(RunFolder(tmp_path).writer_record, record, "error")
    notes: list[str] = []
    writer = WriterRecord.read(tmp_path, notes)
    assert writer is not None
    assert (writer.host, writer.error) == ("gpu1", None)
    assert notes == ["writer.json: unknown key 'planted_key' ignored"]
    planted(RunFolder(tmp_path).writer_record, record, "pid")
    notes.clear()
    assert WriterRecord.read(tmp_path, notes) is None
    assert "writer.json: no 'pid'; the record is read as missing" in notes


def test_a_stop_request_that_lacks_its_host_still_stops_the_run(tmp_path: Path):
    record = {"by": "workbench stop", "host": "gpu1", "pid": 42, "time": 1.0}
    planted(RunFolder(tmp_path).stop_request, record, "host")
    notes: list[str] = []
    assert read_stop_request(tmp_path, notes) == "by workbench stop on host ?"
    assert notes == ["stop.request: unknown key 'planted_key' ignored"]


def test_dropped_pairs_say_which_lines_they_dropped(tmp_path: Path):
    pair = {"rule": "empty", "source": "", "target": "x", "kept": False}
    lines = [
        json.dumps(pair),
        json.dumps({**pair, "planted_key": 1}),
        json.dumps({k: v for k, v in pair.items() if k != "rule"}),
    ]
    RunFolder(tmp_path).dropped_pairs.write_text("\n".join(lines), encoding="utf-8")
    notes: list[str] = []
    assert read_dropped_pairs(tmp_path, notes) == [Dropped("empty", "", "x")] * 2
    assert notes == [
        "dropped_pairs.jsonl line 2: unknown key 'planted_key' ignored",
        "dropped_pairs.jsonl line 3: no 'rule'; the record is read as missing",
    ]


def test_a_lab_study_that_lacks_a_field_is_left_out_and_said(tmp_path: Path):
    RunFolder(tmp_path).lab_study("cache").write_text('{"planted_key": 1}', encoding="utf-8")
    notes: list[str] = []
    studies = read_lab_studies(tmp_path, notes)
    assert studies.cache is None
    assert studies.unreadable == ("lab_cache.json",)
    assert notes == [
        "lab_cache.json: no 'model_dir'; the record is read as missing",
        "lab_cache.json: not read as a CacheStudy; the study is left out",
    ]
