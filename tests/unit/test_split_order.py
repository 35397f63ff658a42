"""The split as numpy arrays, in the order the list-based split gave it; and the training
split written in that order from a corpus read in file order, in memory that does not
grow with the corpus."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from workbench.core.data import arrow_pairs, corpus_reads
from workbench.core.data.arrow_pairs import PairTable, read_table, take_rows, write_pairs
from workbench.core.data.corpus_reads import CorpusFiles, gather, in_file_order, write_in_order
from workbench.core.data.splits import shuffled_order, split_pairs, split_rows
from workbench.errors import WorkbenchError


def reference_split(items: list, seed: int, validation: float, test: float = 0.0):
    """The split over Python lists, the reference the numpy split must equal: the order
    every run trains on, on which the demo's numbers depend."""
    order = list(range(len(items)))
    random.Random(seed).shuffle(order)

    def share(fraction: float) -> int:
        return max(1, round(len(items) * fraction)) if fraction > 0 else 0

    n_test, n_val = share(test), share(validation)
    held = [items[i] for i in order[:n_val]]
    tested = [items[i] for i in order[n_val : n_val + n_test]]
    return [items[i] for i in order[n_val + n_test :]], held, tested


def test_ten_pairs_seed_42_split_as_they_always_were():
    # random.Random(42).shuffle(list(range(10))) -> [7, 3, 2, 8, 5, 6, 9, 4, 0, 1]
    train, validation, test = split_rows(10, 42, 0.1, 0.1)
    assert validation.tolist() == [7]
    assert test.tolist() == [3]
    assert train.tolist() == [2, 8, 5, 6, 9, 4, 0, 1]
    assert shuffled_order(20, 7).tolist() == [
        17, 15, 11, 18, 7, 6, 19, 3, 14, 0, 9, 5, 16, 8, 13, 2, 1, 12, 4, 10,
    ]  # fmt: skip


@pytest.mark.parametrize("count", [2, 10, 4241, 100_000])
@pytest.mark.parametrize("seed", [0, 42, 1234])
@pytest.mark.parametrize(("validation", "test"), [(0.1, 0.0), (0.1, 0.1), (0.05, 0.02)])
def test_the_split_is_the_list_based_one_in_numpy(count, seed, validation, test):
    items = list(range(count))
    if count == 2 and test:
        with pytest.raises(WorkbenchError, match="only 2 usable pairs"):
            split_rows(count, seed, validation, test)
        return
    expected = reference_split(items, seed, validation, test)
    rows = split_rows(count, seed, validation, test)
    assert all(isinstance(r, np.ndarray) and r.dtype == np.int64 for r in rows)
    assert [r.tolist() for r in rows] == list(expected)
    assert split_pairs(items, seed, validation, test) == expected


def test_a_sample_drawn_by_position_is_the_sample_of_the_rows():
    """prepared.py draws ``--samples`` as positions into the kept rows' array; sample()
    of the rows themselves (what it did with a list) picks the same rows in the same order."""
    kept = np.sort(np.random.default_rng(0).choice(900_000, 300_000, replace=False))
    for seed in (1, 42):
        rows = random.Random(seed).sample(kept.tolist(), 50_000)
        assert kept[random.Random(seed).sample(range(len(kept)), 50_000)].tolist() == rows


@pytest.fixture
def corpus(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> CorpusFiles:
    """103 pairs in batches of 10, with token ids in shards of 7 rows (cut elsewhere than
    the corpus's batches, as the feature shards are)."""
    monkeypatch.setattr(arrow_pairs, "BATCH_ROWS", 10)
    path = tmp_path / "corpus.arrow"
    write_pairs(((f"s{i}", f"t{i}", {"level": i % 6}) for i in range(103)), path)
    shards = []
    for number, start in enumerate(range(0, 103, 7)):
        ids = [[i] * (1 + i % 5) for i in range(start, min(103, start + 7))]
        table = pa.table(
            {
                "input_ids": pa.array(ids, pa.list_(pa.int32())),
                "attention_mask": pa.array([[1] * len(x) for x in ids], pa.list_(pa.int8())),
                "labels": pa.array([x[:2] for x in ids], pa.list_(pa.int32())),
            }
        )
        shards.append(tmp_path / f"features-{number:05d}.arrow")
        with pa.ipc.new_stream(str(shards[-1]), table.schema) as writer:
            writer.write_table(table)
    return CorpusFiles(path, tuple(shards))


def test_the_training_split_is_written_in_its_shuffled_order(
    corpus: CorpusFiles, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setattr(corpus_reads, "BATCH_ROWS", 8)  # 12 output chunks over 11 batches
    train, _, _ = split_rows(103, 42, 0.05)
    out = tmp_path / "train.arrow"
    progress: list[tuple[int, int]] = []
    write_in_order(corpus, train, out, lambda done, total: progress.append((done, total)))
    written = read_table(out)
    rows = train.tolist()
    assert written.column("source").to_pylist() == [f"s{i}" for i in rows]
    assert written.column("level").to_pylist() == [i % 6 for i in rows]
    assert written.column("input_ids").to_pylist() == [[i] * (1 + i % 5) for i in rows]
    assert written.column("length").to_pylist() == [1 + i % 5 for i in rows]
    assert written.schema == corpus.schema()
    assert [b.num_rows for b in written.to_batches()] == [8] * 12 + [2]
    assert progress[-1] == (len(rows), len(rows))
    assert [p[0] for p in progress] == sorted(p[0] for p in progress)
    assert not list(tmp_path.glob("*.scratch"))  # the scratch file is gone


def test_held_out_rows_are_gathered_in_their_order_in_one_pass(corpus: CorpusFiles):
    plain = CorpusFiles(corpus.corpus)
    rows = [57, 3, 99, 3, 10, 0, 102]
    assert gather(plain, rows).column("source").to_pylist() == [f"s{i}" for i in rows]
    assert gather(plain, []).num_rows == 0
    parts = list(in_file_order(plain, [42, 5, 6]))
    assert [p.column("source").to_pylist() for p in parts] == [["s5", "s6"], ["s42"]]
    with pytest.raises(IndexError):
        gather(plain, [103])


def test_a_table_gives_rows_batch_by_batch_in_the_asked_order(corpus: CorpusFiles):
    table = read_table(corpus.corpus)
    assert table.column("source").num_chunks == 11
    rows = [57, 3, 99, 3, 10, 0, 102]
    assert take_rows(table, rows).to_pylist() == table.take(rows).to_pylist()
    assert take_rows(table, np.arange(5)).column("source").to_pylist() == [
        f"s{i}" for i in range(5)
    ]
    pairs = PairTable(table)
    assert [p.source for p in pairs.take(rows)] == [f"s{i}" for i in rows]
    assert [p.source for p in pairs[::-25]] == ["s102", "s77", "s52", "s27", "s2"]
    with pytest.raises(IndexError):
        take_rows(table, [-1])
