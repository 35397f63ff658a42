"""``train --objective``: its settings checked in one line, the ranker's pick (the run's
ceiling), the starting model kept apart from the folder the run publishes to, the ranked
verdict's wording, and what the memory plan adds for preference pairs and DPO."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from tests.helpers.runs import tiny_config
from workbench.core.records.memory import GB
from workbench.core.records.objective_record import ObjectiveRecord
from workbench.core.records.picked_scores import PickedScores
from workbench.core.records.run_records import Precision
from workbench.core.records.scores import MetricChange, SetScores
from workbench.core.train.objective import Objective, starting_model
from workbench.core.views.ranked_text import ceiling_lines, ranked_headline, ranked_more
from workbench.errors import WorkbenchError

CPU = Precision("cpu", "fp32", False)


def config(**values):
    return tiny_config(**{"model": "Helsinki-NLP/opus-mt-en-zh", **values})


@pytest.mark.parametrize(
    ("values", "said"),
    [
        ({"objective": "cpo", "model": "scratch"}, "starts from a trained model, not --model"),
        ({"objective": "dpo"}, "--objective dpo needs --rank-by (qe, metricx-qe"),
        ({"objective": "ppo", "rank_by": "chrf"}, "--objective must be one of sft, best, cpo, dpo"),
        ({"objective": "cpo", "rank_by": "rouge"}, "--rank-by must be one of qe, metricx-qe"),
        ({"rank_by": "chrf"}, "--rank-by chrf ranks candidates for --objective best, cpo or dpo"),
        ({"objective": "best", "rank_by": "chrf", "candidates": 1}, "--candidates must be 2..64"),
        ({"objective": "cpo", "rank_by": "chrf", "beta": 0.0}, "--beta must be above 0, got 0"),
        ({"objective": "cpo", "rank_by": "bleu", "nll_weight": -1.0}, "--nll-weight must be 0"),
    ],
)
def test_a_wrong_objective_setting_is_one_line_naming_the_value_and_the_fix(values, said):
    with pytest.raises(WorkbenchError) as raised:
        Objective.of(config(**values))
    assert said in str(raised.value)
    assert "\n" not in str(raised.value)


def test_sft_has_no_objective_to_rank_for():
    assert Objective.of(config()) is None


@pytest.mark.parametrize(
    ("rank_by", "method", "metric"),
    [
        ("qe", "qe", "cometkiwi"),
        ("metricx-qe", "qe", "metricx"),
        ("chrf", "mbr", "chrf"),
        ("bleu", "mbr", "bleu"),
        ("comet", "mbr", "comet"),
        ("metricx", "mbr", "metricx"),
    ],
)
def test_each_ranker_is_the_metric_of_the_pick_that_is_the_runs_ceiling(rank_by, method, metric):
    """A reference-free ranker is QE reranking's metric; a reference-based one is MBR's
    utility at decoding time, where no reference may be used."""
    objective = Objective.of(config(objective="cpo", rank_by=rank_by, candidates=6, seed=7))
    assert objective is not None
    pick = objective.ceiling
    assert pick.method == method
    assert (pick.qe_metric if method == "qe" else pick.utility) == metric
    assert (objective.candidates.count, objective.candidates.seed) == (6, 7)
    assert objective.needs_reference == (method == "mbr")
    assert objective.preference


def test_the_neural_rankers_use_the_runs_own_models():
    kiwi = Objective.of(config(objective="best", rank_by="qe", qe_model="/models/kiwi"))
    comet = Objective.of(config(objective="dpo", rank_by="comet", comet="/models/comet"))
    metricx = Objective.of(config(objective="cpo", rank_by="metricx-qe", metricx="/models/mx"))
    assert kiwi is not None
    assert kiwi.ceiling.qe_model == "/models/kiwi"
    assert comet is not None
    assert comet.ceiling.utility_model == "/models/comet"
    assert metricx is not None
    assert metricx.ceiling.qe_model == "/models/mx"


def published_demo(root: Path, keep_own_copy: bool = True) -> Path:
    """An output folder as the demo leaves it: a run's own best model, and the published
    copy whose workbench.json names that run (relative to the working folder)."""
    run = root / "translation_output" / "runs" / "20261205-230226-demo"
    if keep_own_copy:
        (run / "best_model").mkdir(parents=True)
    published = root / "translation_output" / "best_model"
    published.mkdir(parents=True)
    settings = {"run_dir": "translation_output/runs/20261205-230226-demo"}
    (published / "workbench.json").write_text(json.dumps(settings))
    return run


def test_a_run_from_the_published_best_model_starts_from_its_runs_own_copy(tmp_path, monkeypatch):
    run = published_demo(tmp_path)
    monkeypatch.chdir(tmp_path)
    given = config(objective="cpo", rank_by="chrf", model="translation_output/best_model")
    given = dataclasses.replace(given, output_dir="translation_output")
    started, line = starting_model(given)
    assert Path(started.model).resolve() == (run / "best_model").resolve()
    assert line is not None
    assert "which this run replaces" in line
    # sft, or a model this run does not publish to, is left as given
    assert starting_model(dataclasses.replace(given, objective="sft", rank_by=None))[1] is None
    elsewhere = dataclasses.replace(given, output_dir=str(tmp_path / "other"))
    assert starting_model(elsewhere) == (elsewhere, None)


def test_a_published_model_whose_run_kept_no_copy_is_refused(tmp_path, monkeypatch):
    published_demo(tmp_path, keep_own_copy=False)
    monkeypatch.chdir(tmp_path)
    given = config(objective="dpo", rank_by="chrf", model="translation_output/best_model")
    with pytest.raises(WorkbenchError, match="kept no copy of its own; copy the folder"):
        starting_model(dataclasses.replace(given, output_dir="translation_output"))


def change(metric, before, after, p=0.01, lower=False, model=None) -> MetricChange:
    return MetricChange(
        metric=metric, before=before, after=after, before_ci=[before - 1, before + 1],
        after_ci=[after - 1, after + 1], delta=after - before,
        delta_ci=[after - before - 0.5, after - before + 0.5], p=p, test="paired bootstrap",
        lower_is_better=lower, model=model,
    )  # fmt: skip


def set_scores(**more) -> SetScores:
    return SetScores(
        role="test", name="10% held out, seed 42", size=424, bleu_before=13.6,
        bleu_after=14.6, chrf_before=13.67, chrf_after=15.0, bleu_before_ci=[12, 15],
        bleu_after_ci=[13, 16], chrf_before_ci=[12.5, 14.8], chrf_after_ci=[14, 16],
        bleu_delta=1.0, bleu_delta_ci=[0.2, 1.8], bleu_p=0.02, chrf_delta=1.33,
        chrf_delta_ci=[0.6, 2.0], chrf_p=0.001, n_bootstrap=1000, bleu_signature="tok:zh",
        **more,
    )  # fmt: skip


def test_the_ranker_is_marked_and_never_leads_the_line_users_hand_in():
    scores = set_scores()
    line = ranked_headline(scores, "chrF")
    assert line.startswith("test (10% held out, seed 42, 424): BLEU 13.60 → 14.60")
    assert "· chrF (used to rank) 13.67 → 15.00" in line
    by_bleu = ranked_headline(scores, "BLEU")
    assert by_bleu.startswith("test (10% held out, seed 42, 424): chrF 13.67 → 15.00")
    assert "BLEU (used to rank)" in by_bleu
    more = ranked_more(scores, "chrF")
    assert any("BLEU leads, as a surface metric that did not rank" in m for m in more)
    reading = [m for m in more if m.startswith("what humans would say")]
    assert len(reading) <= 1
    assert all("on BLEU, the lead judge" in m for m in reading)


def test_a_neural_judge_of_another_family_leads_a_run_ranked_by_comet():
    metricx = change("MetricX-24", 6.0, 5.0, lower=True, model="google/metricx-24")
    comet = change("COMET-22", 80.0, 82.0, model="Unbabel/wmt22-comet-da")
    scores = set_scores(comet=comet, metricx=metricx)
    line = ranked_headline(scores, "COMET-22")
    assert line.startswith("test (10% held out, seed 42, 424): MetricX-24")
    assert "BLEU 13.60" in line
    assert "chrF 13.67" in line
    assert "COMET" not in line
    more = ranked_more(scores, "COMET-22")
    assert any(m.startswith("COMET-22 (used to rank) (Unbabel") for m in more)


def test_the_ceiling_says_how_much_of_the_picks_gain_beam_search_kept():
    picked = PickedScores(
        picked_by="mbr:chrF", metric="chrF", candidates=8, candidates_from="sample",
        changes=[change("BLEU", 13.6, 15.6), change("chrF", 13.67, 16.0)],
        n_bootstrap=1000, size=424, distinct=0.9,
    )  # fmt: skip
    record = ObjectiveRecord("cpo", "chrf", ranker="chrF", ceiling=picked)
    lines = ceiling_lines(record, set_scores())
    assert lines[0].startswith("ceiling: the starting model picking by mbr:chrF among 8")
    assert "BLEU 13.60 → 15.60" in lines[0]
    assert lines[1] == "the tuned model kept 50% of that gain with beam search alone (BLEU)"


def test_preference_pairs_double_the_steps_rows_and_dpo_holds_a_frozen_copy():
    from transformers import AutoConfig

    from tests.helpers.memory import NLLB_3B_CONFIG
    from workbench.core.train.memory.plan import estimate

    shape = AutoConfig.from_pretrained(NLLB_3B_CONFIG)
    budget = (80 * GB, "(--memory-budget)")
    base = {"model": "x", "batch_size": 8, "rank_by": "chrf"}
    sft = estimate(tiny_config(**{**base, "rank_by": None}), shape, CPU, budget)
    twice = tiny_config(**{**base, "batch_size": 16, "rank_by": None})
    double = estimate(twice, shape, CPU, budget)
    cpo = estimate(tiny_config(**base, objective="cpo"), shape, CPU, budget)
    dpo = estimate(tiny_config(**base, objective="dpo"), shape, CPU, budget)
    dpo_lora = estimate(tiny_config(**base, objective="dpo", lora=True), shape, CPU, budget)
    assert cpo.activations == double.activations > sft.activations
    assert cpo.batch_size == 8
    assert cpo.reference == 0
    assert dpo.reference == 4 * dpo.parameters
    assert dpo.total == cpo.total + dpo.reference
    assert dpo_lora.reference == 0
