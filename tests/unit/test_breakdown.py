"""Where the gain comes from (core.evaluate.breakdown): the test set by source length and
the sentences whose chrF changed most, on small fixed rows scored by real sacreBLEU."""

from __future__ import annotations

import pytest
import sacrebleu

from workbench.core.data.pair import Pair
from workbench.core.decoding import DecodeOptions
from workbench.core.evaluate.before_after import HeldOutSets, score_rows
from workbench.core.evaluate.breakdown import (
    LENGTH_EDGES,
    by_length,
    gain_breakdown,
    most_changed,
)
from workbench.core.evaluate.significance import score_before_after
from workbench.core.languages import length_unit, length_units, written_without_spaces
from workbench.core.records.run_records import as_json
from workbench.core.records.scores import MostChanged
from workbench.core.records.summary import RunSummary
from workbench.core.views.score_text import by_length_cells, length_header, length_range


def words(n: int, word: str = "tea") -> str:
    return " ".join(f"{word}{i}" for i in range(n))


#: (source, reference, before, after): three short sources, two of 11-20 words, none of
#: 21-40, one of 45. The third rises most (nothing -> the reference); the fifth falls most.
TEST = [
    ("I like tea .", "the cat sat on the mat", "a cat sat", "the cat sat on a mat"),
    ("Where is it ?", "it is raining today", "it rains", "it is raining now"),
    ("Good night .", "good night my friend", "xyz", "good night my friend"),
    (words(12), "a dog ran in the park", "a dog ran", "a dog ran in a park"),
    (words(18), "the bus is here now", "the bus is here now", "bus"),
    (words(45), "hello there everyone", "hello there", "hello there"),
]


def rows(test=TEST, tokenize: str = "13a"):
    """The rows as a run scores them (score_rows), with real sentence BLEU and chrF."""
    sets = HeldOutSets(
        pairs={"test": [Pair(source, reference) for source, reference, _, _ in test]},
        names={"test": "fixed rows"},
        options=DecodeOptions(),
        batch_size=8,
        bleu_tokenize=tokenize,
    )
    before = {"test": [row[2] for row in test]}
    after = {"test": [row[3] for row in test]}
    return score_rows(sets, before, after)["test"]


def test_each_row_carries_sacrebleus_sentence_chrf():
    for row, (_, reference, before, after) in zip(rows(), TEST, strict=True):
        assert row.chrf_before == round(sacrebleu.sentence_chrf(before, [reference]).score, 2)
        assert row.chrf_after == round(sacrebleu.sentence_chrf(after, [reference]).score, 2)


def test_each_bucket_is_scored_as_sacrebleu_scores_its_own_sentences():
    buckets = by_length(rows(), "13a", "words")
    # The 21-40 bucket is empty: left out.
    assert [(b.low, b.high, b.sentences) for b in buckets] == [
        (1, 10, 3),
        (11, 20, 2),
        (41, None, 1),
    ]
    for bucket, members in zip(buckets, (TEST[:3], TEST[3:5], TEST[5:]), strict=True):
        refs = [[m[1] for m in members]]
        for side, column in (("before", 2), ("after", 3)):
            hyps = [m[column] for m in members]
            bleu = sacrebleu.corpus_bleu(hyps, refs, tokenize="13a").score
            chrf = sacrebleu.corpus_chrf(hyps, refs).score
            assert getattr(bucket, f"bleu_{side}") == round(bleu, 2)
            assert getattr(bucket, f"chrf_{side}") == round(chrf, 2)
    assert buckets[0].bleu_after > buckets[0].bleu_before  # the short sentences gained
    assert [length_range(b) for b in buckets] == ["1–10", "11–20", "41+"]


def test_a_source_written_without_spaces_is_counted_in_characters():
    assert all(written_without_spaces(c) for c in ("zh", "zho_Hans", ">>cmn_Hans<<", "ja", "th"))
    assert not any(written_without_spaces(c) for c in ("en", "de", "ko", None, "xx"))
    assert (length_unit("zh"), length_unit("eng_Latn")) == ("characters", "words")
    assert LENGTH_EDGES["characters"] == tuple(2 * e for e in LENGTH_EDGES["words"])
    assert len(length_units("我 喜欢 茶。", "characters")) == 5  # spaces are not characters
    zh = [
        ("我喜欢茶。", "I like tea .", "I tea", "I like tea ."),  # 5 characters
        ("今" * 25, "it is today", "it", "it is today"),  # 25
        ("天" * 90, "a long one", "a long one", "long"),  # 90
    ]
    breakdown = gain_breakdown(rows(zh), "13a", "zh")
    buckets = breakdown["by_length"]
    assert buckets
    assert [(length_range(b), b.unit) for b in buckets] == [
        ("1–20", "characters"),
        ("21–40", "characters"),
        ("81+", "characters"),
    ]
    assert length_header(buckets[0].unit) == "Source length (characters)"


def test_the_most_changed_are_the_sentences_built_to_rise_and_fall_most():
    scored = rows()
    rose, fell = most_changed(scored, k=2)
    assert rose[0].source == "Good night ."  # "xyz" -> the reference itself
    assert rose[0].chrf_after == 100.0
    assert fell[0].source == words(18)  # the reference itself -> "bus"
    assert [c.change for c in rose] == sorted((c.change for c in rose), reverse=True)
    assert all(c.change > 0 for c in rose)
    assert all(c.change < 0 for c in fell)
    assert words(45) not in {c.source for c in rose + fell}  # unchanged: neither
    for c in rose + fell:
        assert c.change == round(c.chrf_after - c.chrf_before, 2)
    one_each = most_changed(scored, k=1)
    assert (len(one_each[0]), len(one_each[1])) == (1, 1)


def test_the_summary_keeps_both_and_reads_them_back():
    breakdown = gain_breakdown(rows(), "13a", "en")
    summary = RunSummary.from_dict(RunSummary(status="finished", **breakdown).to_dict())
    assert summary.by_length == by_length(rows(), "13a", "words")
    assert summary.most_changed is not None
    rose, fell = most_changed(rows())
    assert summary.most_changed == MostChanged(rose=rose, fell=fell)
    cells = by_length_cells(summary.by_length[0])
    first = breakdown["by_length"][0]
    assert cells[:2] == ["1–10", "3"]
    assert cells[2].startswith(f"{first.bleu_before:.2f} → {first.bleu_after:.2f} (+")
    # A summary without them has neither; a hand-edited entry of the wrong shape is dropped,
    # and the reader says so.
    assert RunSummary().by_length is None
    assert RunSummary().most_changed is None
    notes: list[str] = []
    edited = RunSummary.from_dict(
        {
            "by_length": [{"unit": "words", "low": "1"}, as_json(first)],
            "most_changed": {"rose": [{}]},
        },
        notes,
        "summary.json",  # as read_summary names the file it read
    )
    assert edited.by_length == [first]
    assert edited.most_changed == MostChanged(rose=[], fell=[])
    assert "summary.json.by_length[0]: an ill-formed record dropped" in notes
    assert "summary.json.most_changed.rose[0]: an ill-formed record dropped" in notes


@pytest.mark.parametrize("tokenize", ["zh", "13a"])
def test_a_bucket_of_every_sentence_has_the_headline_numbers(tokenize: str):
    short = TEST[:3]  # all in 1-10 words
    (bucket,) = by_length(rows(short, tokenize), tokenize, "words")
    headline = score_before_after(
        [row[2] for row in short],
        [row[3] for row in short],
        [row[1] for row in short],
        tokenize,
        "test",
        "fixed rows",
    )
    assert (bucket.bleu_before, bucket.bleu_after) == (headline.bleu_before, headline.bleu_after)
    assert (bucket.chrf_before, bucket.chrf_after) == (headline.chrf_before, headline.chrf_after)
