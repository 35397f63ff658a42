"""What a run report holds: plain data read from one run folder, figures as SVG text.

:mod:`.read` fills a :class:`RunReport` from the run folder, the console history and the
model; :mod:`.render` makes it one list of blocks and :mod:`.write` writes it as Markdown
and HTML. They share only these types.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from workbench.core.data.cleaning import Dropped
from workbench.core.lab.attention_kinds import AttentionKinds
from workbench.core.lab.decoding_strategies import DecodingStudy
from workbench.core.lab.kv_cache import CacheStudy
from workbench.core.lab.prompt_attention import PromptAttention
from workbench.core.records.summary import RunSummary
from workbench.core.report.screenshots import Screenshot
from workbench.core.run_folder.saved_config import SavedConfig
from workbench.core.translate.console_lines import ConsoleLine


@dataclass(frozen=True)
class LabStudies:
    """The Lab studies saved in a run folder (``workbench lab``), None for one not run or
    whose file does not read; ``unreadable`` names the files left out for that."""

    decoding: DecodingStudy | None = None
    cache: CacheStudy | None = None
    attention: AttentionKinds | None = None
    prompt_attention: PromptAttention | None = None  # a decoder-only model's study
    unreadable: tuple[str, ...] = ()


@dataclass(frozen=True)
class EpochRow:
    """One evaluation during training: losses, BLEU and chrF at the end of an epoch."""

    epoch: float
    step: int | None
    train_loss: float | None
    val_loss: float | None
    bleu: float | None
    chrf: float | None
    best: bool = False


@dataclass
class AttentionFigure:
    """The heatmap of one sentence, or why there is none."""

    sentence: str = ""
    translation: str = ""
    view: str = ""
    svg: str | None = None
    missing: str = ""
    kind: str = "cross-attention"  # what the map shows (a decoder-only model's differs)

    @property
    def heading(self) -> str:
        """The section's title: ``Cross-attention heatmap``, or the other kind's."""
        return f"{self.kind[:1].upper()}{self.kind[1:]} heatmap"


@dataclass
class RunReport:
    """Everything the report shows, read from one run folder."""

    run_dir: Path
    saved: SavedConfig  # config.json: the settings, and the run's records beside them
    preset_defaults: SavedConfig  # the settings of the preset the run names
    summary: RunSummary
    epochs: list[EpochRow]
    train_loss: list[tuple[float, float]]  # (epoch, loss) per logging step
    console: list[ConsoleLine]
    console_note: str
    attention: AttentionFigure
    notes: list[str] = field(default_factory=list)
    figures: dict[str, str] = field(default_factory=dict)  # key of REPORT_FIGURES -> SVG
    #: The Lab studies run for this run (workbench lab), each read back typed.
    lab: LabStudies = field(default_factory=lambda: LabStudies())
    generated: str = ""
    #: The pairs cleaning dropped before the split (dropped_pairs.jsonl).
    dropped: list[Dropped] = field(default_factory=list)
    #: The TUI's F6 screenshots in the run folder, oldest first.
    screenshots: list[Screenshot] = field(default_factory=list)

    @property
    def name(self) -> str:
        """The run folder's name (its start time and preset)."""
        return self.run_dir.name

    @property
    def status(self) -> str:
        """``finished``, ``stopped`` or ``failed``, as the summary says."""
        return self.summary.status or "unknown"
