"""Data loading, cleaning and splitting, from the HSK corpus and from local files."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from workbench.core.config import build_config
from workbench.core.data.pairs import (
    Pair,
    clean_pairs,
    load_hsk_pairs,
    looks_like_local_path,
    prepare_data,
    read_pair_file,
    split_pairs,
)
from workbench.errors import WorkbenchError


def test_hsk_corpus_is_shipped_and_has_metadata():
    pairs = load_hsk_pairs()
    assert len(pairs) == 4354
    assert {"hsk_level", "topic"} <= set(pairs[0].meta)


def test_clean_drops_placeholders_empties_and_repeated_sources():
    raw = [
        Pair("a", "甲"),
        Pair("placeholder", "x"),
        Pair(" ", "乙"),
        Pair("a", "丙"),
        Pair("b ", " 乙 "),
    ]
    kept, dropped = clean_pairs(raw)
    assert kept == [Pair("a", "甲"), Pair("b", "乙")]
    assert dropped == {"empty": 1, "placeholder": 1, "duplicate": 1}


def test_demo_data_is_clean_and_split_8_1_1_with_no_sentence_in_two_splits():
    data = prepare_data(build_config("demo"))
    n = len(data.train) + len(data.validation) + len(data.test)
    assert data.dropped["placeholder"] == 65
    assert len(data.validation) == len(data.test) == round(n * 0.1) == 425
    sources = [p.source for p in data.train + data.validation + data.test]
    assert len(set(sources)) == n  # no sentence on two sides of a split
    assert not any(s.lower() == "placeholder" for s in sources)
    assert data.test_name == data.validation_name == "10% held out, seed 42"


def test_validation_is_the_set_the_demo_recipe_was_tuned_on_and_test_is_new():
    """The 9:1 split of earlier versions held out exactly today's validation set."""
    pairs = [Pair(str(i), str(i)) for i in range(1000)]
    order = list(range(1000))
    random.Random(42).shuffle(order)
    _train, validation, test = split_pairs(pairs, 42, 0.1, 0.1)
    assert validation == [pairs[i] for i in order[:100]]  # what 9:1 held out
    assert test == [pairs[i] for i in order[100:200]]


def test_split_is_seeded():
    pairs = [Pair(str(i), str(i)) for i in range(100)]
    assert split_pairs(pairs, 1, 0.1, 0.1) == split_pairs(pairs, 1, 0.1, 0.1)
    assert split_pairs(pairs, 1, 0.1, 0.1) != split_pairs(pairs, 2, 0.1, 0.1)
    train, val, test = split_pairs(pairs, 1, 0.1, 0.1)
    assert (len(train), len(val), len(test)) == (80, 10, 10)
    assert not (set(train) & set(val) or set(train) & set(test) or set(val) & set(test))
    assert split_pairs(pairs, 1, 0.1)[2] == []  # no test share: an empty test split


def _tsv(path: Path, rows: range, prefix: str = "s") -> Path:
    path.write_text("en\tzh\n" + "".join(f"{prefix}{i}\t句{i}\n" for i in rows), encoding="utf-8")
    return path


def test_test_data_file_is_the_test_set_and_never_trained_on(tmp_path: Path):
    data_file = _tsv(tmp_path / "pairs.tsv", range(100))
    test_file = _tsv(tmp_path / "held.tsv", range(90, 120))  # 10 sources overlap the data
    config = build_config("demo", overrides={"data": str(data_file), "test_data": str(test_file)})
    data = prepare_data(config)
    assert [p.source for p in data.test] == [f"s{i}" for i in range(90, 120)]
    assert data.test_name == "held.tsv"
    assert data.dropped["in the test set"] == 10
    seen = {p.source for p in data.train + data.validation}
    assert not seen & {p.source for p in data.test}
    assert len(data.train) + len(data.validation) == 90 and len(data.validation) == 9


def test_missing_test_data_file_is_one_line(tmp_path: Path):
    config = build_config(
        "demo",
        overrides={
            "data": str(_tsv(tmp_path / "p.tsv", range(30))),
            "test_data": str(tmp_path / "nope.tsv"),
        },
    )
    with pytest.raises(WorkbenchError, match=r"test data .*nope\.tsv' not found; check the path"):
        prepare_data(config)


def test_small_file_still_gets_three_splits(tmp_path: Path):
    data = prepare_data(
        build_config("demo", overrides={"data": str(_tsv(tmp_path / "p.tsv", range(20)))})
    )
    assert (len(data.train), len(data.validation), len(data.test)) == (16, 2, 2)


def test_tsv_csv_jsonl(tmp_path: Path):
    tsv = tmp_path / "p.tsv"
    tsv.write_text("en\tzh\nI like tea.\t我喜欢茶。\nHi, you.\t你好\n", encoding="utf-8")
    csv = tmp_path / "p.csv"
    csv.write_text('zh,en\n我喜欢茶。,"I like tea, really."\n', encoding="utf-8")
    jsonl = tmp_path / "p.jsonl"
    jsonl.write_text(
        json.dumps({"translation": {"en": "Hi", "zh": "嗨"}}, ensure_ascii=False)
        + "\n\n"
        + json.dumps({"en": "Yes", "zh": "是"})
        + "\n",
        encoding="utf-8",
    )
    assert read_pair_file(tsv, "en", "zh") == [
        Pair("I like tea.", "我喜欢茶。"),
        Pair("Hi, you.", "你好"),
    ]
    assert read_pair_file(csv, "en", "zh") == [Pair("I like tea, really.", "我喜欢茶。")]
    assert read_pair_file(jsonl, "en", "zh") == [Pair("Hi", "嗨"), Pair("Yes", "是")]


def test_datasets_folder(tmp_path: Path):
    import datasets

    rows = [{"en": "a", "zh": "甲"}, {"en": "b", "zh": "乙"}, {"en": "c", "zh": "丙"}]
    ds = datasets.Dataset.from_dict({"translation": rows})
    ds.save_to_disk(str(tmp_path / "ds"))
    c = build_config("demo", overrides={"data": str(tmp_path / "ds")})
    data = prepare_data(c)
    assert len(data.train) + len(data.validation) + len(data.test) == 3


@pytest.mark.parametrize(
    ("content", "needle"),
    [
        (None, "not found"),
        (b"", "is empty"),
        (b"en\tzh\n\xff\xfe bad\tbytes\n", "not UTF-8"),
        (b"source\ttarget\na\tb\n", "no 'en' column"),
        (b"en\tzh\n", "no pairs"),
    ],
)
def test_bad_data_files(tmp_path: Path, content, needle):
    path = tmp_path / "data.tsv"
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(WorkbenchError, match=needle) as info:
        prepare_data(build_config("demo", overrides={"data": str(path)}))
    assert "\n" not in str(info.value)


def test_paths_are_never_hub_names(tmp_path: Path):
    assert looks_like_local_path("./model")
    assert looks_like_local_path("/abs/model")
    assert looks_like_local_path("runs/x/best_model")
    assert looks_like_local_path("pairs.tsv")
    assert not looks_like_local_path("Helsinki-NLP/opus-mt-en-zh")
    assert not looks_like_local_path("wmt/wmt19")


def test_samples_subsamples_local_data(tmp_path: Path):
    path = tmp_path / "p.tsv"
    path.write_text("en\tzh\n" + "".join(f"s{i}\t句{i}\n" for i in range(50)), encoding="utf-8")
    data = prepare_data(build_config("demo", overrides={"data": str(path), "samples": 20}))
    assert len(data.train) + len(data.validation) + len(data.test) == 20
