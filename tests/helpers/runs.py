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


def tiny_toml(**values) -> str:
    """TINY_RUN_SETTINGS with ``values`` on top, written as TOML."""
    merged = {**TINY_RUN_SETTINGS, **values}
    return "".join(f"{key} = {value!r}\n" for key, value in merged.items())


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
