"""What a run leaves in its folder, named once: :class:`RunFolder`.

Every module that writes or reads a run's file takes its name from here, so "what does a
run leave?" has one answer, and `docs/runs.md`'s list of outputs can be checked against it.
The typed readers of these files live beside the records they read
(:mod:`workbench.core.records`); this module only names the files and imports nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

#: The folder under the output folder that holds one folder per run.
RUNS_FOLDER = "runs"
#: A run's settings as it ran them, with two records beside them (``precision``, ``cleaning``).
CONFIG_FILE = "config.json"
#: Every progress event as one JSON line, written as it happens.
METRICS_FILE = "metrics.jsonl"
#: What a run did and scored (:class:`~workbench.core.records.summary.RunSummary`).
SUMMARY_FILE = "summary.json"
#: The "before" scores and translations, kept so a resumed run does not decode them again.
BEFORE_FILE = "before.json"
#: The run's lines, as ``train --headless`` prints them, whoever started the run.
LOG_FILE = "train.log"
#: Held (flock) by the one process that writes into the run folder.
WRITER_LOCK_FILE = "writer.lock"
#: Who that writer is: host, pid, start time, heartbeat.
WRITER_RECORD_FILE = "writer.json"
#: A front end's request that the run stop at its next step (``workbench stop``, ``x``).
STOP_REQUEST_FILE = "stop.request"
#: The pairs cleaning dropped, each with the rule that dropped it (also in a prepared cache).
DROPPED_PAIRS_FILE = "dropped_pairs.jsonl"
#: A scratch run's untrained model (the "before" side in the console and the report).
INITIAL_MODEL = "initial_model"
#: The run's best model (in its folder), and the published copy (in the output folder).
BEST_MODEL = "best_model"
#: The average of the best or last checkpoints, kept when it does not beat the best one.
AVERAGED_MODEL = "averaged_model"
#: The Trainer's ``checkpoint-N`` folders.
CHECKPOINTS_FOLDER = "checkpoints"
#: Every console translation, appended in the *output* folder (the report reads it back).
HISTORY_FILE = "console_history.jsonl"
#: A saved model's transformers config (``CONFIG_NAME``): a model folder's file, named
#: like a run's settings.
MODEL_CONFIG_FILE = CONFIG_FILE
#: Attention views the report draws, kept with the stamp of the model they came from.
HEATMAPS_FILE = "attention_heatmaps.json"
#: The Lab's studies a run folder may hold, each written by ``workbench lab <study>``.
LAB_FILES = {
    "decoding": "lab_decoding.json",
    "cache": "lab_cache.json",  # the KV-cache study
    "attention": "lab_attention.json",
    "prompt_attention": "lab_prompt_attention.json",
}


def translations_file(split: str) -> str:
    """Every sentence of a held-out set with its before/after translation and scores."""
    return f"{split}_translations.jsonl"


def lab_file(study: str) -> str:
    """The JSON a Lab study (a key of :data:`LAB_FILES`) writes into the run folder."""
    if study not in LAB_FILES:
        raise ValueError(f"no Lab study {study!r}; the studies are {', '.join(LAB_FILES)}")
    return LAB_FILES[study]


@dataclass(frozen=True)
class RunFolder:
    """One run's folder and every file it may hold, by what the file holds.

    A path here may not exist: a run killed early leaves some unwritten, and each reader
    treats its file as optional.
    """

    path: Path

    @property
    def name(self) -> str:
        """The folder's name: its start time and preset (``20260101-120000-demo``)."""
        return self.path.name

    @property
    def config(self) -> Path:
        """config.json: the settings, and the precision and cleaning records."""
        return self.path / CONFIG_FILE

    @property
    def metrics(self) -> Path:
        """metrics.jsonl: every progress event."""
        return self.path / METRICS_FILE

    @property
    def summary(self) -> Path:
        """summary.json: what the run did and scored."""
        return self.path / SUMMARY_FILE

    @property
    def before(self) -> Path:
        """before.json: the "before" side, kept for a resume."""
        return self.path / BEFORE_FILE

    @property
    def log(self) -> Path:
        """train.log: the run's lines."""
        return self.path / LOG_FILE

    @property
    def writer_lock(self) -> Path:
        """writer.lock: held by the one writer."""
        return self.path / WRITER_LOCK_FILE

    @property
    def writer_record(self) -> Path:
        """writer.json: who the writer is."""
        return self.path / WRITER_RECORD_FILE

    @property
    def stop_request(self) -> Path:
        """stop.request: a front end's request to stop."""
        return self.path / STOP_REQUEST_FILE

    @property
    def dropped_pairs(self) -> Path:
        """dropped_pairs.jsonl: what cleaning dropped."""
        return self.path / DROPPED_PAIRS_FILE

    @property
    def initial_model(self) -> Path:
        """initial_model/: a scratch run's untrained model."""
        return self.path / INITIAL_MODEL

    @property
    def best_model(self) -> Path:
        """best_model/: the run's best model."""
        return self.path / BEST_MODEL

    @property
    def averaged_model(self) -> Path:
        """averaged_model/: an average that was not kept as the best."""
        return self.path / AVERAGED_MODEL

    @property
    def checkpoints(self) -> Path:
        """checkpoints/: the Trainer's checkpoints."""
        return self.path / CHECKPOINTS_FOLDER

    @property
    def heatmaps(self) -> Path:
        """attention_heatmaps.json: the report's attention views, kept."""
        return self.path / HEATMAPS_FILE

    def translations(self, split: str) -> Path:
        """``<split>_translations.jsonl``: each sentence of ``test`` or ``validation``."""
        return self.path / translations_file(split)

    def lab_study(self, study: str) -> Path:
        """``lab_<study>.json``: a Lab study's results (:data:`LAB_FILES`)."""
        return self.path / lab_file(study)
