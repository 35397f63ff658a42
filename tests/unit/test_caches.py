"""The caches a user can see and prune (workbench.core.caches, workbench.core.cache_use):
sizes and durations read as du --si writes them, the prune's choice, each use recorded
with its run, the lock a user holds and the pruner respects, every kind listed (a partial
one as partial, a build in progress not at all), and a removal whole or not at all."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest

from tests.helpers.caches import plant_caches
from workbench.core.cache_use import (
    attach_run,
    claimed,
    detach_run,
    expect_run,
    lock_file,
    read_uses,
    use_record,
    using,
)
from workbench.core.caches.amounts import parse_duration, parse_size
from workbench.core.caches.listing import CacheEntry, CacheListing, list_caches
from workbench.core.caches.prune import PruneRule, prune, remove_entry, tidy
from workbench.core.views.numbers import format_si_bytes
from workbench.errors import WorkbenchError

DAY = 86_400.0
NOW = 1_800_000_000.0


@pytest.mark.parametrize(
    ("text", "size"),
    [
        ("500MB", 500 * 10**6),
        ("10GB", 10 * 10**9),
        ("1.5TB", 1_500 * 10**9),
        ("10 gb", 10 * 10**9),
        ("0", 0),
        ("2048B", 2048),
        ("2GiB", 2 * 2**30),
        ("750k", 750_000),
    ],
)
def test_sizes_are_decimal_as_du_si_counts(text, size):
    assert parse_size(text) == size


def test_a_size_shown_reads_back_as_itself():
    for count in (999, 45_056, 403_200_000, 1_500_000_000, 2_250_000_000_000):
        shown = format_si_bytes(count)
        assert abs(parse_size(shown.replace(" ", "")) - count) <= count * 0.005, shown


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("30d", 30 * DAY), ("12h", 12 * 3600), ("2w", 14 * DAY), ("90m", 5400), ("0s", 0)],
)
def test_durations(text, seconds):
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["-1", "abc", "", "nan", "1e3", "10XB", "--5", "1.5.2GB"])
def test_a_bad_size_is_one_sentence_with_the_value_and_the_fix(text):
    with pytest.raises(WorkbenchError) as refused:
        parse_size(text)
    message = str(refused.value)
    assert message.startswith(f"--max-size {text}: not a size; ")
    assert "10GB" in message
    assert "\n" not in message


def test_a_size_without_its_unit_and_a_duration_in_m_are_refused():
    """``10`` could be bytes, MB or GB, and ``6M`` minutes or (systemd's) months."""
    with pytest.raises(WorkbenchError, match=r"^--max-size 10: a size needs its unit; "):
        parse_size("10")
    with pytest.raises(WorkbenchError, match=r"^--older-than 6M: M could mean minutes or months"):
        parse_duration("6M")
    assert parse_duration("6min") == parse_duration("6m") == 360


@pytest.mark.parametrize("text", ["abc", "-2d", "30", "3 fortnights", "d"])
def test_a_bad_duration_is_one_sentence_with_the_value_and_the_fix(text):
    with pytest.raises(WorkbenchError) as refused:
        parse_duration(text)
    assert str(refused.value).startswith(f"--older-than {text}: not a duration; give one")


def entry(name: str, days_ago: float, size: int, live: tuple[str, ...] = ()) -> CacheEntry:
    """A listed entry as pruning sees it (only its age, size and live users matter)."""
    return CacheEntry(
        kind="prepared",
        name=name,
        path=Path("/nowhere") / name,
        size=size,
        apparent_size=size,
        last_used=NOW - days_ago * DAY,
        runs=live,
        live_runs=live,
        complete=True,
    )


def chosen(entries: list[CacheEntry], rule: PruneRule, busy: frozenset[str] = frozenset()):
    """What ``prune`` chose, with an attempt that removes every entry not ``busy``; and
    the entries it was given, in order."""
    tried: list[str] = []

    def attempt(e: CacheEntry) -> str | None:
        tried.append(e.name)
        return "in use by a process now" if e.name in busy else None

    found = prune(CacheListing(Path("/nowhere"), tuple(entries)), rule, NOW, attempt)
    return [(p.entry.name, p.kept) for p in found], tried


def test_entries_unused_for_long_go_and_recent_ones_stay():
    entries = [entry("new", 1, 10), entry("old", 40, 10), entry("older", 90, 10)]
    found, tried = chosen(entries, PruneRule(older_than=30 * DAY))
    assert found == [("older", None), ("old", None)]
    assert tried == ["older", "old"]


def test_the_least_recently_used_go_until_the_total_fits():
    entries = [entry("a", 1, 400), entry("b", 5, 300), entry("c", 3, 200), entry("d", 9, 100)]
    found, _ = chosen(entries, PruneRule(max_size=450))  # 1000 held: d, b, c go
    assert found == [("d", None), ("b", None), ("c", None)]
    assert chosen(entries, PruneRule(max_size=1000))[0] == []


def test_old_entries_go_first_then_the_least_recent_until_the_total_fits():
    entries = [entry("a", 1, 400), entry("b", 5, 300), entry("old", 60, 100)]
    found, _ = chosen(entries, PruneRule(older_than=30 * DAY, max_size=450))
    assert found == [("old", None), ("b", None)]


def test_a_live_runs_entry_is_never_tried_yet_counts_in_the_total():
    entries = [entry("live", 50, 500, live=("/runs/r1",)), entry("a", 2, 100), entry("b", 1, 100)]
    found, tried = chosen(entries, PruneRule(older_than=30 * DAY, max_size=550))
    assert found == [("live", "in use by live run r1"), ("a", None), ("b", None)]
    assert tried == ["a", "b"]  # 700 held, 500 of them live: both others must go


def test_a_busy_entry_stays_and_the_next_least_recent_goes_instead():
    entries = [entry("a", 9, 100), entry("b", 5, 100), entry("c", 1, 100)]
    found, _ = chosen(entries, PruneRule(max_size=200), busy=frozenset({"a"}))
    assert found == [("a", "in use by a process now"), ("b", None)]


def test_no_rule_means_unused_for_30_days():
    assert PruneRule.of(None, None) == PruneRule(older_than=30 * DAY)
    assert PruneRule.of(None, "10GB") == PruneRule(max_size=10 * 10**9)


def test_every_kind_is_listed_with_a_partial_one_as_partial(tmp_path: Path):
    planted = plant_caches(tmp_path)
    listing = list_caches()
    by_path = {e.path: e for e in listing.entries}
    assert set(by_path) == set(planted.all())
    assert [e.kind for e in listing.entries] == [
        "prepared", "before", "samples", "samples", "preferences", "preferences",
    ]  # fmt: skip
    assert not by_path[planted.partial_sample].complete
    assert not by_path[planted.unsealed_preferences].complete
    assert all(by_path[p].complete for p in (planted.prepared, planted.before, planted.sample))
    assert by_path[planted.sealed_preferences].complete
    assert by_path[planted.partial_sample].name == "partial/org--pairs@0123abcd"
    assert by_path[planted.prepared].what == str(tmp_path / "pairs.tsv")  # its origin
    assert listing.size == sum(e.size for e in listing.entries) > 0


def test_a_build_in_progress_a_removals_trash_and_the_records_are_never_entries(tmp_path: Path):
    planted = plant_caches(tmp_path)
    root = planted.prepared.parent
    (root / ".building-123-abcd").mkdir()  # another process preparing
    (root / ".trash-gone.1-ab").mkdir()
    assert {e.path for e in list_caches().entries} == set(planted.all())
    assert (root / ".uses").is_dir()  # the records beside the entries


def test_a_use_outside_a_run_is_recorded_for_no_run_and_lets_go_at_once(tmp_path: Path):
    made = tmp_path / "cache" / "kind" / "entry.json"
    made.parent.mkdir(parents=True)
    made.write_text("{}")
    before = time.time()
    with using(made), claimed(made) as free:
        assert not free  # held shared while read
    uses = read_uses(made)
    assert uses is not None
    assert uses.runs == ()
    assert uses.last_used >= before
    with claimed(made) as free:
        assert free


def test_a_runs_uses_before_its_folder_wait_for_it_then_name_it(tmp_path: Path):
    made = tmp_path / "cache" / "kind" / "entry"
    made.mkdir(parents=True)
    run = tmp_path / "out" / "runs" / "r1"
    run.mkdir(parents=True)
    expect_run()
    try:
        with using(made):
            pass
        with claimed(made) as free:
            assert not free  # the run's folder is not made yet: the lock stays held
        attach_run(run)
        with claimed(made) as free:
            assert free  # from here the run's writer protects it
        with using(made):  # a use once the folder is held names it at once
            pass
    finally:
        detach_run()
    uses = read_uses(made)
    assert uses is not None
    assert uses.runs == (str(run.resolve()),)
    assert len(use_record(made).read_text().splitlines()) == 3  # before, at attach, after


def test_a_torn_line_of_a_record_is_skipped(tmp_path: Path):
    made = tmp_path / "kind" / "entry.json"
    made.parent.mkdir()
    made.write_text("{}")
    with using(made):
        pass
    with use_record(made).open("a") as fh:
        fh.write('{"time": 9e99, "run": "/cut')  # a kill mid-write
    uses = read_uses(made)
    assert uses is not None
    assert uses.last_used < 9e99


def test_a_user_waiting_for_a_pruner_finds_the_entry_gone_under_a_new_lock(tmp_path: Path):
    made = tmp_path / "kind" / "entry.json"
    made.parent.mkdir()
    made.write_text("{}")
    seen: list[bool] = []
    with claimed(made) as free:
        assert free
        # kept open, so its inode cannot be given to the new lock file (ext4 reuses one)
        old_lock = os.open(lock_file(made), os.O_RDONLY)
        user = threading.Thread(target=lambda: _use(made, seen))
        user.start()
        time.sleep(0.3)  # the user waits for the lock (a bound, not a measurement)
        assert seen == []
        made.unlink()  # the pruner removes the entry
    user.join(timeout=60)
    assert seen == [False]  # the user found no entry, and would build it again
    assert lock_file(made).exists()
    try:  # not the file the pruner held
        assert not os.path.samestat(os.fstat(old_lock), os.stat(lock_file(made)))
    finally:
        os.close(old_lock)


def _use(entry: Path, seen: list[bool]) -> None:
    with using(entry):
        seen.append(entry.exists())


def test_a_forked_child_never_keeps_an_entry_busy(tmp_path: Path):
    made = tmp_path / "kind" / "entry.json"
    made.parent.mkdir()
    made.write_text("{}")
    ready, said = os.pipe()
    expect_run()  # the lock stays held after the use, as in a run before its folder
    try:
        with using(made):
            pass
        pid = os.fork()
        if pid == 0:  # a DataLoader worker: outlives its parent's use of the entry
            os.write(said, b"1")  # its fork handlers have run
            time.sleep(3)
            os._exit(0)
    finally:
        detach_run()  # the parent lets go; the child still runs
    try:
        assert os.read(ready, 1) == b"1"
        with claimed(made) as free:
            assert free
    finally:
        os.waitpid(pid, 0)
        os.close(ready)
        os.close(said)


def test_a_removal_takes_the_entry_its_record_and_lock_whole(tmp_path: Path):
    planted = plant_caches(tmp_path)
    (listed,) = [e for e in list_caches().entries if e.path == planted.prepared]
    assert use_record(planted.prepared).is_file()
    assert remove_entry(listed) is None
    assert not planted.prepared.exists()
    assert not use_record(planted.prepared).exists()
    assert not lock_file(planted.prepared).exists()
    assert not list(planted.prepared.parent.glob(".trash-*"))


def test_an_entry_used_since_it_was_listed_stays(tmp_path: Path):
    planted = plant_caches(tmp_path)
    (listed,) = [e for e in list_caches().entries if e.path == planted.before]
    time.sleep(0.01)
    with using(planted.before):
        pass
    assert remove_entry(listed) == "used since it was listed"
    assert planted.before.is_file()


def test_tidy_deletes_a_killed_pruners_trash_and_the_records_of_entries_gone(tmp_path: Path):
    planted = plant_caches(tmp_path)
    root = planted.before.parent
    trash = root / ".trash-old.json.123-ab"
    trash.write_text("{}")
    planted.before.unlink()  # removed by hand
    held = planted.sample.parent / "org--pairs-default-en-zh-n9-seed0-cap4@0123abcd.jsonl"
    with using(held):  # a process about to write this one
        tidy()
        assert lock_file(held).exists()
    assert not trash.exists()
    assert not use_record(planted.before).exists()
    assert not lock_file(planted.before).exists()
    assert use_record(planted.sample).exists()  # an entry still there keeps its record


def test_a_lock_file_this_process_cannot_open_keeps_the_pruner_off(tmp_path: Path):
    """Another user's lock file in a shared cache (here: a name this process cannot open
    as a file): a user goes on without the lock, and the pruner leaves the entry alone,
    since it cannot tell whether that user reads it now."""
    entry = tmp_path / "before" / "k.json"
    entry.parent.mkdir()
    entry.write_text("{}")
    lock_file(entry).mkdir(parents=True)  # os.open fails on it, as on a file not ours
    with using(entry):
        assert entry.read_text() == "{}"
    with claimed(entry) as free:
        assert free is False
    assert entry.is_file()


def test_a_run_folder_the_listing_cannot_read_is_left_out(tmp_path: Path):
    """A record naming a run this user cannot stat (here: a name too long for the file
    system, one OSError the standard library does not swallow) lists the rest."""
    from workbench.core.caches.listing import LiveRuns, heatmap_entries

    readable = tmp_path / "runs" / "20260101-100000-demo"
    readable.mkdir(parents=True)
    (readable / "attention_heatmaps.json").write_text("{}\n")
    unreadable = tmp_path / "runs" / ("x" * 300)
    found = heatmap_entries([str(unreadable), str(readable)], LiveRuns())
    assert [e.name for e in found] == [readable.name]


def test_a_run_ended_on_another_thread_lets_the_starting_threads_uses_go(tmp_path: Path):
    """The TUI starts a run's writer on one thread and may end it on another (as
    tests/cli/test_logs.py does): the thread that started it uses entries for no run
    afterwards, and keeps no lock."""
    from workbench.core.live.writer import RunWriter

    run = tmp_path / "out" / "runs" / "20260101-100000-demo"
    run.mkdir(parents=True)
    writer = RunWriter(threading.Event())  # this thread starts the run
    writer.hold(run)
    ending = threading.Thread(target=writer.release, args=("finished",))
    ending.start()
    ending.join()
    made = tmp_path / "cache" / "kind" / "entry.json"
    made.parent.mkdir(parents=True)
    made.write_text("{}")
    with using(made):
        pass
    uses = read_uses(made)
    assert uses is not None
    assert uses.runs == ()  # for no run, not the one that ended
    with claimed(made) as free:
        assert free  # no lock left held for a run that waits for its folder
