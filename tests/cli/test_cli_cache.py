"""``workbench cache`` and ``workbench cache prune`` as a user runs them, over caches the
workbench's own cache modules wrote: every entry with the size du gives, its last use and
runs; what prune removes, keeps and frees; bad values in one line; and no torch."""

from __future__ import annotations

import json
import os
import threading
import time
from datetime import datetime
from pathlib import Path

import pytest

from tests.helpers.caches import du_bytes, plant_caches
from tests.helpers.cli import imports_of
from workbench.core.cache_use import use_record, using
from workbench.core.live.writer import RunWriter

DAY = 86_400


def listed(cli, work: Path, *flags: str) -> list[dict]:
    """``workbench cache --json``'s entries."""
    done = cli("cache", "--json", *flags, cwd=work)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)["entries"]


def test_no_cache_says_so(cli, tmp_path: Path):
    done = cli("cache", cwd=tmp_path)
    assert done.returncode == 0
    assert done.stdout.strip() == f"no cache entries under {os.environ['WORKBENCH_CACHE']}"


def test_every_entry_is_listed_with_its_size_on_disk_last_use_and_runs(cli, tmp_path: Path):
    planted = plant_caches(tmp_path)
    use_record(planted.before).unlink()  # made before uses were recorded
    three_days = time.time() - 3 * DAY
    os.utime(planted.before, (three_days, three_days))
    entries = listed(cli, tmp_path)
    assert [Path(e["path"]) for e in entries] == planted.all()
    for entry in entries:  # the size shown is the bytes on disk, as du counts them
        assert entry["bytes"] == du_bytes(Path(entry["path"])), entry["name"]
        assert entry["apparent_bytes"] == du_bytes(Path(entry["path"]), apparent=True)
    before = entries[1]
    assert before["runs"] is None
    assert before["last_used_from"] == "modification time"
    assert abs(datetime.fromisoformat(before["last_used"]).timestamp() - three_days) < 1
    assert [e["complete"] for e in entries] == [True, True, True, False, True, False]
    table = cli("cache", cwd=tmp_path).stdout.splitlines()
    assert table[1].split() == ["KIND", "ENTRY", "SIZE", "LAST", "USE", "RUNS"]
    (row,) = [line for line in table if line.startswith("before ")]
    assert row.split()[-4:] == ["3", "days", "ago", "unknown"]
    (row,) = [line for line in table if "org--pairs@0123abcd" in line]
    assert "partial/org--pairs@0123abcd (partial)" in row
    assert row.split()[-1] == "none"  # used, by no run
    total = sum(e["bytes"] for e in entries)
    assert table[-1] == f"total: 6 entries, {si(total)}"
    assert any(line.startswith("Hub samples: 2 entries, ") for line in table)


def si(count: int) -> str:
    from workbench.core.views.numbers import format_si_bytes

    return format_si_bytes(count)


def test_prune_dry_run_lists_what_would_go_and_removes_nothing(cli, tmp_path: Path):
    planted = plant_caches(tmp_path)
    done = cli("cache", "prune", "--dry-run", "--max-size", "0", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert sum(line.startswith("would remove ") for line in lines) == 6
    assert lines[-1].startswith("would free ")
    assert lines[-1].endswith("; 0 B left in 0 entries")
    assert all(path.exists() for path in planted.all())


def test_prune_removes_the_old_then_the_least_recent_and_says_what_it_freed(cli, tmp_path: Path):
    planted = plant_caches(tmp_path)
    old = time.time() - 40 * DAY
    use_record(planted.sample).unlink()
    os.utime(planted.sample, (old, old))
    done = cli("cache", "prune", cwd=tmp_path)  # the default: unused for 30 days
    assert done.returncode == 0, done.stderr
    (removed, freed) = done.stdout.splitlines()
    assert removed.startswith("removed samples org--pairs-default-…")
    assert removed.endswith(", not used for 40 days)")
    assert freed.startswith("freed ")
    assert freed.endswith("left in 5 entries")
    assert not planted.sample.exists()
    with using(planted.prepared):  # now the most recently used
        pass
    sizes = {Path(e["path"]): e["bytes"] for e in listed(cli, tmp_path)}
    keep = sizes[planted.prepared]  # all the rest must go to fit under it
    done = cli("cache", "prune", "--max-size", f"{keep}B", "--json", cwd=tmp_path)
    report = json.loads(done.stdout)
    assert [Path(e["path"]) for e in report["removed"]] == [
        planted.before,
        planted.partial_sample,
        planted.sealed_preferences,
        planted.unsealed_preferences,
    ]  # least recently used first: in the order they were used
    assert report["left_bytes"] == keep
    assert [Path(e["path"]) for e in listed(cli, tmp_path)] == [planted.prepared]


def test_an_entry_a_process_reads_now_is_kept_and_said_to_be(cli, tmp_path: Path):
    planted = plant_caches(tmp_path)
    with using(planted.prepared):
        done = cli("cache", "prune", "--max-size", "0", cwd=tmp_path)
    (kept,) = [line for line in done.stdout.splitlines() if line.startswith("kept ")]
    assert kept.startswith(f"kept prepared {planted.prepared.name[:12]} ")
    assert kept.endswith(": in use by a process now")
    assert planted.prepared.is_dir()
    assert [Path(e["path"]) for e in listed(cli, tmp_path)] == [planted.prepared]


def test_a_live_runs_entries_are_kept_until_it_ends(cli, tmp_path: Path):
    run = tmp_path / "elsewhere" / "runs" / "20260101-100000-demo"  # not in --output-dir
    run.mkdir(parents=True)
    writer = RunWriter(threading.Event())
    try:
        writer.hold(run)  # this thread now runs it: its uses name it
        planted = plant_caches(tmp_path)
        (run / "attention_heatmaps.json").write_text("{}\n")
        entries = listed(cli, tmp_path)
        assert {e["kind"] for e in entries if e["live_runs"] == [str(run)]} == {
            "prepared", "before", "samples", "preferences", "heatmaps",
        }  # fmt: skip
        (views,) = listed(cli, tmp_path, "--kind", "heatmaps")  # found by the records
        assert views["path"] == str(run / "attention_heatmaps.json")
        table = cli("cache", cwd=tmp_path).stdout
        assert f"{run.name} (live)" in table
        done = cli("cache", "prune", "--max-size", "0", cwd=tmp_path)
        assert done.stdout.count(f": in use by live run {run.name}") == 7
        assert all(path.exists() for path in planted.all())
    finally:
        writer.release("finished")
    done = cli("cache", "prune", "--max-size", "0", cwd=tmp_path)
    assert done.stdout.count("removed ") == 7
    assert not any(path.exists() for path in planted.all())
    assert not (run / "attention_heatmaps.json").exists()
    assert (run / "writer.json").exists()  # the rest of the run folder is the run's


def test_kinds_can_be_listed_and_pruned_alone(cli, tmp_path: Path):
    planted = plant_caches(tmp_path)
    entries = listed(cli, tmp_path, "--kind", "samples", "--kind", "before")
    assert [e["kind"] for e in entries] == ["before", "samples", "samples"]
    done = cli("cache", "prune", "--kind", "preferences", "--max-size", "0", cwd=tmp_path)
    assert done.stdout.count("removed preferences ") == 2
    assert planted.prepared.is_dir()


@pytest.mark.parametrize(
    ("flags", "said"),
    [
        (("--max-size", "-1"), "--max-size -1: not a size; give one such as 500MB, 10GB"),
        (("--older-than", "abc"), "--older-than abc: not a duration; give one such as 12h"),
        (("--kind", "models"), "--kind must be one of prepared, before, samples, preferences"),
    ],
)
def test_a_bad_value_is_one_line_and_exit_2(cli, tmp_path: Path, flags, said):
    planted = plant_caches(tmp_path)
    done = cli("cache", "prune", *flags, cwd=tmp_path)
    assert done.returncode == 2
    assert done.stdout == ""
    (line,) = done.stderr.splitlines()
    assert line.startswith(f"workbench: error: {said}")
    assert all(path.exists() for path in planted.all())


def test_the_cache_commands_import_no_torch(tmp_path: Path):
    """A new interpreter: what the commands import is the point."""
    plant_caches(tmp_path)
    heavy = ("torch", "transformers", "datasets", "textual")
    for args in (("cache",), ("cache", "prune", "--dry-run", "--max-size", "0")):
        done = imports_of(*args, modules=heavy, cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        assert done.imported == [], args
        assert "prepared" in done.stdout
