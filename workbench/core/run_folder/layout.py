"""Every file a run leaves in its folder, and what its output folder holds, named once:
:class:`RunFolder` and :class:`OutputFolder`.

Every module that writes or reads a run's file takes its path from here, so "what does a
run leave?" has one answer, which ``docs/runs.md``'s list of outputs is checked against
(a finished run's folder, listed, holds nothing else). Each path says what its file holds
and where the one typed reader and writer of that record are: in this package for the
records whose types the base holds (``config.json``, ``summary.json``, the translations),
else beside the record's type in the package that owns it (the writer's record in
``live``, a Lab study in ``lab``). This module names, and tells a run folder from any
other folder; it imports nothing of the workbench.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

#: The folder under the output folder that holds one folder per run.
RUNS_FOLDER = "runs"
#: A saved model's transformers config (transformers' ``CONFIG_NAME``), in a model folder:
#: the same spelling as a run's settings file, in another folder.
MODEL_CONFIG_FILE = "config.json"
#: The Lab's studies a run folder may hold, by study, each written by ``workbench lab``.
LAB_FILES = {
    "decoding": "lab_decoding.json",
    "cache": "lab_cache.json",  # the KV-cache study
    "attention": "lab_attention.json",
    "prompt_attention": "lab_prompt_attention.json",
}
#: ``workbench report``'s report, in Markdown and as one self-contained HTML page.
REPORT_MD = "report.md"
REPORT_HTML = "report.html"
#: ``workbench report``'s figures, by the key the report draws them under: SVG files
#: beside ``report.md`` (``report.html`` inlines the same text).
REPORT_FIGURES = {
    "loss": "report_loss.svg",
    "bleu": "report_bleu.svg",
    "attention": "report_attention.svg",
}


@dataclass(frozen=True)
class RunFolder:
    """One run's folder and every file it may hold, by what the file holds.

    A path here may not exist: a run killed early leaves some unwritten, and each reader
    treats its file as optional. F6's screenshots (``screenshot-<pane>-<time>.svg``) are
    named by :mod:`workbench.core.report.screenshots`, which reads the pane and the time
    back from the name.
    """

    path: Path

    @property
    def name(self) -> str:
        """The folder's name: its start time and preset (``20260101-120000-demo``)."""
        return self.path.name

    @property
    def in_runs_folder(self) -> bool:
        """Whether the folder sits in an output folder's ``runs/``, where runs are made."""
        return self.path.parent.name == RUNS_FOLDER

    @property
    def is_run(self) -> bool:
        """Whether the folder holds a file every run writes (a run killed early has only
        its config.json): a run folder, not just any folder."""
        return any(path.is_file() for path in (self.config, self.metrics, self.summary))

    @property
    def output_root(self) -> Path:
        """The output folder the run folder lives in (``<root>/runs/<name>``), else its
        parent (a run folder moved out of its output folder)."""
        return self.path.parent.parent if self.in_runs_folder else self.path.parent

    @property
    def config(self) -> Path:
        """config.json: the settings, and the precision and cleaning records
        (:mod:`.saved_config`)."""
        return self.path / "config.json"

    @property
    def metrics(self) -> Path:
        """metrics.jsonl: every progress event, one JSON line each, written by
        :class:`~workbench.core.events.JsonlRecorder` and read typed by
        :mod:`workbench.core.live.follow` (as it grows),
        :func:`~workbench.core.events.events_from_end` (from its end) and
        :mod:`workbench.core.live.run_metrics` (whole, as columns)."""
        return self.path / "metrics.jsonl"

    @property
    def summary(self) -> Path:
        """summary.json: what the run did and scored (:mod:`.summary_file`)."""
        return self.path / "summary.json"

    @property
    def before(self) -> Path:
        """before.json: the "before" side, kept for a resume
        (:mod:`workbench.core.evaluate.before_after`)."""
        return self.path / "before.json"

    @property
    def log(self) -> Path:
        """train.log: the run's lines, as ``train --headless`` prints them
        (:mod:`workbench.core.live.run_log` writes it)."""
        return self.path / "train.log"

    @property
    def writer_lock(self) -> Path:
        """writer.lock: held (flock) by the one writer
        (:class:`~workbench.core.live.writer.RunWriter`)."""
        return self.path / "writer.lock"

    @property
    def writer_record(self) -> Path:
        """writer.json: who the writer is, host, pid, start time, heartbeat
        (:class:`~workbench.core.live.writer_record.WriterRecord`)."""
        return self.path / "writer.json"

    @property
    def stop_request(self) -> Path:
        """stop.request: a front end's request that the run stop at its next step
        (:mod:`workbench.core.live.stop_request`)."""
        return self.path / "stop.request"

    @property
    def dropped_pairs(self) -> Path:
        """dropped_pairs.jsonl: the pairs cleaning dropped, each with its rule
        (:mod:`workbench.core.data.dropped_pairs`)."""
        return self.path / "dropped_pairs.jsonl"

    @property
    def preferences(self) -> Path:
        """preferences.jsonl: what a run past the references trained on, each source's
        candidates with their ranker scores and the chosen and rejected translations
        (:mod:`workbench.core.preferences.records`)."""
        return self.path / "preferences.jsonl"

    @property
    def initial_model(self) -> Path:
        """initial_model/: a scratch run's untrained model (the "before" side in the
        console and the report)."""
        return self.path / "initial_model"

    @property
    def scratch_tokenizer(self) -> Path:
        """scratch_tokenizer/: a scratch run's SentencePiece vocabularies, trained on its
        training split (:mod:`workbench.core.model.scratch`)."""
        return self.path / "scratch_tokenizer"

    @property
    def best_model(self) -> Path:
        """best_model/: the run's best model (the output folder holds the published copy)."""
        return self.path / "best_model"

    @property
    def averaged_model(self) -> Path:
        """averaged_model/: the average of the best or last checkpoints, kept when it did
        not beat the best one."""
        return self.path / "averaged_model"

    @property
    def checkpoints(self) -> Path:
        """checkpoints/: the Trainer's ``checkpoint-N`` folders."""
        return self.path / "checkpoints"

    @property
    def tensorboard(self) -> Path:
        """tensorboard/: the Trainer's TensorBoard events (``--report-to tensorboard``)."""
        return self.path / "tensorboard"

    @property
    def heatmaps(self) -> Path:
        """attention_heatmaps.json: the report's attention views, kept with what the model
        is (:mod:`workbench.core.attention.kept_heatmaps`)."""
        return self.path / "attention_heatmaps.json"

    @property
    def report_markdown(self) -> Path:
        """report.md: ``workbench report``'s report (:mod:`workbench.core.report.write`)."""
        return self.path / REPORT_MD

    @property
    def report_html(self) -> Path:
        """report.html: the same report as one self-contained page."""
        return self.path / REPORT_HTML

    def report_figure(self, key: str) -> Path:
        """``report_<key>.svg``: a figure of the report (a key of :data:`REPORT_FIGURES`)."""
        return self.path / REPORT_FIGURES[key]

    def translations(self, split: str) -> Path:
        """``<split>_translations.jsonl``: each sentence of ``test`` or ``validation`` with
        its before/after translations and scores (:mod:`.samples`)."""
        return self.path / f"{split}_translations.jsonl"

    def picked_translations(self, split: str) -> Path:
        """``<split>_picked_translations.jsonl``: each sentence's beam translation beside
        the one ``--pick`` picked, with their scores (:mod:`.samples`)."""
        return self.path / f"{split}_picked_translations.jsonl"

    def lab_study(self, study: str) -> Path:
        """``lab_<study>.json``: a Lab study's results (a key of :data:`LAB_FILES`),
        written by :mod:`workbench.core.lab.run_study` and read typed by the report."""
        if study not in LAB_FILES:
            raise ValueError(f"no Lab study {study!r}; the studies are {', '.join(LAB_FILES)}")
        return self.path / LAB_FILES[study]


@dataclass(frozen=True)
class OutputFolder:
    """An output folder (``translation_output`` by default): one folder per run, the
    model published last, and the console's history."""

    path: Path

    @property
    def runs(self) -> Path:
        """runs/: one folder per run (:mod:`.output_folder` makes and lists them)."""
        return self.path / RUNS_FOLDER

    def run(self, name: str) -> Path:
        """``runs/<name>``: the folder of the run called ``name``."""
        return self.runs / name

    @property
    def best_model(self) -> Path:
        """best_model/: the best model of the run published last, replaced atomically."""
        return self.path / "best_model"

    @property
    def history(self) -> Path:
        """console_history.jsonl: every console translation, appended as it happens
        (:mod:`workbench.core.translate.history`)."""
        return self.path / "console_history.jsonl"
