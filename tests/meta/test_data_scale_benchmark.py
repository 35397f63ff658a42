"""The data-scale benchmark's parts at toy size: correctness only, never timing."""

from __future__ import annotations

import importlib
import os
import sys
from pathlib import Path

import pytest

from tests.helpers.paths import REPO


@pytest.fixture(scope="module")
def bench():
    sys.path.insert(0, str(REPO / "benchmarks"))  # as benchmarks/data_scale.py runs
    return importlib.import_module("data_scale")


@pytest.fixture(scope="module")
def report(bench):
    return importlib.import_module("data_scale_report")  # beside it, on the same path


@pytest.fixture(scope="module")
def command(bench):
    return importlib.import_module("timed_command")


def test_the_corpus_is_real_sentences_with_the_noise_it_names(bench, tmp_path: Path):
    path = bench.make_corpus(2_000, tmp_path / "pairs.tsv")
    lines = path.read_text(encoding="utf-8").split("\n")
    assert lines[0] == "en\tzh"
    assert lines[-1] == ""
    assert len(lines) == 2_002
    rows = [line.split("\t") for line in lines[1:-1]]
    assert all(len(row) == 2 for row in rows)  # one pair a line, quotes or not
    assert sum(1 for s, t in rows if s == t) > 5  # copies
    assert sum(1 for _, t in rows if not t) > 2  # empty targets
    assert sum(1 for s, _ in rows if s.startswith('"')) > 5  # quotes, some unclosed
    assert (
        bench.make_corpus(50, tmp_path / "again.tsv").read_text(encoding="utf-8")
        == "\n".join(lines[:51]) + "\n"
    )  # seeded


def test_the_report_gives_each_arm_against_the_anchor(bench, report):
    lines = [(0.5, "[data] x"), (3.0, "[model] m"), (3.5, "[before] t"), (5.5, "[train]")]
    assert bench.phase_seconds(lines, "[data]", "[model]") == 2.5
    assert bench.phase_seconds(lines, "[before]", "[nothing]") is None
    said = [(4.0, "  data: prepared 1,000 pairs in 9.0 s: reading 1.5 s · writing 7.5 s")]
    stages = bench.data_stages([*lines, *said])
    assert stages == {"reading": 1.5, "writing": 7.5}
    assert bench.data_stages(lines) == {}
    rows = [
        {"n": 1000, "arm": "anchor", "seconds": 10.0, "peak_mib": 500},
        {
            "n": 1000,
            "arm": "cold",
            "seconds": 15.0,
            "peak_mib": 750,
            "data_seconds": 9.0,
            "before_seconds": 2.0,
            "stages": stages,
        },
        {
            "n": 1000,
            "arm": "cached",
            "seconds": 2.0,
            "peak_mib": 400,
            "data_seconds": 0.5,
            "before_seconds": 0.0,
        },
    ]
    context = {"machine": "m", "cores": 2, "procs": 2, "date": "2026-12-02"}
    context.update(load_before="0.50 0.40 0.30", load_after="1.20 0.60 0.40")
    text = report.render_report(rows, context)
    assert "Load average (1/5/15 min) before 0.50 0.40 0.30, after 1.20 0.60 0.40." in text
    # Each arm runs once at each size: no spread is made up.
    assert "Noise: 1 repetition per arm: no spread, so no figure here can be told" in text
    assert (
        "| 1,000 | 10.0 s | 15.0 s | 1.50 | 9.0 s | 2.0 s | 2.0 s | 0.20 | "
        "500 / 750 / 400 MiB (1.50×) |" in text
    )
    assert "| pairs | reading | writing |" in text
    assert "| 1,000 | 1.5 s | 7.5 s |" in text
    # A phase line the run never printed, an arm that never ran: "n/a", not a crash.
    rows[1]["data_seconds"] = None
    text = report.render_report(rows[:2], context)
    assert (
        "| 1,000 | 10.0 s | 15.0 s | 1.50 | n/a | 2.0 s | n/a | n/a | 500 / 750 / n/a MiB" in text
    )


def test_memory_is_summed_over_the_process_group(command):
    assert command.tree_pss_kib(os.getpgid(0)) > 1_000  # this test process alone is more
