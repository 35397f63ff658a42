"""Sampling a Hub dataset: uniform over every file, seeded, cached; tested on local parquet."""

from __future__ import annotations

import collections
from pathlib import Path

import fsspec
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from workbench.core import hub_sample
from workbench.core.hub_sample import allocate, load_hub_sample, plan_sample
from workbench.errors import HubUnreachableError


def write_corpus(root: Path, files: int = 4, rows: int = 600, group: int = 50) -> Path:
    """A multi-file parquet 'dataset' whose rows say which file and row they are."""
    folder = root / "zh-en"
    folder.mkdir(parents=True)
    for f in range(files):
        n = rows * (f + 1)  # files of different sizes
        table = pa.table({"translation": [{"en": f"f{f} r{r}", "zh": f"文{f}行{r}"}
                                          for r in range(n)]})
        pq.write_table(table, folder / f"train-{f:05d}-of-{files:05d}.parquet",
                       row_group_size=group)
    return root


def test_allocate_is_proportional_and_exact():
    assert allocate(10, [1, 1, 2]) == [3, 2, 5]  # ties: the first stratum gets the extra
    assert sum(allocate(1000, [7, 13, 29, 51])) == 1000


def test_plan_covers_every_file_in_proportion():
    groups = [[100] * 10, [100] * 20, [100] * 70]
    plan = plan_sample(groups, 1000, seed=0)
    per_file = collections.Counter()
    for (f, _g), offsets in plan.items():
        per_file[f] += len(offsets)
        assert len(set(offsets)) == len(offsets)  # without replacement
    assert per_file == {0: 100, 1: 200, 2: 700}


def test_plan_is_uniform_within_a_file_when_budget_covers_it():
    # Quota 25 of 100 rows: OVERSAMPLE=4 pools every group, so each row has p = 1/4.
    hits = collections.Counter()
    for seed in range(400):
        for (_f, g), offsets in plan_sample([[20] * 5], 25, seed).items():
            hits.update((g, o) for o in offsets)
    counts = [hits[(g, o)] for g in range(5) for o in range(20)]
    assert len(counts) == 100
    # Expected 100 per row; a binomial(400, .25) sd is ~8.7, so 60..140 is > 4.5 sd.
    assert min(counts) > 60 and max(counts) < 140


def test_local_parquet_sample_is_seeded_reproducible_and_from_every_file(tmp_path: Path):
    root = write_corpus(tmp_path / "repo")
    fs = fsspec.filesystem("file")
    kwargs = dict(repo="wmt/wmt19", config="zh-en", source_lang="en", target_lang="zh",
                  n=200, fs=fs, root=str(root))
    a = load_hub_sample(seed=1, cache_dir=tmp_path / "c1", **kwargs)
    b = load_hub_sample(seed=1, cache_dir=tmp_path / "c2", **kwargs)
    c = load_hub_sample(seed=2, cache_dir=tmp_path / "c3", **kwargs)
    assert a == b and a != c
    assert len(a) == 200 and len({p.source for p in a}) == 200
    files = collections.Counter(p.source.split()[0] for p in a)
    assert files == {"f0": 20, "f1": 40, "f2": 60, "f3": 80}
    assert all(p.target.startswith("文" + p.source[1]) for p in a)
    # Not the first rows of each file: offsets spread over the file.
    rows = [int(p.source.split()[1][1:]) for p in a if p.source.startswith("f3")]
    assert max(rows) > 1200


def test_second_call_reads_the_cache_not_the_hub(tmp_path: Path):
    root = write_corpus(tmp_path / "repo", files=2)
    fs = fsspec.filesystem("file")
    kwargs = dict(repo="wmt/wmt19", config="zh-en", source_lang="en", target_lang="zh",
                  n=50, seed=3, cache_dir=tmp_path / "cache", root=str(root))
    first = load_hub_sample(fs=fs, **kwargs)

    class Exploding:
        def glob(self, *_a, **_k):
            raise AssertionError("the Hub was asked again")

    assert load_hub_sample(fs=Exploding(), **kwargs) == first


def test_hub_seam_uses_hffilesystem_with_the_dataset_path(tmp_path, monkeypatch):
    """The real path: HfFileSystem rooted at datasets/<repo>, config folder, train files."""
    root = write_corpus(tmp_path / "datasets" / "wmt" / "wmt19")
    local = fsspec.filesystem("file")
    globs: list[str] = []

    class FakeHfFileSystem:
        def glob(self, pattern):
            globs.append(pattern)
            return local.glob(str(tmp_path / pattern))

        def open(self, path, mode="rb"):
            return local.open(path, mode)

    import huggingface_hub

    monkeypatch.setattr(huggingface_hub, "HfFileSystem", FakeHfFileSystem)
    monkeypatch.setattr(hub_sample, "ensure_hub_reachable", lambda what: None)
    pairs = load_hub_sample("wmt/wmt19", "zh-en", "en", "zh", n=30, seed=0,
                            cache_dir=tmp_path / "cache")
    assert globs[0] == "datasets/wmt/wmt19/zh-en/train-*.parquet"
    assert len(pairs) == 30
    assert root.exists()


def test_offline_hub_sample_fails_with_the_fix(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(HubUnreachableError) as info:
        load_hub_sample("wmt/wmt19", "zh-en", "en", "zh", n=10, seed=0,
                        cache_dir=tmp_path)
    message = str(info.value)
    for needle in ("Hugging Face Hub", "HF_ENDPOINT", "--preset demo"):
        assert needle in message
