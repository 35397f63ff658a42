"""The "before" translations kept across runs: reused only for the same model, sentences and
decoding, and giving the same scores.

The tests that train (or build), split from tests/unit/test_before_cache.py, whose other tests
do not.
"""

from __future__ import annotations

from pathlib import Path

from tests.helpers.runs import small
from workbench.core.events import EvalDone, Note, Phase
from workbench.core.train.run_training import run_training


def _before(events: list) -> list[tuple[str, float, float]]:
    return [
        (e.split, e.bleu, e.chrf) for e in events if isinstance(e, EvalDone) and e.stage == "before"
    ]


def test_a_second_run_of_the_same_model_reuses_its_before_translations(tmp_path: Path):
    first: list = []
    assert run_training(small(tmp_path, "a", epochs=1.0), first.append).status == "finished"
    assert [e.detail for e in first if isinstance(e, Phase) and e.name == "before"] == [
        "translating 18 validation sentences",
        "translating 18 test sentences",
    ]
    second: list = []
    assert run_training(small(tmp_path, "b", epochs=1.0), second.append).status == "finished"
    assert not [e for e in second if isinstance(e, Phase) and e.name == "before"]
    notes = [e.text for e in second if isinstance(e, Note) and e.text.startswith("before:")]
    assert notes == [
        "before: validation translations cached (same model, sentences, decoding)",
        "before: test translations cached (same model, sentences, decoding)",
    ]
    assert _before(second) == _before(first)
    # Another decoding is another key: decoded again.
    third: list = []
    run_training(small(tmp_path, "c", epochs=1.0, max_new_tokens=8), third.append)
    assert len([e for e in third if isinstance(e, Phase) and e.name == "before"]) == 2
