"""A COMET model that cannot be scored with is one line naming the value and the fix, and
nothing is written half: ``workbench score`` prints no report, ``train --comet`` makes no
run folder. Each bad model is a real file made from a fixture model: cut short, foreign,
missing a weight, of a class not implemented, with a missing encoder."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from tests.helpers.comet import (
    GOOD,
    assert_one_line_error,
    break_class,
    copy_model,
    set_hparam,
)
from workbench.core.records.memory import MemoryPlan
from workbench.errors import WorkbenchError


def write_segments(tmp_path: Path) -> list[str]:
    (tmp_path / "hyp.zh").write_text("我喜欢喝茶。\n他来了。\n", encoding="utf-8")
    (tmp_path / "ref.zh").write_text("我爱喝茶。\n他来了。\n", encoding="utf-8")
    (tmp_path / "src.en").write_text("I like tea.\nHe came.\n", encoding="utf-8")
    return [
        "score",
        "--hyp",
        str(tmp_path / "hyp.zh"),
        "--ref",
        str(tmp_path / "ref.zh"),
        "--src",
        str(tmp_path / "src.en"),
    ]


def break_no_hparams(model: Path) -> None:
    (model / "hparams.yaml").unlink()


def break_truncated(model: Path) -> None:
    ckpt = model / "checkpoints" / "model.ckpt"
    ckpt.write_bytes(ckpt.read_bytes()[:20_000])


def break_foreign(model: Path) -> None:
    torch.save({"weights": torch.zeros(3)}, model / "checkpoints" / "model.ckpt")


def break_text_file(model: Path) -> None:
    (model / "checkpoints" / "model.ckpt").write_text("not a checkpoint\n", encoding="utf-8")


def break_missing_weight(model: Path) -> None:
    ckpt = model / "checkpoints" / "model.ckpt"
    data = torch.load(ckpt, map_location="cpu", weights_only=False)
    del data["state_dict"]["estimator.ff.3.weight"]
    torch.save(data, ckpt)


def break_unknown_class(model: Path) -> None:
    set_hparam(model, class_identifier="my_metric")


def break_encoder(model: Path) -> None:
    set_hparam(model, encoder_model="RemBERT")


def break_encoder_folder(model: Path) -> None:
    set_hparam(model, pretrained_model="../no-such-encoder")


def break_yaml(model: Path) -> None:
    (model / "hparams.yaml").write_text("class_identifier: [unclosed\n", encoding="utf-8")


@pytest.mark.parametrize(
    ("spoil", "expected"),
    [
        (break_no_hparams, ["holds no hparams.yaml", "checkpoints/model.ckpt"]),
        (break_truncated, ["is not a readable checkpoint", "download the model again"]),
        (break_text_file, ["is not a readable checkpoint"]),
        (break_foreign, ["is not a COMET checkpoint", "encoder.model.*"]),
        (break_missing_weight, ["lacks the weight 'estimator.ff.3.weight'", "download"]),
        (break_class, ["xCOMET", "xcomet_metric", "does not score"]),
        (break_unknown_class, ["'my_metric'", "does not implement"]),
        (break_encoder, ["encoder_model: 'RemBERT'", "XLM-RoBERTa"]),
        (break_encoder_folder, ["'../no-such-encoder'", "pretrained_model"]),
        (break_yaml, ["is not readable YAML"]),
    ],
    ids=lambda value: getattr(value, "__name__", "")[6:] or None,
)
def test_a_bad_comet_model_is_one_line_and_no_report(tmp_path: Path, spoil, expected):
    """In this process, as ``workbench score`` calls it (the CLI prints the error's one
    line; the tests below run it as a user does)."""
    from workbench.core.evaluate.system_scores import ScoreRequest, score_outputs

    model = copy_model(tmp_path)
    spoil(model)
    write_segments(tmp_path)
    request = ScoreRequest(
        hypotheses=[tmp_path / "hyp.zh"],
        references=tmp_path / "ref.zh",
        sources=tmp_path / "src.en",
        metrics=("bleu", "comet"),
        comet_model=str(model),
        qe_model="",
    )
    with pytest.raises(WorkbenchError) as info:
        score_outputs(request)
    message = str(info.value)
    assert "\n" not in message
    for text in expected:
        assert text in message, message


def test_a_bad_comet_model_through_the_cli_is_one_line_and_no_report(cli, tmp_path: Path):
    model = copy_model(tmp_path)
    break_truncated(model)
    done = cli(*write_segments(tmp_path), "--comet", str(model))
    assert_one_line_error(done, "is not a readable checkpoint", "download the model again")


def test_a_missing_folder_and_an_unfetchable_model_are_one_line(cli, tmp_path: Path):
    args = write_segments(tmp_path)
    done = cli(*args, "--comet", str(tmp_path / "nowhere"))
    assert_one_line_error(done, "does not exist", "hparams.yaml")
    done = cli(*args, "--comet")  # the default model, offline
    assert done.returncode == 3, done.stderr  # the Hub cannot be reached
    assert "COMET model 'Unbabel/wmt22-comet-da'" in done.stderr
    assert "HF_HUB_OFFLINE" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--metrics", "bleu,blue"], ["unknown metric 'blue'", "chrf++"]),
        (["--metrics", "comet", "--comet", str(GOOD)], []),  # needs --src: given, so fine
    ],
)
def test_metric_names_are_checked(cli, tmp_path: Path, args: list[str], expected: list[str]):
    done = cli(*write_segments(tmp_path), *args)
    if expected:
        assert_one_line_error(done, *expected)
    else:
        assert done.returncode == 0, done.stderr


def test_files_of_unequal_length_and_empty_files_are_refused(cli, tmp_path: Path):
    args = write_segments(tmp_path)
    (tmp_path / "short.zh").write_text("一\n", encoding="utf-8")
    (tmp_path / "empty.zh").write_text("", encoding="utf-8")
    done = cli(
        "score",
        "--hyp",
        str(tmp_path / "hyp.zh"),
        "--hyp",
        str(tmp_path / "short.zh"),
        "--ref",
        str(tmp_path / "ref.zh"),
    )
    line = assert_one_line_error(done, "short.zh", "has 1 lines", "has 2")
    assert "hyp.zh" in line
    done = cli("score", "--hyp", str(tmp_path / "hyp.zh"), "--ref", str(tmp_path / "short.zh"))
    assert_one_line_error(done, "reference file", "has 1 lines", "has 2")
    done = cli("score", "--hyp", str(tmp_path / "empty.zh"), "--ref", str(tmp_path / "ref.zh"))
    assert_one_line_error(done, "empty.zh", "is empty")
    done = cli(*args[:3], "--src", str(tmp_path / "src.en"), "--metrics", "comet")
    assert_one_line_error(done, "comet needs --ref")
    done = cli("score", "--hyp", str(tmp_path / "hyp.zh"))
    assert_one_line_error(done, "nothing to score", "--ref FILE", "--qe")


def training_plan(budget_gb: float, step_gb: float = 1.5) -> MemoryPlan:
    """A memory plan of a training step of ``step_gb`` (1 GB of it the runtime) against
    ``budget_gb``, as the run's plan holds them."""
    gb = 1e9
    return MemoryPlan(
        device="cpu", what="every weight", parameters=1, trainable=1, weights=(step_gb - 1) * gb,
        gradients=0, optimizer=0, activations=0, runtime=1.0 * gb, budget=budget_gb * gb,
        budget_source="(--memory-budget)", batch_size=16, lengths=(64, 64), precision="fp32",
        checkpointing=False,
    )  # fmt: skip


def test_a_scorer_that_cannot_fit_is_refused_before_training():
    """The memory plan counts the scorer from its config before anything is fetched: held
    against a budget it cannot fit, the run is refused in one line, with the way out;
    choosing the epoch, it is counted beside the training step."""
    from tests.helpers.runs import tiny_config
    from workbench.core.train.memory.plan import plan_scorer
    from workbench.core.views.memory_text import scorer_line

    fits = plan_scorer(tiny_config(comet=str(GOOD)), training_plan(8.0))
    assert fits is not None
    assert fits.parameters > 90_000
    assert "loaded once training has released its model, never beside it" in scorer_line(fits)
    with pytest.raises(WorkbenchError) as info:
        plan_scorer(tiny_config(comet=str(GOOD)), training_plan(0.5))
    message = str(info.value)
    assert f"COMET model '{GOOD}' will not fit" in message
    assert "against 0.50 GB (--memory-budget)" in message
    assert "leave --comet out" in message
    assert plan_scorer(tiny_config(), training_plan(8.0)) is None  # no --comet: no plan
    choosing = tiny_config(comet=str(GOOD), select_on="comet")
    beside = plan_scorer(choosing, training_plan(8.0))
    assert beside is not None
    assert beside.beside == pytest.approx(0.5e9)  # the step less its runtime
    assert "beside the training step" in scorer_line(beside)
    with pytest.raises(WorkbenchError) as info:
        plan_scorer(choosing, training_plan(1.12, step_gb=1.15))  # alone it would fit
    assert "beside the training step's 0.15 GB" in str(info.value)
    assert "select on bleu" in str(info.value)


def test_select_on_comet_needs_comet_and_no_bleu_weighing_options():
    from tests.helpers.runs import tiny_config

    for overrides, expected in (
        ({"select_on": "comet"}, "needs the COMET model"),
        ({"select_on": "comet", "comet": str(GOOD), "early_stopping": 2}, "--early-stopping"),
        ({"select_on": "chrf"}, "select_on 'chrf' is not a choice"),
    ):
        with pytest.raises(WorkbenchError) as info:
            tiny_config(**overrides)
        assert expected in str(info.value)


def test_a_checkpoint_naming_other_classes_is_read_and_one_naming_a_missing_module_said(
    tmp_path: Path,
):
    """Lightning's checkpoints load as plain tensors and containers (nothing runs); one
    whose settings hold another class (a path object here) is read as unbabel-comet reads
    it, since the user named the model; one naming a module that is not installed is one
    line naming it."""
    import pathlib
    import sys
    import types

    from workbench.core.comet.checkpoint import read_checkpoint

    plain = read_checkpoint(GOOD / "checkpoints" / "model.ckpt")
    model = copy_model(tmp_path)
    ckpt = model / "checkpoints" / "model.ckpt"
    data = torch.load(ckpt, map_location="cpu", weights_only=False)
    data["hyper_parameters"]["train_data"] = [pathlib.PurePosixPath("data/train.csv")]
    torch.save(data, ckpt)
    with pytest.raises(Exception, match="Weights only load failed"):
        torch.load(ckpt, map_location="cpu", weights_only=True)
    read = read_checkpoint(ckpt)
    assert read.state_dict.keys() == plain.state_dict.keys()

    stub = types.ModuleType("lightning_stub_for_a_test")

    class Kept:  # stands for a class of a package the scoring machine lacks
        pass

    Kept.__module__, Kept.__qualname__ = stub.__name__, "Kept"
    stub.Kept = Kept  # type: ignore[attr-defined]
    sys.modules[stub.__name__] = stub
    try:
        data["loops"] = Kept()
        torch.save(data, ckpt)
    finally:
        del sys.modules[stub.__name__]
    with pytest.raises(WorkbenchError) as info:
        read_checkpoint(ckpt)
    assert "names the Python module 'lightning_stub_for_a_test', which is not installed" in str(
        info.value
    )


def test_python_tags_in_hparams_yaml_are_read_as_text_and_run_nothing(tmp_path: Path):
    """A COMET trained on files writes its paths with PyYAML's Python tags; they are read
    as text (no object is built), and the model scores as before."""
    from workbench.core.comet.scorer import load_scorer

    model = copy_model(tmp_path)
    path = model / "hparams.yaml"
    path.write_text(
        path.read_text(encoding="utf-8")
        + "train_data:\n- !!python/object/apply:os.system\n  - echo planted > planted.txt\n",
        encoding="utf-8",
    )
    texts = (["I like tea."], ["我喜欢茶。"], ["我爱茶。"])
    got = load_scorer(str(model), device="cpu").score(*texts)
    assert got == load_scorer(str(GOOD), device="cpu").score(*texts)
    assert not (tmp_path / "planted.txt").exists()
    assert not Path("planted.txt").exists()


def test_a_comet_model_failing_at_the_end_of_a_run_costs_it_nothing_and_says_why(
    tmp_path: Path,
):
    """The run's scores and sentences come back as they were, with one warning; and a
    failure's text never carries a password, whoever raised it."""
    from workbench.core.data.pair import Pair
    from workbench.core.decoding import DecodeOptions
    from workbench.core.evaluate.before_after import HeldOutSets
    from workbench.core.evaluate.comet_sets import add_comet
    from workbench.core.events import Note
    from workbench.errors import failure_text

    model = copy_model(tmp_path)
    break_truncated(model)
    pairs = [Pair("I like tea.", "我喜欢茶。")]
    sets = HeldOutSets({"test": pairs}, {"test": "one pair"}, DecodeOptions(1, 8), 1, "zh")
    notes: list[object] = []
    scores: dict = {"test": object()}
    rows: dict = {"test": []}
    kept = add_comet(
        sets, {"test": ["茶"]}, {"test": ["我喜欢茶。"]}, scores, rows, str(model), "cpu",
        notes.append,
    )  # fmt: skip
    assert kept == (scores, rows)
    (warning,) = [n for n in notes if isinstance(n, Note)]
    assert warning.level == "warning"
    assert "COMET was not scored: '" in warning.text
    assert "is not a readable checkpoint" in warning.text
    leaked = RuntimeError("GET https://ann:s3cret@mirror.example/x failed")
    assert failure_text(leaked) == "RuntimeError: GET https://ann:***@mirror.example/x failed"
