"""Data loading, cleaning and splitting, from the HSK corpus and from local files."""

from __future__ import annotations

import gzip
import json
import random
from pathlib import Path

import pytest

from tests.helpers.data import moses_files
from workbench.core.config.build import build_config
from workbench.core.data.cleaning import CleaningSettings
from workbench.core.data.cleaning_pass import clean_pairs
from workbench.core.data.pair import Pair
from workbench.core.data.prepared import prepare_data
from workbench.core.data.sources import (
    first_look,
    is_hub_dataset,
    is_local_data,
    load_hsk_pairs,
    looks_like_local_path,
    read_local_pairs,
)
from workbench.core.data.splits import split_pairs
from workbench.errors import WorkbenchError


def test_hsk_corpus_is_shipped_and_has_metadata():
    pairs = load_hsk_pairs()
    assert len(pairs) == 4354
    assert {"hsk_level", "topic"} <= set(pairs[0].meta)


def test_each_rule_drops_what_it_names_and_the_first_failed_rule_counts():
    settings = CleaningSettings.of(build_config("demo"))
    raw = [
        Pair("a cat", "一只猫"),
        Pair("placeholder", "人是活动的主体。"),
        Pair("", "乙"),
        Pair("Hello, World!", "hello world"),  # a copy, whatever the case and punctuation
        Pair("I like tea.", "I like tea very much."),  # a Latin "Chinese" reference
        Pair("这是中文。", "这是中文句子。"),  # a Han "English" source
        Pair("Yes.", "是的，" * 20),  # 1 word against 60 characters
        Pair("a cat", "一只猫"),  # the same pair again
        Pair("A cat!", "猫"),  # the same source, normalised, with another target
        Pair("Thank you, 2019.", "谢谢，2019。"),  # digits are no letters: kept
    ]
    kept, report = clean_pairs(raw, settings)
    assert kept == [Pair("a cat", "一只猫"), Pair("Thank you, 2019.", "谢谢，2019。")]
    assert report.counts == {
        "empty": 1,
        "placeholder": 1,
        "copy": 1,
        "script": 2,
        "ratio": 1,
        "duplicate": 1,
        "repeated source": 1,
    }
    assert report.total == 8
    assert len(report.dropped) == 8
    assert [d.rule for d in report.dropped][:3] == ["placeholder", "empty", "copy"]


def test_a_rule_left_off_keeps_its_pairs_and_no_clean_keeps_all_but_test_overlaps():
    raw = [Pair("Hello", "hello"), Pair("a cat", "一只猫"), Pair("a dog", "一只狗")]
    skip = build_config("demo", overrides={"clean_skip": "copy,script"})
    assert clean_pairs(raw, CleaningSettings.of(skip))[0] == raw
    off = CleaningSettings.of(build_config("demo", overrides={"clean": False}))
    assert off.rules == ("in test set",)
    kept, report = clean_pairs(raw, off, test=[Pair("A dog!", "别的")])
    assert kept == raw[:2]
    assert report.counts == {"in test set": 1}
    assert report.lines() == [
        "cleaning: off (--no-clean), but pairs in the test set leave training:",
        "  in test set 1",
    ]


def test_the_long_rule_counts_by_tokens_and_drops_only_when_asked():
    def count(sources, targets):  # one token per word, as a tokenizer would count them
        return [len(s.split()) for s in sources], [len(t) for t in targets]

    raw = [Pair("one two three four five", "一二"), Pair("one", "一二三四五六")]
    short = {"max_source_length": 4, "max_target_length": 5, "clean_max_length_ratio": 10}
    kept, report = clean_pairs(
        raw, CleaningSettings.of(build_config("demo", overrides=short)), count
    )
    assert kept == raw
    assert report.counts == {"long": 2}
    assert report.total == 0
    assert "long 2 (kept, truncated; --drop-long drops them)" in report.lines()[1]
    dropping = build_config("demo", overrides={**short, "drop_long": True})
    kept, report = clean_pairs(raw, CleaningSettings.of(dropping), count)
    assert kept == []
    assert report.total == 2


def test_a_near_copy_of_a_test_pair_leaves_train_and_validation(tmp_path: Path):
    data_file = _tsv(tmp_path / "pairs.tsv", range(100))
    test_file = tmp_path / "held.tsv"
    test_file.write_text("en\tzh\nS5!\t别的\nother\t句7\n", encoding="utf-8")
    config = build_config("demo", overrides={"data": str(data_file), "test_data": str(test_file)})
    data = prepare_data(config)
    assert data.dropped["in test set"] == 2  # s5 by its source, s7 by its target
    assert {"s5", "s7"}.isdisjoint(p.source for p in [*data.train, *data.validation])


def test_demo_data_is_clean_and_split_8_1_1_with_no_sentence_in_two_splits():
    data = prepare_data(build_config("demo"))
    n = len(data.train) + len(data.validation) + len(data.test)
    assert data.dropped["placeholder"] == 65
    # 424 held out each; then a training pair left as a near-copy of a test pair
    assert len(data.test) == len(data.validation) == 424
    assert data.dropped["in test set"] == 1
    sources = [p.source for p in [*data.train, *data.validation, *data.test]]
    assert len(set(sources)) == n  # no sentence on two sides of a split
    assert not any(s.lower() == "placeholder" for s in sources)
    assert data.test_name == data.validation_name == "10% held out, seed 42"


def test_validation_is_the_set_the_demo_recipe_was_tuned_on_and_test_is_new():
    """Validation is what a 9:1 split with the same seed holds out (the set the demo recipe
    was tuned on); test is the next share, which nothing was chosen on."""
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
    assert not (set(train) & set(val))
    assert not (set(train) & set(test))
    assert not (set(val) & set(test))
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
    assert data.dropped["in test set"] == 10
    seen = {p.source for p in [*data.train, *data.validation]}
    assert not seen & {p.source for p in data.test}
    assert len(data.train) + len(data.validation) == 90
    assert len(data.validation) == 9


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
    assert read_local_pairs(tsv, "en", "zh") == [
        Pair("I like tea.", "我喜欢茶。"),
        Pair("Hi, you.", "你好"),
    ]
    assert read_local_pairs(csv, "en", "zh") == [Pair("I like tea, really.", "我喜欢茶。")]
    assert read_local_pairs(jsonl, "en", "zh") == [Pair("Hi", "嗨"), Pair("Yes", "是")]


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
        (b"english\tchinese\na\tb\n", "no 'en' column"),
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


def test_moses_prefix_reads_line_aligned_files(tmp_path: Path):
    sources = [f"s{i}" for i in range(30)]
    targets = [f"句{i}" for i in range(30)]
    sources[3] = "a line\u2028with a line separator inside"  # no shift of later lines
    targets[7] = ""  # an empty side: dropped as empty, like an empty TSV cell
    prefix = moses_files(tmp_path / "corpus", sources, targets)
    config = build_config("demo", overrides={"data": str(prefix)})
    assert not is_hub_dataset(config)
    data = prepare_data(config)
    pairs = [*data.train, *data.validation, *data.test]
    assert len(pairs) == 29
    assert data.dropped["empty"] == 1
    assert all(p.target == f"句{p.source[1:]}" for p in pairs if p.source.startswith("s"))
    assert Pair(sources[3], "句3") in pairs
    assert data.origin == f"{tmp_path / 'corpus.en'} + corpus.zh"


def test_moses_via_one_file_name_picks_sides_by_language(tmp_path: Path):
    prefix = moses_files(tmp_path / "corpus", ["Hi", "Yes"], ["嗨", "是"])
    expected = [Pair("Hi", "嗨"), Pair("Yes", "是")]
    assert read_local_pairs(Path(f"{prefix}.en"), "en", "zh") == expected
    assert read_local_pairs(Path(f"{prefix}.zh"), "en", "zh") == expected
    reverse = [Pair("嗨", "Hi"), Pair("是", "Yes")]
    assert read_local_pairs(Path(f"{prefix}.en"), "zh", "en") == reverse


def test_bare_moses_prefix_in_the_working_folder_is_local(tmp_path, monkeypatch):
    moses_files(tmp_path / "corpus", [f"s{i}" for i in range(30)], [f"句{i}" for i in range(30)])
    moses_files(
        tmp_path / "held", [f"s{i}" for i in range(25, 35)], [f"句{i}" for i in range(25, 35)]
    )
    monkeypatch.chdir(tmp_path)
    config = build_config("demo", overrides={"data": "corpus", "test_data": "held"})
    assert not looks_like_local_path("corpus")  # a bare name alone would be a Hub id
    assert not is_hub_dataset(config)
    data = prepare_data(config)
    assert [p.source for p in data.test] == [f"s{i}" for i in range(25, 35)]
    assert data.test_name == "held"
    assert data.dropped["in test set"] == 5


def test_moses_line_count_mismatch_is_one_line_with_both_counts(tmp_path: Path):
    prefix = moses_files(tmp_path / "corpus", ["a", "b", "c"], ["甲", "乙"])
    with pytest.raises(WorkbenchError) as info:
        prepare_data(build_config("demo", overrides={"data": str(prefix)}))
    message = str(info.value)
    assert "\n" not in message
    assert f"'{prefix}.en' (3 lines)" in message
    assert f"'{prefix}.zh' (2 lines)" in message


def test_moses_file_without_its_other_side_says_which_is_missing(tmp_path: Path):
    (tmp_path / "corpus.en").write_text("a\nb\n", encoding="utf-8")
    with pytest.raises(WorkbenchError, match=r"corpus\.zh' not found: .* needs both") as info:
        read_local_pairs(tmp_path / "corpus.en", "en", "zh")
    assert "\n" not in str(info.value)


def test_empty_line_aligned_files_are_refused_at_the_first_look(tmp_path: Path):
    """As an empty table file is: one line before any model is read, not "no usable pairs"
    after it."""
    prefix = moses_files(tmp_path / "corpus", [], [])
    with pytest.raises(WorkbenchError, match=r"corpus\.en' and '.*corpus\.zh' are empty"):
        first_look(build_config("demo", overrides={"data": str(prefix)}))


def test_the_first_look_leaves_the_bundled_corpus_alone(tmp_path: Path, monkeypatch):
    """``hsk`` is the corpus shipped with the package even beside files named like it."""
    monkeypatch.chdir(tmp_path)
    moses_files(Path("hsk"), [], [])  # empty: refused if they were read
    assert is_local_data("hsk", "en", "zh")  # as --data, these files would be the data
    first_look(build_config("demo"))


def test_gzipped_tsv_csv_jsonl_and_moses(tmp_path: Path):
    tsv = tmp_path / "pairs.tsv.gz"
    tsv.write_bytes(gzip.compress("en\tzh\nHi\t嗨\nYes\t是\n".encode()))
    csv = tmp_path / "pairs.csv.gz"
    csv.write_bytes(gzip.compress("zh,en\n嗨,Hi\n是,Yes\n".encode()))
    jsonl = tmp_path / "pairs.jsonl.gz"
    rows = [{"en": "Hi", "zh": "嗨"}, {"en": "Yes", "zh": "是"}]
    text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
    jsonl.write_bytes(gzip.compress(text.encode()))
    prefix = moses_files(tmp_path / "corpus", ["Hi", "Yes"], ["嗨", "是"], gz=True)
    expected = [Pair("Hi", "嗨"), Pair("Yes", "是")]
    for path in (tsv, csv, jsonl, prefix, Path(f"{prefix}.zh.gz")):
        assert read_local_pairs(path, "en", "zh") == expected, path
    assert looks_like_local_path("pairs.tsv.gz")


@pytest.mark.parametrize(
    "content",
    [b"en\tzh\nnot gzip at all\n", gzip.compress(b"en\tzh\n" + b"a\tb\n" * 50, mtime=0)[:-12]],
    ids=["not gzip", "truncated"],
)
def test_corrupt_gzip_is_one_line(tmp_path: Path, content: bytes):
    path = tmp_path / "pairs.tsv.gz"
    path.write_bytes(content)
    with pytest.raises(WorkbenchError, match=r"pairs\.tsv\.gz' is not a readable gzip") as info:
        prepare_data(build_config("demo", overrides={"data": str(path)}))
    assert "\n" not in str(info.value)


def test_source_target_and_src_tgt_columns_need_no_flags(tmp_path: Path):
    tsv = tmp_path / "p.tsv"
    tsv.write_text("source\ttarget\nHi\t嗨\n", encoding="utf-8")
    csv = tmp_path / "p.csv"
    csv.write_text("tgt,src\n嗨,Hi\n", encoding="utf-8")
    jsonl = tmp_path / "p.jsonl"
    jsonl.write_text(json.dumps({"src": "Hi", "tgt": "嗨"}) + "\n", encoding="utf-8")
    for path in (tsv, csv, jsonl):
        assert read_local_pairs(path, "en", "zh") == [Pair("Hi", "嗨")], path
    both = tmp_path / "both.tsv"  # language-named columns win over source/target
    both.write_text("source\tzh\ten\ttarget\nx\t嗨\tHi\ty\n", encoding="utf-8")
    assert read_local_pairs(both, "en", "zh") == [Pair("Hi", "嗨")]
