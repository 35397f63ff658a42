"""Data loading, cleaning and splitting, from the HSK corpus and from local files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from workbench.config import build_config
from workbench.core.data import (
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
    raw = [Pair("a", "甲"), Pair("placeholder", "x"), Pair(" ", "乙"), Pair("a", "丙"),
           Pair("b ", " 乙 ")]
    kept, dropped = clean_pairs(raw)
    assert kept == [Pair("a", "甲"), Pair("b", "乙")]
    assert dropped == {"empty": 1, "placeholder": 1, "duplicate": 1}


def test_demo_data_is_clean_and_split_9_to_1():
    data = prepare_data(build_config("demo"))
    n = len(data.train) + len(data.validation)
    assert data.dropped["placeholder"] == 65
    assert round(n * 0.1) == len(data.validation)
    sources = [p.source for p in data.train + data.validation]
    assert len(set(sources)) == n  # no sentence on both sides of the split
    assert not any(s.lower() == "placeholder" for s in sources)


def test_split_is_seeded():
    pairs = [Pair(str(i), str(i)) for i in range(100)]
    assert split_pairs(pairs, 0.1, 1) == split_pairs(pairs, 0.1, 1)
    assert split_pairs(pairs, 0.1, 1) != split_pairs(pairs, 0.1, 2)
    train, val = split_pairs(pairs, 0.1, 1)
    assert len(val) == 10 and len(train) == 90 and not set(train) & set(val)


def test_tsv_csv_jsonl(tmp_path: Path):
    tsv = tmp_path / "p.tsv"
    tsv.write_text("en\tzh\nI like tea.\t我喜欢茶。\nHi, you.\t你好\n", encoding="utf-8")
    csv = tmp_path / "p.csv"
    csv.write_text('zh,en\n我喜欢茶。,"I like tea, really."\n', encoding="utf-8")
    jsonl = tmp_path / "p.jsonl"
    jsonl.write_text(json.dumps({"translation": {"en": "Hi", "zh": "嗨"}}, ensure_ascii=False)
                     + "\n\n" + json.dumps({"en": "Yes", "zh": "是"}) + "\n", encoding="utf-8")
    assert read_pair_file(tsv, "en", "zh") == [Pair("I like tea.", "我喜欢茶。"),
                                               Pair("Hi, you.", "你好")]
    assert read_pair_file(csv, "en", "zh") == [Pair("I like tea, really.", "我喜欢茶。")]
    assert read_pair_file(jsonl, "en", "zh") == [Pair("Hi", "嗨"), Pair("Yes", "是")]


def test_datasets_folder(tmp_path: Path):
    import datasets

    rows = [{"en": "a", "zh": "甲"}, {"en": "b", "zh": "乙"}]
    ds = datasets.Dataset.from_dict({"translation": rows})
    ds.save_to_disk(str(tmp_path / "ds"))
    c = build_config("demo", overrides={"data": str(tmp_path / "ds")})
    data = prepare_data(c)
    assert len(data.train) + len(data.validation) == 2


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
    assert len(data.train) + len(data.validation) == 20
