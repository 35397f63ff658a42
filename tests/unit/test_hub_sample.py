"""Sampling a Hub dataset: spread over files and row groups, seeded, pinned, cached.

The plan and the reads are tested on real parquet files on a local fsspec filesystem; the
Hub path through the real ``HfApi`` and ``HfFileSystem`` against the Hub look-alike on
127.0.0.1 (``tests/helpers/hub_server.py``, fixture ``served_hub``).
"""

from __future__ import annotations

import collections
import json
import os
import textwrap
from dataclasses import replace
from pathlib import Path
from typing import Any

import fsspec
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from fsspec.implementations.local import LocalFileSystem
from fsspec.spec import AbstractBufferedFile

from workbench.core.data.hub_sample import load_hub_sample, load_hub_split
from workbench.core.data.sample_cache import find_cached_sample, find_cached_split
from workbench.core.data.sample_plan import (
    MAX_ROWS_PER_GROUP,
    HubSample,
    HubSplit,
    allocate,
    plan_sample,
    spread,
)
from workbench.core.events import SampleProgress
from workbench.errors import HubUnreachableError, WorkbenchError

SHA = "0123456789abcdef0123456789abcdef01234567"


def write_file(path: Path, f: int, rows: int, group: int, split: str = "train") -> None:
    """One parquet file whose rows say which file and row they are: ``f3 r1234``."""
    en = pa.array([f"{split} f{f} r{r}" for r in range(rows)])
    zh = pa.array([f"文{f}行{r}" for r in range(rows)])
    table = pa.table({"translation": pa.StructArray.from_arrays([en, zh], names=["en", "zh"])})
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, path, row_group_size=group)


def write_corpus(root: Path, files: int = 4, rows: int = 600, group: int = 50) -> Path:
    """A multi-file parquet 'dataset' of files of different sizes."""
    for f in range(files):
        write_file(
            root / "zh-en" / f"train-{f:05d}-of-{files:05d}.parquet", f, rows * (f + 1), group
        )
    return root


def file_and_row(source: str) -> tuple[int, int]:
    _split, f, r = source.split()
    return int(f[1:]), int(r[1:])


class CountingFile(AbstractBufferedFile):
    """A buffered file as ``HfFileSystemFile`` is: every cache miss is one range read."""

    def _fetch_range(self, start: int, end: int) -> bytes:
        with open(self.path, "rb") as fh:
            fh.seek(start)
            data = fh.read(end - start)
        self.fs.reads.append(len(data))
        return data


class CountingFileSystem(LocalFileSystem):
    """Local files opened like remote ones, counting the bytes and reads they fetch."""

    cachable = False  # a fresh instance, and fresh counts, each time

    def __init__(self) -> None:
        super().__init__()
        self.reads: list[int] = []

    def _open(self, path: str, mode: str = "rb", block_size: Any = None, **kwargs: Any):
        return CountingFile(self, self._strip_protocol(path), mode, block_size=block_size, **kwargs)


# --- the plan ------------------------------------------------------------------------------


def test_allocate_is_proportional_and_exact():
    assert allocate(10, [1, 1, 2]) == [3, 2, 5]  # ties: the first stratum gets the extra
    assert sum(allocate(1000, [7, 13, 29, 51])) == 1000


def test_spread_is_even_within_limits():
    assert spread(20, [8, 8, 8]) == [7, 7, 6]
    assert spread(20, [3, 3, 20]) == [3, 3, 14]
    assert spread(5, [1, 0, 9]) == [1, 0, 4]
    assert spread(50, [2, 2]) == [2, 2]  # never more than the limits hold


def test_plan_covers_every_file_in_proportion_with_few_rows_per_group():
    groups = [[100] * 20, [100] * 40, [100] * 140]
    plan = plan_sample(groups, 1000, seed=0)
    per_file: collections.Counter[int] = collections.Counter()
    for (f, _g), offsets in plan.items():
        per_file[f] += len(offsets)
        assert len(set(offsets)) == len(offsets)  # without replacement
        assert len(offsets) <= MAX_ROWS_PER_GROUP
    assert per_file == {0: 100, 1: 200, 2: 700}


def test_plan_spreads_a_quota_evenly_over_the_fewest_groups():
    # 100 rows at <= 8 a group: 13 groups of 7 or 8 rows, not 12 x 8 and a group of 4.
    plan = plan_sample([[1000] * 100], 100, seed=5)
    assert len(plan) == 13
    assert sorted(len(o) for o in plan.values()) == [7] * 4 + [8] * 9


def test_plan_is_uniform_within_a_file():
    # Quota 25 of 100 rows: 4 of 5 groups, 6-7 rows each; each row has p = 1/4.
    hits: collections.Counter[tuple[int, int]] = collections.Counter()
    for seed in range(400):
        for (_f, g), offsets in plan_sample([[20] * 5], 25, seed).items():
            hits.update((g, o) for o in offsets)
    counts = [hits[(g, o)] for g in range(5) for o in range(20)]
    assert len(counts) == 100
    # Expected 100 per row; a binomial(400, .25) sd is ~8.7, so 60..140 is > 4.5 sd.
    assert min(counts) > 60
    assert max(counts) < 140


def test_short_groups_bring_in_more_groups_before_the_cap_is_relaxed():
    plan = plan_sample([[2] * 10 + [1000]], 16, seed=0)
    assert sum(map(len, plan.values())) == 16
    assert all(len(o) <= MAX_ROWS_PER_GROUP for o in plan.values())


def test_cap_relaxes_on_tiny_files_using_every_group():
    # 20 rows, but at most 3 + 3 + 8 under the cap: every group, as evenly as sizes allow.
    plan = plan_sample([[3, 3, 20]], 20, seed=0)
    assert plan[(0, 0)] == plan[(0, 1)] == [0, 1, 2]
    assert len(plan[(0, 2)]) == 14
    assert len(set(plan[(0, 2)])) == 14
    assert plan_sample([[5] * 4], 20, seed=1) == {(0, g): [0, 1, 2, 3, 4] for g in range(4)}


# --- a WMT-shaped corpus: 13 files, 1,000-row groups --------------------------------------

FILE_ROWS = [16_000 + 700 * f for f in range(13)]  # 16,000 .. 24,400 rows


@pytest.fixture(scope="module")
def wmt_like(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("wmt_like")
    for f, rows in enumerate(FILE_ROWS):
        write_file(root / "zh-en" / f"train-{f:05d}-of-00013.parquet", f, rows, 1000)
    write_file(
        root / "zh-en" / "validation-00000-of-00001.parquet", 0, 3981, 1000, split="validation"
    )
    return root


#: 1,300 pairs of the WMT19 look-alike: a hundred from each of its 13 files.
WMT_SAMPLE = HubSample("wmt/wmt19", "zh-en", "en", "zh", n=1300, seed=0)


def test_wmt_like_sample_takes_few_rows_per_group_from_every_file(wmt_like: Path, tmp_path):
    fs = fsspec.filesystem("file")
    root = str(wmt_like)
    rows = load_hub_sample(WMT_SAMPLE, fs=fs, cache_dir=tmp_path / "a", root=root)
    again = load_hub_sample(WMT_SAMPLE, fs=fs, cache_dir=tmp_path / "b", root=root)
    other = load_hub_sample(replace(WMT_SAMPLE, seed=1), fs=fs, cache_dir=tmp_path / "c", root=root)
    assert rows == again
    assert rows.pairs != other.pairs
    assert rows.revision is None
    where = [file_and_row(p.source) for p in rows.pairs]
    assert len(set(where)) == 1300
    per_group = collections.Counter((f, r // 1000) for f, r in where)
    assert max(per_group.values()) <= MAX_ROWS_PER_GROUP
    per_file = collections.Counter(f for f, _r in where)
    assert [per_file[f] for f in range(13)] == allocate(1300, FILE_ROWS)
    assert all(p.target == "文{}行{}".format(*file_and_row(p.source)) for p in rows.pairs)
    # The output is shuffled: the first 200 pairs are not one file.
    assert len({f for f, _r in where[:200]}) > 5


def test_opened_files_fetch_only_the_footer_and_the_chosen_groups(wmt_like: Path, tmp_path):
    fs = CountingFileSystem()
    rows = load_hub_sample(replace(WMT_SAMPLE, n=26), fs=fs, cache_dir=tmp_path, root=str(wmt_like))
    assert len(rows.pairs) == 26
    # Exactly what pyarrow asks for: each file's last 64 KiB (the footer), then the column
    # chunks of each planned row group in one read. fsspec's default 5 MiB read-ahead would
    # fetch each file from its first chosen group to its end.
    paths = sorted(fs.glob(f"{wmt_like}/zh-en/train-*.parquet"))
    metas = [pq.ParquetFile(path).metadata for path in paths]
    sizes = [[m.row_group(g).num_rows for g in range(m.num_row_groups)] for m in metas]
    expected = sum(min(2**16, fs.size(path)) for path in paths)
    plan = plan_sample(sizes, 26, seed=0)
    for f, g in plan:
        group = metas[f].row_group(g)
        expected += sum(group.column(c).total_compressed_size for c in range(group.num_columns))
    assert sum(fs.reads) == expected
    assert max(fs.reads) <= 2**16
    assert len(fs.reads) == 13 + len(plan)  # one request per row group, not per column


def test_the_revision_is_in_the_cache_and_returned(wmt_like: Path, tmp_path: Path):
    fs = CountingFileSystem()
    cache = tmp_path / "cache"
    sample = replace(WMT_SAMPLE, n=130)
    kwargs: dict[str, Any] = dict(cache_dir=cache, root=str(wmt_like))
    first = load_hub_sample(sample, fs=fs, revision="abc123", **kwargs)
    assert first.revision == "abc123"
    path = find_cached_sample(cache, HubSample("wmt/wmt19", "zh-en", "en", "zh", 130, 0), "abc123")
    assert path is not None
    assert "abc123" in path.name
    assert find_cached_sample(cache, sample, "def456") is None

    fs.reads.clear()
    assert load_hub_sample(sample, fs=fs, revision="abc123", **kwargs) == first
    assert fs.reads == []  # a cache hit reads nothing
    second = load_hub_sample(sample, fs=fs, revision="def456", **kwargs)
    assert second.revision == "def456"
    assert fs.reads  # another revision: read again

    os.utime(path, (1, 1))  # abc123's file is now the older one
    newest = find_cached_sample(cache, sample)
    assert newest is not None
    assert "def456" in newest.name
    fs.reads.clear()
    assert load_hub_sample(sample, fs=fs, **kwargs).revision == "def456"
    assert fs.reads == []


def test_load_hub_split_returns_every_row_in_order(wmt_like: Path, tmp_path: Path):
    split = HubSplit("wmt/wmt19", "zh-en", "validation", "en", "zh")
    kwargs: dict[str, Any] = dict(cache_dir=tmp_path, root=str(wmt_like))
    rows = load_hub_split(split, fs=fsspec.filesystem("file"), revision=SHA, **kwargs)
    assert rows.revision == SHA
    assert [p.source for p in rows.pairs] == [f"validation f0 r{r}" for r in range(3981)]
    assert rows.pairs[7].target == "文0行7"
    cached = find_cached_split(tmp_path, split)
    assert cached is not None
    assert SHA in cached.name

    class Exploding:
        def glob(self, *_a, **_k):
            raise AssertionError("the Hub was asked again")

    assert load_hub_split(split, fs=Exploding(), **kwargs) == rows


def test_a_missing_split_says_which_and_how_to_do_without(wmt_like: Path, tmp_path: Path):
    with pytest.raises(WorkbenchError) as info:
        load_hub_split(
            HubSplit("wmt/wmt19", "zh-en", "test", "en", "zh"),
            cache_dir=tmp_path,
            fs=fsspec.filesystem("file"),
            root=str(wmt_like),
        )
    message = str(info.value)
    assert "'test' split" in message
    assert "--test-data" in message


# --- small corpora and the Hub seam --------------------------------------------------------


def test_local_parquet_sample_is_seeded_reproducible_and_from_every_file(tmp_path: Path):
    root = write_corpus(tmp_path / "repo")
    fs = fsspec.filesystem("file")
    kwargs: dict[str, Any] = dict(fs=fs, root=str(root))
    seed_1 = HubSample("wmt/wmt19", "zh-en", "en", "zh", n=200, seed=1)
    a = load_hub_sample(seed_1, cache_dir=tmp_path / "c1", **kwargs).pairs
    b = load_hub_sample(seed_1, cache_dir=tmp_path / "c2", **kwargs).pairs
    c = load_hub_sample(replace(seed_1, seed=2), cache_dir=tmp_path / "c3", **kwargs).pairs
    assert a == b
    assert a != c
    assert len(a) == 200
    assert len({p.source for p in a}) == 200
    files = collections.Counter(file_and_row(p.source)[0] for p in a)
    assert files == {0: 20, 1: 40, 2: 60, 3: 80}
    # Not the first rows of each file: offsets spread over the file.
    assert max(r for f, r in map(file_and_row, (p.source for p in a)) if f == 3) > 1200


def test_a_tiny_corpus_is_sampled_whole_without_crashing(tmp_path: Path):
    root = write_corpus(tmp_path / "repo", files=2, rows=30, group=4)
    rows = load_hub_sample(
        HubSample("wmt/wmt19", "zh-en", "en", "zh", n=90, seed=0),
        cache_dir=tmp_path / "cache",
        fs=fsspec.filesystem("file"),
        root=str(root),
    )
    assert sorted(map(file_and_row, (p.source for p in rows.pairs))) == (
        [(0, r) for r in range(30)] + [(1, r) for r in range(60)]
    )


def test_second_call_reads_the_cache_not_the_hub(tmp_path: Path):
    root = write_corpus(tmp_path / "repo", files=2)
    fs = fsspec.filesystem("file")
    sample = HubSample("wmt/wmt19", "zh-en", "en", "zh", n=50, seed=3)
    kwargs: dict[str, Any] = dict(cache_dir=tmp_path / "cache", root=str(root))
    first = load_hub_sample(sample, fs=fs, **kwargs)

    class Exploding:
        def glob(self, *_a, **_k):
            raise AssertionError("the Hub was asked again")

    assert load_hub_sample(sample, fs=Exploding(), **kwargs) == first


#: 30 pairs of the Hub look-alike's WMT19 (tests/helpers/hub_repos.py).
HUB_SAMPLE_30 = HubSample("wmt/wmt19", "zh-en", "en", "zh", n=30, seed=0)


def dataset_requests(server) -> list:
    """The look-alike's log, less the client's own housekeeping (e.g. /api/agent-harnesses)."""
    return [r for r in server.requests() if r.path.startswith(("/api/datasets/", "/datasets/"))]


def test_hub_reads_are_pinned_to_the_current_commit(tmp_path, monkeypatch, served_hub):
    """Through the real HfApi and HfFileSystem: one request resolves the commit, every file
    is listed and read at that sha with exact range reads, and a rerun needs no network."""
    sha = served_hub.repos[("dataset", "wmt/wmt19")].sha
    cache = tmp_path / "cache"
    rows = load_hub_sample(HUB_SAMPLE_30, cache_dir=cache)
    assert len(rows.pairs) == 30
    assert rows.revision == sha
    assert find_cached_sample(cache, HUB_SAMPLE_30, sha)
    log = dataset_requests(served_hub)
    assert [
        r.path
        for r in log
        if r.path.startswith("/api/datasets/wmt/wmt19?") or r.path == "/api/datasets/wmt/wmt19"
    ] == ["/api/datasets/wmt/wmt19"]
    files = [r for r in log if "/resolve/" in r.path]
    assert files
    assert all(f"/resolve/{sha}/zh-en/train-" in r.path for r in files)
    # Every read is a range read answered 206 with at most pyarrow's 64 KiB footer read:
    # no fsspec read-ahead, no whole-file download.
    assert all(r.method == "GET" and r.range and r.status == 206 for r in files)
    assert max(r.bytes for r in files) <= 2**16

    # Offline afterwards: the cache answers without any request.
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    served_hub.reset()
    assert load_hub_sample(HUB_SAMPLE_30, cache_dir=cache) == rows
    assert served_hub.requests() == []


def test_a_branch_name_resolves_to_its_cached_commit(tmp_path, served_hub):
    cache = tmp_path / "cache"
    rows = load_hub_sample(HUB_SAMPLE_30, cache_dir=cache)
    served_hub.reset()
    again = load_hub_sample(HUB_SAMPLE_30, cache_dir=cache, revision="main")
    assert again == rows
    # One request resolves "main" to the sha whose cache file exists; nothing is listed.
    assert [r.path for r in dataset_requests(served_hub)] == [
        "/api/datasets/wmt/wmt19/revision/main"
    ]


def test_an_unknown_revision_is_one_sentence(tmp_path, served_hub):
    with pytest.raises(WorkbenchError, match="has no revision 'v9' on the Hub") as info:
        load_hub_sample(HUB_SAMPLE_30, cache_dir=tmp_path / "cache", revision="v9")
    assert "\n" not in str(info.value)
    assert served_hub.requests()[-1].status == 404


def test_a_malformed_dataset_id_is_one_sentence(tmp_path, served_hub):
    with pytest.raises(WorkbenchError, match=r"'my data' .*is not a valid Hub dataset id") as info:
        load_hub_sample(HubSample("my data", None, "en", "zh", n=30, seed=0), cache_dir=tmp_path)
    assert "\n" not in str(info.value)
    assert "--data" in str(info.value)


def test_offline_hub_sample_fails_with_the_fix(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(HubUnreachableError) as info:
        load_hub_sample(replace(HUB_SAMPLE_30, n=10), cache_dir=tmp_path)
    message = str(info.value)
    for needle in ("Hugging Face Hub", "HF_ENDPOINT", "--preset demo"):
        assert needle in message


def test_opus_preset_tests_on_the_datasets_own_split_at_the_samples_commit(
    tmp_path, monkeypatch, served_hub
):
    """opus-en-zh: 9:1 train/validation of the sample; the test set is WMT19's validation
    split (newstest2018), read at the sample's commit, cached, and then needed offline."""
    from workbench.core.config.build import build_config
    from workbench.core.data.prepared import prepare_data
    from workbench.core.train.preflight import preflight

    sha = served_hub.repos[("dataset", "wmt/wmt19")].sha
    monkeypatch.setenv("WORKBENCH_CACHE", str(tmp_path / "cache"))
    config = build_config("opus-en-zh", overrides={"samples": 200, "model": "scratch"})
    data = prepare_data(config)
    assert data.revision == sha
    assert data.test_name == "newstest2018"
    assert len(data.test) == 24
    trained = {p.source for p in [*data.train, *data.validation]}
    assert not trained & {p.source for p in data.test}
    # 10% more were drawn, so that cleaning leaves the 200 asked for.
    assert data.cleaning.pairs_in == 220
    assert len(data.train) + len(data.validation) == 200
    # The look-alike's last 4 test rows are train rows too: sampled ones leave training.
    assert data.dropped["in test set"] > 0
    infos = [
        r.path
        for r in dataset_requests(served_hub)
        if "/resolve/" not in r.path and "/tree/" not in r.path
    ]
    # Only the first request asks for the newest commit; the split is read at the sha.
    assert infos[0] == "/api/datasets/wmt/wmt19"
    assert set(infos[1:]) == {f"/api/datasets/wmt/wmt19/revision/{sha}"}
    assert any(
        f"/resolve/{sha}/zh-en/validation-00000-of-00001.parquet" in r.path
        for r in served_hub.requests()
    )

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    served_hub.reset()
    preflight(config)  # both cached: no Hub needed
    assert prepare_data(config).test == data.test
    assert served_hub.requests() == []


# --- a sample stopped half-way resumes ------------------------------------------------------

#: 200 pairs of the look-alike's WMT19 (tests/helpers/hub_repos.py): 3 files of ~1,440 rows in
#: 10-row groups, 9 row groups from each.
HUB_SAMPLE = HubSample("wmt/wmt19", "zh-en", "en", "zh", n=200, seed=0)
ROW_GROUPS = 27


def train_reads(server) -> list:
    """Answered range reads of the look-alike's train files, footers and row groups."""
    return [r for r in server.requests() if "/zh-en/train-" in r.path and r.status == 206]


def kept_row_groups(cache: Path) -> list[Path]:
    return sorted((cache / "partial").rglob("g*.json"))


@pytest.fixture
def whole_sample(served_hub, tmp_path):
    """The sample drawn in one go, to compare a resumed one with."""
    rows = load_hub_sample(HUB_SAMPLE, cache_dir=tmp_path / "whole")
    served_hub.reset()
    return rows


def test_a_sample_cut_off_half_way_resumes_with_what_is_missing(
    served_hub, tmp_path, monkeypatch, whole_sample
):
    monkeypatch.setenv("WORKBENCH_HUB_TRIES", "2")
    cache = tmp_path / "cache"
    served_hub.faults.drop_after = 3 + 12  # the 3 footers, 12 row groups, then silence
    with pytest.raises(HubUnreachableError, match="dropped or timed out on all 2 tries"):
        load_hub_sample(HUB_SAMPLE, cache_dir=cache)
    assert find_cached_sample(cache, HUB_SAMPLE) is None
    first = train_reads(served_hub)
    assert sum(served_hub.is_footer_read(r) for r in first) == 3
    arrived = len(first) - 3
    assert len(kept_row_groups(cache)) == arrived >= 12

    served_hub.reset()
    events: list = []
    rows = load_hub_sample(HUB_SAMPLE, events.append, cache_dir=cache)
    assert rows == whole_sample  # the same rows, in the same order
    again = train_reads(served_hub)
    assert not any(served_hub.is_footer_read(r) for r in again)  # kept from the first try
    assert len(again) == ROW_GROUPS - arrived  # each row group fetched once in all
    assert events[0] == SampleProgress(
        arrived, ROW_GROUPS, events[0].bytes, events[-1].bytes, arrived
    )
    assert events[-1].row_groups == ROW_GROUPS
    assert kept_row_groups(cache) == []  # in the cache file now
    served_hub.reset()
    assert load_hub_sample(HUB_SAMPLE, cache_dir=cache) == rows
    assert train_reads(served_hub) == []


def test_a_damaged_kept_row_group_is_fetched_again(served_hub, tmp_path, monkeypatch, whole_sample):
    monkeypatch.setenv("WORKBENCH_HUB_TRIES", "1")
    cache = tmp_path / "cache"
    served_hub.faults.drop_after = 3 + 6
    with pytest.raises(HubUnreachableError):
        load_hub_sample(HUB_SAMPLE, cache_dir=cache)
    kept = kept_row_groups(cache)
    kept[0].write_text('{"offsets": [1, 2', encoding="utf-8")  # as a disk error might leave it
    served_hub.reset()
    assert load_hub_sample(HUB_SAMPLE, cache_dir=cache) == whole_sample
    assert len(train_reads(served_hub)) == ROW_GROUPS - len(kept) + 1


def test_another_seed_plans_from_the_kept_footers(served_hub, tmp_path):
    cache = tmp_path / "cache"
    load_hub_sample(HUB_SAMPLE, cache_dir=cache)
    served_hub.reset()
    load_hub_sample(replace(HUB_SAMPLE, seed=1), cache_dir=cache)
    reads = train_reads(served_hub)
    assert reads
    assert not any(served_hub.is_footer_read(r) for r in reads)


#: Draws HUB_SAMPLE into the cache folder given, in a process of its own.
DRAW = textwrap.dedent("""
    import sys
    from pathlib import Path
    from workbench.core.data.hub_sample import load_hub_sample
    from workbench.core.data.sample_plan import HubSample

    sample = HubSample("wmt/wmt19", "zh-en", "en", "zh", n=200, seed=0)
    load_hub_sample(sample, cache_dir=Path(sys.argv[1]))
""")


def test_a_sample_killed_half_way_resumes_with_what_is_missing(served_hub, tmp_path, whole_sample):
    """``kill -9`` while row groups arrive: nothing is flushed or cleaned up by the process,
    and the rerun still fetches only what had not arrived."""
    import signal
    import subprocess
    import sys
    import time

    from tests.helpers.hub import hub_env

    cache = tmp_path / "cache"
    served_hub.faults.hang_after = 3 + 12  # then every request is held unanswered
    proc = subprocess.Popen(
        [sys.executable, "-c", DRAW, str(cache)],
        env={**os.environ, **hub_env(served_hub, tmp_path)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        # A held request says only that its thread is waiting: the server holds a request
        # once 15 were counted, maybe before the 15th answer went out, and the other
        # threads may still be reading, decoding or keeping the row groups they got. So
        # the kill waits for what is on disk: every row group answered so far (at least
        # the 12) renamed into place, and a request held (the process is mid-download).
        deadline = time.monotonic() + 120  # a bound on waiting, not a measurement
        while True:
            answered = len(train_reads(served_hub)) - 3
            on_disk = kept_row_groups(cache)  # after ``answered``: at least as recent
            held = any(r.status == 0 for r in served_hub.requests())
            if held and len(on_disk) >= max(12, answered):
                break
            assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else ""
            assert time.monotonic() < deadline, (
                f"{len(on_disk)} of {answered} row groups kept, a request held: {held}"
            )
            time.sleep(0.05)
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.wait(timeout=60)
    assert proc.returncode == -signal.SIGKILL
    arrived = len(train_reads(served_hub)) - 3
    kept = kept_row_groups(cache)
    assert set(on_disk) <= set(kept)  # what was on disk at the kill is still there
    # At least those; at most what arrived (a group whose write the kill cut short, one
    # answered after the check above, is not there).
    assert 12 <= len(on_disk) <= len(kept) <= arrived
    for path in kept:  # each one whole
        record = json.loads(path.read_text(encoding="utf-8"))
        assert len(record["offsets"]) == len(record["pairs"]) > 0
    assert find_cached_sample(cache, HUB_SAMPLE) is None

    served_hub.reset()
    assert load_hub_sample(HUB_SAMPLE, cache_dir=cache) == whole_sample
    again = train_reads(served_hub)
    assert not any(served_hub.is_footer_read(r) for r in again)
    assert len(again) == ROW_GROUPS - len(kept)  # the kept ones are not fetched again
    assert kept_row_groups(cache) == []  # in the cache file now
