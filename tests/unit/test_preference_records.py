"""Preference records: chosen and rejected by the ranker for each objective, ties broken
by one order, and preferences.jsonl written and read back."""

from __future__ import annotations

import json

import pytest

from workbench.core.preferences.records import (
    RankedCandidate,
    RankedSource,
    choose,
    read_preferences,
    write_preferences,
)
from workbench.errors import WorkbenchError


def ranked(reference: str | None, reference_score: float | None, *candidates) -> RankedSource:
    return RankedSource(
        "src", reference, reference_score, [RankedCandidate(*c) for c in candidates]
    )


def test_best_trains_on_the_top_candidate_never_the_reference():
    source = ranked("ref", 100.0, ("a", 30.0, 1), ("b", 70.0, 2), ("c", 10.0, 1))
    record = choose(source, "best", True)
    assert record is not None
    assert (record.chosen, record.rejected) == ("b", "c")
    assert record.chosen_score == max(c.score for c in source.candidates)


def test_cpo_and_dpo_choose_from_the_reference_and_the_candidates():
    source = ranked("ref", 100.0, ("a", 30.0, 1), ("b", 70.0, 2))
    for objective in ("cpo", "dpo"):
        record = choose(source, objective, True)
        assert record is not None
        assert (record.chosen, record.rejected) == ("ref", "a")
        assert (record.chosen_score, record.rejected_score) == (100.0, 30.0)
    beaten = ranked("ref", 5.0, ("a", 30.0, 1), ("b", 70.0, 2))
    record = choose(beaten, "cpo", True)
    assert record is not None
    assert (record.chosen, record.rejected) == ("b", "ref")


def test_a_lower_is_better_ranker_chooses_its_lowest_score():
    source = ranked(None, None, ("a", 3.0, 1), ("b", 9.5, 1), ("c", 1.25, 1))
    record = choose(source, "dpo", False)
    assert record is not None
    assert (record.chosen, record.rejected) == ("c", "b")
    assert record.chosen_score <= record.rejected_score
    best = choose(source, "best", False)
    assert best is not None
    assert best.chosen == "c"


def test_ties_go_to_the_reference_then_the_most_drawn_then_the_first():
    tied = ranked("ref", 50.0, ("a", 50.0, 1), ("b", 50.0, 3), ("c", 10.0, 1), ("d", 10.0, 1))
    record = choose(tied, "cpo", True)
    assert record is not None
    assert (record.chosen, record.rejected) == ("ref", "d")
    best = choose(tied, "best", True)
    assert best is not None
    assert (best.chosen, best.rejected) == ("b", "d")
    first = choose(ranked(None, None, ("x", 5.0, 2), ("y", 5.0, 2), ("z", 1.0, 1)), "best", True)
    assert first is not None
    assert first.chosen == "x"


def test_no_preference_is_skipped_for_cpo_and_dpo_but_best_keeps_its_top():
    tied = ranked(None, None, ("a", 40.0, 2), ("b", 40.0, 1))
    assert choose(tied, "cpo", True) is None
    assert choose(tied, "dpo", False) is None
    kept = choose(tied, "best", True)
    assert kept is not None
    assert kept.chosen == "a"
    # the model's candidate is the reference: one text in the pool
    same = ranked("a", 100.0, ("a", 100.0, 4))
    assert choose(same, "cpo", True) is None
    assert choose(ranked(None, None), "best", True) is None  # an empty line: no candidate
    with pytest.raises(ValueError, match="sft"):
        choose(tied, "sft", True)


def test_preferences_jsonl_is_one_object_a_line_and_reads_back(tmp_path):
    records = [
        choose(ranked("参考", 80.0, ("候选", 60.0, 2), ("坏", 5.5, 1)), "cpo", True, "chrF"),
        choose(ranked(None, None, ("x", 0.5, 1), ("y", 0.25, 1)), "cpo", True, "chrF"),
    ]
    assert all(r is not None for r in records)
    path = tmp_path / "preferences.jsonl"
    write_preferences(path, [r for r in records if r is not None])
    lines = path.read_text(encoding="utf-8").splitlines()
    first = json.loads(lines[0])
    assert len(lines) == 2
    assert {"source", "reference", "candidates", "chosen", "rejected"} <= first.keys()
    assert first["candidates"] == [
        {"text": "候选", "score": 60.0, "count": 2},
        {"text": "坏", "score": 5.5, "count": 1},
    ]
    assert (first["chosen"], first["rejected"], first["ranked_by"]) == ("参考", "坏", "chrF")
    assert json.loads(lines[1])["reference"] is None
    assert read_preferences(path) == records


def test_a_preferences_file_edited_by_hand_is_one_line(tmp_path):
    path = tmp_path / "preferences.jsonl"
    path.write_text('{"source": "s", "chosen": "a"}\n', encoding="utf-8")
    with pytest.raises(WorkbenchError, match=r"line 1 is not a preference record") as err:
        read_preferences(path)
    assert "\n" not in str(err.value)
