"""A run's last events are read from the end of its log, block by block."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from workbench.core.records.files import records_from_end


@pytest.mark.parametrize("block", [1, 7, 64, 1 << 16])
def test_every_object_line_comes_back_last_first_whatever_the_block(tmp_path: Path, block: int):
    records = [{"n": n, "text": "x" * (n % 13)} for n in range(200)]
    lines = [json.dumps(r) for r in records]
    lines.insert(50, '{"torn": ')  # a killed writer's line, ended by the next writer
    lines.insert(10, "[1, 2]")  # JSON, but not an object
    lines.insert(3, "")
    path = tmp_path / "metrics.jsonl"
    path.write_text("\n".join(lines) + '\n{"half": "writ', encoding="utf-8")
    assert list(records_from_end(path, block)) == records[::-1]


def test_a_missing_or_empty_file_has_no_records(tmp_path: Path):
    assert list(records_from_end(tmp_path / "missing.jsonl")) == []
    (tmp_path / "empty.jsonl").write_bytes(b"")
    assert list(records_from_end(tmp_path / "empty.jsonl")) == []
