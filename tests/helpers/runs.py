"""The tiny run every training test uses: its model and run settings, as a RunConfig or a
TOML file, a finished run's output folder copied as if trained where it lies, and every
path a run folder names."""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from workbench.core.run_folder.layout import RunFolder
    from workbench.core.train.run_training import RunResult


#: The tiny model every test run trains: a 1-layer, 32-wide Marian, decoding 16 tokens.
TINY_MODEL_SETTINGS = {
    "scratch_d_model": 32,
    "scratch_layers": 1,
    "scratch_heads": 2,
    "scratch_ffn_dim": 64,
    "scratch_source_vocab": 400,
    "scratch_target_vocab": 2000,
    "max_new_tokens": 16,
}


#: Settings for a demo run of a few seconds, as a --config TOML file for subprocess tests.
TINY_RUN_SETTINGS = {
    "samples": 180,
    "learning_rate": 3e-3,
    "batch_size": 16,
    "logging_steps": 1,
    **TINY_MODEL_SETTINGS,
}


def tiny_config(**overrides):
    """The demo preset shrunk to seconds: the model of TINY_RUN_SETTINGS, greedy."""
    from workbench.core.config.build import build_config

    return build_config("demo", overrides={**TINY_MODEL_SETTINGS, "num_beams": 1, **overrides})


def small(tmp_path: Path, name: str = "out", **extra):
    """tiny_config for an in-process 2-epoch run of a few seconds, outputs in tmp_path/name."""
    values = dict(
        samples=180,
        epochs=2.0,
        batch_size=16,
        logging_steps=2,
        learning_rate=3e-3,
        output_dir=str(tmp_path / name),
    )
    values.update(extra)
    return tiny_config(**values)


def from_model(tmp_path: Path, model: str, name: str = "out", **extra):
    """:func:`small` starting from a saved ``model`` (not the demo's scratch one): a
    gentler step, short lengths and a short decode, for a run of a few seconds."""
    values = dict(
        model=model,
        learning_rate=1e-3,
        max_source_length=32,
        max_target_length=32,
        max_new_tokens=8,
    )
    return small(tmp_path, name, **{**values, **extra})


def step_losses(into: list):
    """An event sink that appends each training step's (step, loss) to ``into``."""
    from workbench.core.events import TrainStep

    return lambda e: into.append((e.step, e.loss)) if isinstance(e, TrainStep) else None


def tiny_toml(**values) -> str:
    """TINY_RUN_SETTINGS with ``values`` on top, written as TOML (``true``, not Python's
    ``True``)."""
    merged = {**TINY_RUN_SETTINGS, **values}

    def written(value) -> str:
        return str(value).lower() if isinstance(value, bool) else repr(value)

    return "".join(f"{key} = {written(value)}\n" for key, value in merged.items())


def copy_output(source: Path, target: Path) -> None:
    """The output folder ``source`` copied to ``target`` as if its runs had been trained
    there: the paths its JSON files hold (summaries, configs, workbench.json, metrics,
    checkpoint states) name the copy."""
    shutil.copytree(source, target)
    for path in target.rglob("*.json*"):  # .json and .jsonl
        text = path.read_text(encoding="utf-8")
        path.write_text(text.replace(str(source), str(target)), encoding="utf-8")


@dataclass
class FinishedRun:
    """The shared finished run: what run_training returned, every event it sent, and the
    pairs the Trainer was handed to train and validate on."""

    result: RunResult
    events: list[Any]
    handed: dict[str, list[Any]]

    def copy_to(self, output: Path) -> Path:
        """Its output folder copied to ``output`` (see :func:`copy_output`); the copy's run
        folder."""
        copy_output(Path(self.result.run_dir).parents[1], output)
        return output / "runs" / Path(self.result.run_dir).name


def three_run_folders(output: Path) -> Path:
    """Three run folders under ``output`` as the workbench writes them: finished, stopped,
    killed early (tests/unit/test_experiments.py reads them, and ``workbench runs``);
    returns ``output``."""
    from tests.helpers.data import scores_block
    from workbench.core.atomic import write_json
    from workbench.core.config.build import build_config
    from workbench.core.records.run_records import EpochLog
    from workbench.core.records.scores import SetScores
    from workbench.core.records.summary import RunSummary
    from workbench.core.run_folder.layout import RunFolder
    from workbench.core.run_folder.summary_file import write_summary

    runs = output / "runs"
    finished, stopped, killed = (
        runs / name
        for name in ("20260101-100000-demo", "20260101-110000-demo", "20260101-120000-demo")
    )
    for folder, overrides in (
        (finished, {"epochs": 4}),
        (stopped, {"learning_rate": 5e-4}),
        (killed, {}),
    ):
        folder.mkdir(parents=True)
        write_json(
            RunFolder(folder).config,
            {**build_config("demo", overrides=overrides).to_dict(), "precision": {"device": "cpu"}},
        )
    finished_summary = RunSummary(
        status="finished",
        preset="demo",
        global_step=120,
        train_seconds=75.0,
        test=SetScores.from_dict(scores_block("test", (0.02, 9.5), (0.1, 10.2))),
        validation=SetScores.from_dict(scores_block("validation", (0.01, 8.7), (0.1, 9.9))),
        epochs=[
            EpochLog(epoch=1.0, eval_bleu=3.0),
            EpochLog(epoch=2.0, eval_bleu=9.0),
            EpochLog(epoch=3.0, eval_bleu=9.0),
            EpochLog(epoch=4.0, eval_bleu=8.0),
        ],
    )
    write_summary(finished, finished_summary)
    write_summary(
        stopped, RunSummary(status="stopped", preset="demo", global_step=40, train_seconds=20.0)
    )
    return output


def recorded_compare_runs(output: Path) -> list[str]:
    """The recorded runs A, B and C of tests/fixtures/compare_runs copied into ``output``'s
    runs/ (A and B share a test set, C draws another); their names, A first."""
    from tests.fixtures.record_tiny_run import COMPARE_RUNS, COMPARE_TARGET

    for name in COMPARE_RUNS:
        shutil.copytree(COMPARE_TARGET / name, output / "runs" / name)
    return list(COMPARE_RUNS)


def named_paths(folder: RunFolder) -> list[Path]:
    """Every path ``folder`` names inside itself: each path-valued property, each held-out
    split's translations, each Lab study and each report figure."""
    from workbench.core.run_folder.layout import LAB_FILES, REPORT_FIGURES, RunFolder

    properties = [name for name, value in vars(RunFolder).items() if isinstance(value, property)]
    return [
        *(
            path
            for name in properties
            if isinstance(path := getattr(folder, name), Path) and path.parent == folder.path
        ),
        *(folder.translations(split) for split in ("test", "validation")),
        *(folder.lab_study(study) for study in LAB_FILES),
        *(folder.report_figure(key) for key in REPORT_FIGURES),
    ]
