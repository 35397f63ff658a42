"""MBR picks and expected utilities equal mbrs 0.1.8's own, on candidate lists with
duplicates (tests/fixtures/mbrs/, built by mbrs's DecoderMBR in its own venv)."""

from __future__ import annotations

import json
import random
from dataclasses import replace

import pytest

from tests.helpers.paths import FIXTURES
from workbench.core.picking.mbr import pruned_mbr
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


def test_pruned_mbr_keeps_the_full_pick_and_its_figure_on_these_lists():
    for case in CASES:
        candidates = Candidates.of(case["source"], case["candidates"])
        full = Picker("mbr", chrf_metric()).pick(candidates)
        pruned = Picker("mbr", chrf_metric(), pruned=True).pick(candidates)
        assert pruned.translation == full.translation
        assert pruned.score == pytest.approx(full.score, abs=1e-9)
        assert pruned.picked_by == "mbr-pruned:chrF"


def sixty_four_distinct() -> list[str]:
    """64 distinct candidates of one source, as a sampler's would be: shared words, varied."""
    rng = random.Random(0)
    words = [
        "the",
        "a",
        "cat",
        "dog",
        "sat",
        "lay",
        "on",
        "under",
        "mat",
        "rug",
        "house",
        "garden",
        "quietly",
        "today",
    ]
    drawn: dict[str, None] = {}
    while len(drawn) < 64:
        drawn[" ".join(rng.choice(words) for _ in range(rng.randint(4, 9)))] = None
    return list(drawn)


def test_pruning_starts_at_eight_pseudo_references_as_mbrs_does():
    """mbrs's DecoderPruningMBR schedules 8, 16, 32, 64: the first batch scores every
    candidate against the first 8 of the shuffled list."""
    chrf = chrf_metric()
    batches: list[int] = []

    def score(sources, hypotheses, references):
        batches.append(len(hypotheses))
        return chrf.score(sources, hypotheses, references)

    texts = sixty_four_distinct()
    pruned_mbr(replace(chrf, score=score), "src", texts, [1] * 64)
    assert batches[0] == 64 * 8


@pytest.mark.parametrize("utility", ["chrf", "bleu"])
def test_pruned_mbr_at_64_candidates_keeps_the_full_pick_and_its_figure(utility):
    """mbrs's pruning is deterministic given its seed, but its bootstrap draws from torch's
    generator and ours from numpy's: which candidates survive each step agrees in
    distribution, not resample by resample, so no fixture of mbrs's pruned run can be
    matched exactly. What both promise is the full MBR's pick with its full expected
    utility (the survivors are scored against every pseudo-reference), and full MBR is
    held to mbrs's figures above; so pruned is held to full here, at mbrs's N = 64."""
    distinct = sixty_four_distinct()
    drawn = distinct[:48] + distinct[:16]  # 64 drawn, 48 distinct: duplicates weigh too
    metric = chrf_metric() if utility == "chrf" else bleu_metric()
    candidates = Candidates.of("src", drawn)
    full = Picker("mbr", metric).pick(candidates)
    for seed in range(3):
        pruned = Picker("mbr", metric, pruned=True, seed=seed).pick(candidates)
        assert pruned.translation == full.translation
        assert pruned.score == pytest.approx(full.score, abs=1e-9)
        assert sum(c.score is None for c in pruned.candidates) > 0  # pruning pruned
