"""The decoding-strategy study (workbench.core.lab.decoding_run, decoding_strategies) on a
tiny model, with its quality-aware arms (picked_arms)."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from tests.helpers.lab import SENTENCES
from workbench.core.decoding import DecodeOptions
from workbench.core.lab.decoding_run import decoding_study
from workbench.core.lab.decoding_strategies import (
    STRATEGIES,
    DecodingStudy,
    Strategy,
    findings,
    repeats_itself,
)
from workbench.core.records.typed import decode
from workbench.core.translate.translator import Translator
from workbench.errors import WorkbenchError


def test_sampling_with_a_fixed_seed_is_reproducible(tiny_model_dir: Path):
    import torch

    translator = Translator.from_pretrained(str(tiny_model_dir), backend="transformers")
    options = Strategy("t", do_sample=True, temperature=1.3).options(DecodeOptions(1, 12))
    outputs = []
    for seed in (5, 5, 6):
        torch.manual_seed(seed)
        outputs.append(translator.translate_many(SENTENCES, options))
    assert outputs[0] == outputs[1]  # same seed, same sentences
    assert outputs[0] != outputs[2]  # another seed draws other words


def test_beam_one_is_greedy(tiny_model_dir: Path):
    translator = Translator.from_pretrained(str(tiny_model_dir), backend="transformers")
    base = DecodeOptions(4, 12)
    greedy = Strategy("greedy").options(base)
    assert greedy.num_beams == 1
    assert not greedy.do_sample
    one_beam = Strategy("beam 1", num_beams=1).options(base)
    assert translator.translate_many(SENTENCES, greedy) == translator.translate_many(
        SENTENCES, one_beam
    )


def test_the_study_scores_every_strategy_and_says_what_it_found(run_with_model):
    run, model = run_with_model
    strategies = [
        STRATEGIES[0],
        STRATEGIES[1],
        Strategy("temp 1.3", do_sample=True, temperature=1.3),
    ]
    seen = []
    study = decoding_study(
        str(model),
        limit=4,
        strategies=strategies,
        on_progress=lambda name, done, total: seen.append((name, done)),
    )
    assert study.size == 4
    assert Path(study.run_dir).resolve() == run.resolve()
    assert [r.name for r in study.results] == ["greedy", "beam 2", "temp 1.3"]
    greedy, _, sampled = study.results
    assert greedy.bleu_p == 1.0
    assert len(greedy.example) == 1
    assert greedy.varies == 0
    assert len(sampled.bleu_seeds) == 3
    assert len(sampled.example) == 3
    for r in study.results:
        assert r.bleu_ci[0] <= r.bleu_ci[1]
        assert 0 <= r.distinct <= 1
        assert r.ms_per_sentence > 0
    assert seen[0] == ("greedy", 0)
    assert seen[-1] == ("scoring", 5)
    text = findings(study)
    assert "On these 4 test sentences the highest BLEU is" in text
    assert json.loads(json.dumps(study.to_dict()))["findings"] == text
    # Written and read typed: the report renders from what this reads back.
    notes: list[str] = []
    assert decode(DecodingStudy, json.loads(json.dumps(study.to_dict())), notes) == study
    assert notes == []  # what the file adds (spread, findings) is derived again, not unknown
    damaged = {**study.to_dict(), "results": [{"name": "greedy"}]}
    read = decode(DecodingStudy, damaged, notes, "lab_decoding.json")
    assert read is not None
    assert read.results == []
    assert "lab_decoding.json.results[0]: no 'sampled'; the record is read as missing" in notes


def test_a_stop_ends_the_study_between_two_decodes(run_with_model):
    _, model = run_with_model
    stop = threading.Event()
    stop.set()
    with pytest.raises(WorkbenchError, match="stopped before it finished"):
        decoding_study(str(model), limit=2, stop=stop)


def test_repeated_ngrams_are_counted_in_characters_for_chinese():
    assert repeats_itself("我喜欢我喜欢茶")
    assert not repeats_itself("我喜欢喝茶。")
    assert repeats_itself("the cat the cat the cat")
    assert not repeats_itself("the cat sat")


def test_the_quality_aware_arms_pick_among_one_set_of_candidates_and_say_their_cost(
    run_with_model,
):
    """Each arm leads with a metric that did not pick it, marks the one that did, and
    states its time against beam search's; its pick is what picking those candidates
    gives."""
    from tests.helpers.paths import FIXTURES
    from workbench.core.lab.picked_arms import pick_arms
    from workbench.core.lab.text import decoding_text
    from workbench.core.translate.candidates import generate_candidates

    _, model = run_with_model
    arms = pick_arms(4, qe_model=str(FIXTURES / "comet" / "unified-kiwi"))
    strategies = [STRATEGIES[0], Strategy("beam 4", num_beams=4)]
    study = decoding_study(str(model), limit=4, strategies=strategies, picks=arms)
    assert [r.name for r in study.results] == ["greedy", "beam 4"]  # the arms apart
    chrf, bleu, qe = study.picks
    assert [r.name for r in study.picks] == ["mbr chrF N=4", "mbr BLEU N=4", "qe N=4"]
    assert (chrf.picked_by, chrf.metric, chrf.leading) == ("mbr:chrF", "chrF", "BLEU")
    assert (bleu.picked_by, bleu.metric, bleu.leading) == ("mbr:BLEU", "BLEU", "chrF")
    assert qe.picked_by.startswith("qe:")
    assert qe.leading == "BLEU"
    beam_ms = study.results[1].ms_per_sentence
    for arm in study.picks:
        assert arm.candidates == 4
        assert 1 <= arm.distinct <= 4
        assert arm.ms_per_sentence >= arm.scoring_ms_per_sentence >= 0
        assert arm.candidates_per_second > 0
        assert arm.times_beam == pytest.approx(arm.ms_per_sentence / beam_ms, rel=0.02)
        assert arm.bleu_ci[0] <= arm.bleu <= arm.bleu_ci[1]
        assert arm.chrf_p is not None
        assert 0 < arm.chrf_p <= 1

    # The arm's pick of the first sentence is what picking its candidates afresh gives.
    translator = Translator.from_pretrained(str(model), backend="transformers")
    (candidates,) = generate_candidates(translator, [SENTENCES[0]], arms[0].pick.candidates)
    picker = arms[0].pick.picker(translator)
    assert chrf.example == [picker.pick(candidates).translation]

    text = decoding_text(study)
    rows = {line.split("  ")[0]: line for line in text.splitlines() if " N=4 " in line}
    assert rows["mbr chrF N=4"].split()[3] == "BLEU"  # leads with the metric that did not pick
    assert "chrF (used to pick)" in rows["mbr chrF N=4"]
    assert rows["mbr BLEU N=4"].split()[3] == "chrF"
    assert "BLEU (used to pick)" in rows["mbr BLEU N=4"]
    assert f"{chrf.times_beam:.1f}×" in rows["mbr chrF N=4"]
    # A neural picker is named as the one that picked; no surface score is put under it.
    assert f"{qe.metric} (used to pick)" in rows["qe N=4"]
    assert f"{qe.chrf:.2f}" not in rows["qe N=4"].split("(used to pick)")[1].split()[0]
    said = findings(study)
    assert f"mbr chrF N=4 reaches BLEU {chrf.bleu:.2f}" in said
    assert f"with chrF {chrf.chrf:.2f} (used to pick)" in said
    assert f"qe N=4 reaches BLEU {qe.bleu:.2f} (greedy: " in said
    assert f"and chrF {qe.chrf:.2f}, picked by {qe.metric} (used to pick)" in said

    notes: list[str] = []
    assert decode(DecodingStudy, json.loads(json.dumps(study.to_dict())), notes) == study
    assert notes == []
    earlier = {k: v for k, v in study.to_dict().items() if k != "picks"}  # before the arms
    read = decode(DecodingStudy, earlier, notes)
    assert read is not None
    assert read.picks == []
    assert notes == []
