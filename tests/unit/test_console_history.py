"""The console history read back through its typed records: every translation a file
holds is read whatever it lacks, each with its newest judgement, and a line reads back as
it was written (the file's format stays what it was)."""

from __future__ import annotations

import json
from pathlib import Path

from workbench.core.translate.history import HistoryLine, history_lines, read_history
from workbench.core.translate.judgements import Judgement
from workbench.core.translate.quality import QualityScore


def test_the_history_reads_every_line_a_file_holds(tmp_path: Path):
    """Lines without the fields later lines have, ill-typed fields and a torn last line:
    every translation in the file is read, none dropped; a judgement of a line that is
    not there judges nothing."""
    history = tmp_path / "console_history.jsonl"
    records = [
        {"time": "2026-01-01T00:00:00", "model": "m", "source": "a", "translation": "甲"},
        {"id": "x1", "model": "m", "source": "b", "translation": "乙", "seconds": "fast"},
        {"id": "x2", "source": "c", "translation": "丙", "qe": {"metric": "COMET-QE"}},
        {"id": "x3", "source": "d", "translation": "丁", "notices": ["cut"], "extra": 1},
        {"time": "2026-01-01T00:00:09", "judges": "x1", "verdict": "good", "note": ""},
        {"time": "2026-01-01T00:00:10", "judges": "gone", "verdict": "error", "note": ""},
        ["not", "a", "record"],
    ]
    text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)
    history.write_text(text + '{"id": "x4", "source": "torn', encoding="utf-8")
    lines = read_history(history)
    assert [x.source for x in lines] == ["a", "b", "c", "d"]
    assert lines[0] == HistoryLine(
        time="2026-01-01T00:00:00", model="m", source="a", translation="甲"
    )
    assert lines[1].seconds == 0.0  # ill-typed: its default, the line kept
    assert lines[1].judgement == Judgement("good")
    assert lines[2].qe is None  # a score without its value is no score
    assert lines[3].notices == ["cut"]
    assert read_history(tmp_path / "missing.jsonl") == []


def test_a_line_reads_back_as_it_was_written():
    score = QualityScore("CometKiwi-22", "Unbabel/wmt22-cometkiwi-da", 81.23)
    line = HistoryLine(id="x", source="a", translation="甲", notices=["cut"], qe=score)
    assert history_lines([json.loads(json.dumps(line.to_dict()))]) == [line]
    unscored = HistoryLine(id="y", source="b", translation="乙")
    assert "qe" not in unscored.to_dict()  # as a line without --qe always was
    assert history_lines([unscored.to_dict()]) == [unscored]
