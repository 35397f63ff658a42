"""Data at scale: pairs read into Arrow, cleaned and tokenized in worker processes, split
by row numbers, cached across runs; and TSV lines whose quotes are text."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

from tests.helpers.data import write_planted_tsv
from workbench.core.config.build import build_config
from workbench.core.data import pair_features
from workbench.core.data.arrow_pairs import PairTable
from workbench.core.data.pair import Pair
from workbench.core.data.pair_rows import PairRows
from workbench.core.data.prepared import prepare_data, prepare_split
from workbench.core.data.prepared_cache import TRAIN_FILE, prepared_root
from workbench.core.data.tokenize import PairTokenizer, training_set
from workbench.core.events import DataProgress, Note
from workbench.core.languages import Direction
from workbench.core.views.event_text import EventText
from workbench.errors import WorkbenchError


def digest(data) -> tuple[str, int, int, int]:
    """What a run's data is: the three splits' pairs in order, the cleaning record and
    the pairs it took out, the names; as a short sha256."""
    h = hashlib.sha256()

    def put(obj) -> None:
        h.update(json.dumps(obj, ensure_ascii=False, sort_keys=True).encode())
        h.update(b"\n")

    for name in ("train", "validation", "test"):
        put([[p.source, p.target] for p in getattr(data, name)])
    put(data.cleaning.to_dict())
    put([d.to_dict() for d in data.cleaning.dropped])
    put([data.validation_name, data.test_name, list(data.notes)])
    return h.hexdigest()[:16], len(data.train), len(data.validation), len(data.test)


#: The digests (this file's ``digest``) of what each preparation gives, as the reference
#: preparation over Python lists gave them: the same pairs kept, in the same order, split
#: the same way, the same pairs dropped by the same rules, or a run's data has changed.
PINNED = {
    "demo": ("0f31aef9f43b4b7f", 3396, 424, 424),
    "planted": ("8eac3d5021249f19", 240, 30, 30),
    "planted_samples": ("f6449fb12f8e92d5", 160, 20, 20),
    "planted_external": ("c1eb90d212fd2d43", 234, 26, 40),
}


def _planted_configs(folder: Path) -> dict:
    tsv = write_planted_tsv(folder / "planted.tsv")
    lines = tsv.read_text(encoding="utf-8").splitlines()
    test = folder / "test.tsv"
    test.write_text("\n".join(lines[:41]) + "\n", encoding="utf-8")
    return {
        "demo": build_config("demo"),
        "planted": build_config(
            "demo",
            overrides={
                "data": str(tsv),
                "test_fraction": 0.1,
                "validation_fraction": 0.1,
                "seed": 7,
            },
        ),
        "planted_samples": build_config(
            "demo", overrides={"data": str(tsv), "samples": 200, "seed": 3}
        ),
        "planted_external": build_config(
            "demo", overrides={"data": str(tsv), "test_data": str(test)}
        ),
    }


def test_the_demo_and_local_files_keep_split_and_drop_the_same_pairs_as_before(tmp_path: Path):
    configs = _planted_configs(tmp_path)
    for name, config in configs.items():
        assert digest(prepare_data(config)) == PINNED[name], name
    # Again, from the cache: the same data.
    for name, config in configs.items():
        assert digest(prepare_data(config)) == PINNED[name], name


def test_worker_processes_prepare_what_one_process_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tiny_model_dir: Path
):
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(tiny_model_dir)
    config = _planted_configs(tmp_path)["planted"]
    config = config.__class__(**{**vars(config), "max_source_length": 12, "max_target_length": 10})
    tokens = PairTokenizer(tokenizer, Direction(), 12, 10)
    monkeypatch.setenv("WORKBENCH_CACHE", str(tmp_path / "one"))
    alone = prepare_split(config, count_tokens=tokens, num_proc=1)
    monkeypatch.setattr(pair_features, "SHARD_ROWS", 37)
    monkeypatch.setattr(pair_features, "PARALLEL_MIN", 0)
    monkeypatch.setenv("WORKBENCH_CACHE", str(tmp_path / "two"))
    events: list = []
    workers = prepare_split(config, on_event=events.append, count_tokens=tokens, num_proc=2)
    assert digest(workers) == digest(alone)
    assert isinstance(workers.train, PairTable)
    assert isinstance(alone.train, PairTable)
    assert workers.train.column("input_ids") == alone.train.column("input_ids")
    assert workers.cleaning.counts["long"] == alone.cleaning.counts["long"] > 0
    assert not any(isinstance(e, Note) and "cached" in e.text for e in events)
    # Where the time went, said once the data is ready (benchmarks/data_scale.py reads it).
    said = [e.text for e in events if isinstance(e, Note) and "data: prepared" in e.text]
    assert len(said) == 1
    assert said[0].startswith(f"data: prepared {workers.cleaning.pairs_in:,} pairs in ")
    stages = [part.rsplit(" ", 2)[0] for part in said[0].split(" s: ", 1)[1].split(" · ")]
    assert stages == [
        "reading",
        "cleaning and tokenizing",
        "rules, sample, split and held-out sets",
        "writing",
    ]


def test_prepared_ids_are_the_tokenizers_own_truncated_ids(tmp_path: Path, tiny_model_dir: Path):
    """The ids training reads are what the tokenizer gives with truncation, the long rule
    counts the whole lengths, and a prepared table is used as it is."""
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(tiny_model_dir)
    tsv = write_planted_tsv(tmp_path / "planted.tsv")
    config = build_config(
        "demo", overrides={"data": str(tsv), "max_source_length": 12, "max_target_length": 10}
    )
    tokens = PairTokenizer(tokenizer, Direction(), 12, 10)
    data = prepare_data(config, count_tokens=tokens)
    assert isinstance(data.train, PairTable)
    assert data.train.tokenized
    pairs = list(data.train)
    sources = tokenizer([p.source for p in pairs], max_length=12, truncation=True)
    targets = tokenizer(text_target=[p.target for p in pairs], max_length=10, truncation=True)
    assert data.train.column("input_ids") == sources["input_ids"]
    assert data.train.column("attention_mask") == sources["attention_mask"]
    assert data.train.column("labels") == targets["input_ids"]
    assert data.train.column("length") == [len(ids) for ids in sources["input_ids"]]
    whole = tokenizer([p.source for p in pairs])["input_ids"]
    whole_targets = tokenizer(text_target=[p.target for p in pairs])["input_ids"]
    long = sum(1 for s, t in zip(whole, whole_targets, strict=True) if len(s) > 12 or len(t) > 10)
    kept_long = [d for d in data.cleaning.dropped if d.rule == "long"]
    assert long > 0
    assert sum(1 for d in kept_long if d.kept) >= long  # train's long ones among them
    dataset, lengths = training_set(data.train, tokens)
    assert dataset.column_names == ["input_ids", "attention_mask", "labels"]
    assert lengths == data.train.column("length")


def _numbered_tsv(path: Path, n: int) -> Path:
    """``n`` distinct clean pairs."""
    lines = "".join(f"Sentence {i} here.\t第{i}句。\n" for i in range(n))
    path.write_text(f"en\tzh\n{lines}", encoding="utf-8")
    return path


def test_a_second_run_is_served_from_the_cache_and_any_change_prepares_again(tmp_path: Path):
    tsv = _numbered_tsv(tmp_path / "pairs.tsv", 300)
    config = build_config("demo", overrides={"data": str(tsv)})
    first: list = []
    data = prepare_data(config, on_event=first.append)
    assert not any(isinstance(e, Note) and "cached" in e.text for e in first)
    second: list = []
    again = prepare_data(config, on_event=second.append)
    cached = [e.text for e in second if isinstance(e, Note)]
    assert len(cached) == 1
    assert cached[0].startswith(
        f"data: cached ({len(data.train):,} training pairs in {prepared_root()}"
    )
    assert digest(again) == digest(data)
    entries = lambda: sorted(p.name for p in prepared_root().iterdir())  # noqa: E731
    before = entries()
    prepare_data(build_config("demo", overrides={"data": str(tsv), "seed": 5}))
    prepare_data(build_config("demo", overrides={"data": str(tsv), "clean_skip": "copy"}))
    assert len(entries()) == len(before) + 2
    stat = tsv.stat()
    os.utime(tsv, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))  # the file changed
    changed: list = []
    prepare_data(config, on_event=changed.append)
    assert not any(isinstance(e, Note) and "cached" in e.text for e in changed)


def test_a_torn_cache_entry_is_found_and_built_again(tmp_path: Path):
    tsv = _numbered_tsv(tmp_path / "pairs.tsv", 100)
    config = build_config("demo", overrides={"data": str(tsv)})
    whole = digest(prepare_data(config))
    (entry,) = [
        p
        for p in prepared_root().iterdir()
        if (p / TRAIN_FILE).is_file()
        and str(tsv) in (p / "held_out.json").read_text(encoding="utf-8")
    ]
    train = entry / TRAIN_FILE
    train.write_bytes(train.read_bytes()[:100])  # a disk that filled up
    events: list = []
    rebuilt = prepare_data(config, on_event=events.append)
    notes = [e.text for e in events if isinstance(e, Note)]
    assert notes[0] == f"data: the cached copy in {entry} was incomplete; preparing again"
    assert [n.split(" in ")[0] for n in notes[1:]] == ["data: prepared 100 pairs"]  # again
    assert digest(rebuilt) == whole


def test_tsv_quotes_are_text_and_each_line_is_one_pair(tmp_path: Path):
    """Quotes at the start of a line, closed or not, are kept; no line joins another."""
    lines = [f"Plain sentence {i}.\t平句{i}。" for i in range(201)]
    lines[0] = '"Hello," she said.\t"你好，"她说。'
    lines[101] = '"Unclosed quote starts this one.\t未闭合的引号。'
    tsv = tmp_path / "quotes.tsv"
    tsv.write_text("en\tzh\n" + "\n".join(lines) + "\n", encoding="utf-8")
    data = prepare_data(build_config("demo", overrides={"data": str(tsv)}))
    everything = list(data.train) + data.validation + data.test
    assert data.cleaning.pairs_in == 201
    assert len(everything) == 201
    sources = {p.source for p in everything}
    assert '"Hello," she said.' in sources
    assert '"Unclosed quote starts this one.' in sources
    assert '"你好，"她说。' in {p.target for p in everything}


def test_a_tsv_line_with_a_stray_tab_is_named_by_its_number(tmp_path: Path):
    tsv = tmp_path / "bad.tsv"
    tsv.write_text("en\tzh\nfine\t好\nnot\tfine\t额外\n", encoding="utf-8")
    with pytest.raises(WorkbenchError, match=r"bad\.tsv' line 3 has 3 tab-separated fields"):
        prepare_data(build_config("demo", overrides={"data": str(tsv)}))


def test_progress_says_pairs_per_second_and_time_left():
    text = EventText()
    assert text.lines(
        DataProgress("cleaning and tokenizing", 400_000, 1_000_000, 21_300.4, 28.2)
    ) == ["  data: cleaning and tokenizing 400,000/1,000,000 pairs · 21,300 pairs/s · ETA 28s"]
    assert text.lines(DataProgress("reading", 50_000, 0, 90_000.0)) == [
        "  data: reading 50,000 pairs · 90,000 pairs/s"
    ]


def test_rows_are_found_in_a_table_as_in_a_list(tmp_path: Path):
    tsv = tmp_path / "pairs.tsv"
    tsv.write_text(
        "en\tzh\n"
        + "".join(f"Tea number {i}.\t第{i}杯茶。\n" for i in range(50))
        + "".join(f"Coffee {i}.\t第{i}杯咖啡。\n" for i in range(50)),
        encoding="utf-8",
    )
    data = prepare_data(build_config("demo", overrides={"data": str(tsv)}))
    rows = PairRows([("train", data.train), ("valid", data.validation), ("test", data.test)])
    listed = PairRows(
        [("train", list(data.train)), ("valid", data.validation), ("test", data.test)]
    )
    assert len(rows) == 100
    assert list(rows) == list(listed)
    for needle in ("tea", "咖啡", "COFFEE 1", "nothing like it"):
        assert list(rows.matching(needle)) == list(listed.matching(needle)), needle
    tea = rows.matching("TEA")
    assert len(tea) == 50
    assert all("Tea" in p.source for _, p in tea)
    assert rows[3] == listed[3]
    assert rows[-1] == listed[-1]
    assert rows[10:20] == listed[10:20]
    assert len(rows.spread(7)) <= 7
    assert Pair("Tea number 0.", "第0杯茶。") in [p for _, p in rows]


def _loop_verdicts(columns, settings, lengths, test_keys):
    """The rules as a loop over the pairs in order: what CleaningPass must agree with."""
    from workbench.core.data.cleaning import NO_KEY, PAIR_RULES, TEST_RULE

    drops, kept = [], []
    for row, code in enumerate(columns["rule"]):
        (drops.append((PAIR_RULES[code - 1], row, False)) if code else kept.append(row))
    if "long" in settings.rules and lengths is not None:
        source_lengths, target_lengths = lengths(kept)
        rows, kept = kept, []
        for row, a, b in zip(rows, source_lengths, target_lengths, strict=True):
            if a > settings.max_source_length or b > settings.max_target_length:
                drops.append(("long", row, not settings.drop_long))
                if settings.drop_long:
                    continue
            kept.append(row)
    seen_pairs, seen_sources, unique = set(), set(), []
    for row in kept:
        key, pair = columns["source_key"][row], columns["pair_key"][row]
        if "duplicate" in settings.rules and pair in seen_pairs:
            drops.append(("duplicate", row, False))
        elif "repeated source" in settings.rules and key != NO_KEY and key in seen_sources:
            drops.append(("repeated source", row, False))
        else:
            seen_pairs.add(pair)
            seen_sources.add(key)
            unique.append(row)
    sources, targets = test_keys
    final = []
    for row in unique:
        hit = columns["source_key"][row] in sources or columns["target_key"][row] in targets
        if TEST_RULE in settings.rules and hit:
            drops.append((TEST_RULE, row, False))
        else:
            final.append(row)
    return final, drops


@pytest.mark.parametrize("skip", ["", "duplicate", "repeated source", "duplicate,repeated source"])
@pytest.mark.parametrize("drop_long", [False, True])
def test_the_array_pass_gives_the_loops_verdicts(skip: str, drop_long: bool):
    """Random keys with many collisions (a pair's source key follows from its pair key, as
    for real text), under each combination of the order-bound rules."""
    import random

    from workbench.core.data.cleaning import CleaningReport, CleaningSettings
    from workbench.core.data.cleaning_pass import CleaningPass

    rng = random.Random(f"{skip}{drop_long}")
    n = 3_000
    pairs = [rng.randrange(400) for _ in range(n)]
    source_of = {p: rng.choice([0, *range(1, 120)]) for p in range(400)}  # 0: NO_KEY
    columns = {
        "rule": [rng.choice([0] * 9 + [1, 3]) for _ in range(n)],
        "pair_key": pairs,
        "source_key": [source_of[p] for p in pairs],
        "target_key": [rng.randrange(1, 300) for _ in range(n)],
    }
    lengths_of = [(rng.randrange(1, 20), rng.randrange(1, 20)) for _ in range(n)]

    def lengths(rows):
        return [lengths_of[r][0] for r in rows], [lengths_of[r][1] for r in rows]

    config = build_config(
        "demo",
        overrides={
            "clean_skip": skip or None,
            "drop_long": drop_long,
            "max_source_length": 15,
            "max_target_length": 17,
        },
    )
    settings = CleaningSettings.of(config)
    test_keys = ({5, 17, 33}, {7, 250})
    cleaning = CleaningPass(CleaningReport(settings))
    kept = cleaning.run(columns, lengths, test_keys)
    expected_kept, expected_drops = _loop_verdicts(columns, settings, lengths, test_keys)
    assert kept.tolist() == expected_kept
    assert cleaning.drops == expected_drops
    assert sum(cleaning.report.counts.values()) == len(expected_drops)


def test_the_dataset_pane_browses_what_a_run_prepared_and_a_run_never_does(
    tmp_path: Path, tiny_model_dir: Path
):
    from transformers import AutoTokenizer

    tsv = write_planted_tsv(tmp_path / "planted.tsv")
    config = build_config("demo", overrides={"data": str(tsv)})
    tokens = PairTokenizer(AutoTokenizer.from_pretrained(tiny_model_dir), Direction(), 128, 128)
    run = prepare_data(config, count_tokens=tokens)  # as a run with that model prepares
    browsed: list = []
    shown = prepare_split(config, on_event=browsed.append, browse=True)
    assert any(isinstance(e, Note) and e.text.startswith("data: cached") for e in browsed)
    assert list(shown.train) == list(run.train)
    assert shown.cleaning.long_measured
    plain: list = []
    own = prepare_split(config, on_event=plain.append)  # a run without a tokenizer (scratch)
    assert not any(isinstance(e, Note) and "cached" in e.text for e in plain)
    assert list(own.train) == list(run.train)
    assert not own.cleaning.long_measured
    dropping = build_config("demo", overrides={"data": str(tsv), "drop_long": True})
    prepare_data(dropping, count_tokens=tokens)
    again: list = []
    prepare_split(dropping, on_event=again.append, browse=True)  # the pairs may differ
    assert not any(isinstance(e, Note) and "cached" in e.text for e in again)
