"""MBR picks and expected utilities equal mbrs 0.1.8's own, on candidate lists with
duplicates (tests/fixtures/mbrs/, built by mbrs's DecoderMBR in its own venv)."""

from __future__ import annotations

import json

import pytest

from tests.helpers.paths import FIXTURES
from workbench.core.picking.metrics import bleu_metric, chrf_metric
from workbench.core.picking.picks import Candidates, Picker

EXPECTED = json.loads((FIXTURES / "mbrs" / "expected.json").read_text(encoding="utf-8"))
CASES = EXPECTED["cases"]


def metric_for(utility: str, case: dict):
    if utility == "chrf":
        return chrf_metric()
    return bleu_metric("zh" if case["target_lang"] == "zh" else "13a")


@pytest.mark.parametrize("utility", sorted(EXPECTED["results"]))
def test_full_mbr_picks_and_expected_utilities_are_mbrs(utility):
    for case, result in zip(CASES, EXPECTED["results"][utility], strict=True):
        drawn = case["candidates"]
        pick = Picker("mbr", metric_for(utility, case)).pick(Candidates.of(case["source"], drawn))
        assert pick.translation == result["picked_text"]
        assert pick.picked_by == f"mbr:{'chrF' if utility == 'chrf' else 'BLEU'}"
        ours = {c.text: c.score for c in pick.candidates}
        for text, theirs in zip(drawn, result["expected_utilities"], strict=True):
            assert ours[text] == pytest.approx(theirs, abs=1e-9), text
        assert sum(c.count for c in pick.candidates) == len(drawn)


def test_the_float32_run_of_mbrs_picks_the_same():
    for rows in EXPECTED["results"].values():
        for case, row in zip(CASES, rows, strict=True):
            assert case["candidates"][row["picked_float32"]] == row["picked_text"]


def test_pruned_mbr_keeps_the_full_pick_and_its_figure_on_these_lists():
    for case in CASES:
        candidates = Candidates.of(case["source"], case["candidates"])
        full = Picker("mbr", chrf_metric()).pick(candidates)
        pruned = Picker("mbr", chrf_metric(), pruned=True).pick(candidates)
        assert pruned.translation == full.translation
        assert pruned.score == pytest.approx(full.score, abs=1e-9)
        assert pruned.picked_by == "mbr-pruned:chrF"
