"""How a run starts: its folder made with its config.json, and its first lines (where it
writes, what it trains and tests on, the batch, the model it loaded)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from workbench.core.config.run_config import RunConfig
from workbench.core.data.dropped_pairs import write_dropped_pairs
from workbench.core.data.splits import SplitData
from workbench.core.languages import bleu_tokenizer_for
from workbench.core.run_folder.output_folder import new_run_dir
from workbench.core.run_folder.saved_config import SavedConfig, write_saved_config
from workbench.core.train import distributed
from workbench.core.train.run_model import Precision


def new_run(
    output_root: Path,
    config: RunConfig,
    precision: Precision,
    main: bool,
    folder: Path | None,
    data: SplitData,
) -> Path:
    """A fresh run folder (made by rank 0, shared with the others, or ``folder`` when the
    caller made it) with its config.json and the pairs cleaning dropped."""
    made = (folder or new_run_dir(output_root, config.preset)) if main else None
    run_dir = distributed.from_main(made)
    if main:
        saved = SavedConfig(config.to_dict(), precision, data.cleaning.record())
        write_saved_config(run_dir, saved)
        write_dropped_pairs(run_dir, data.cleaning)
    return run_dir


def run_lines(run_dir: Path, data: SplitData, config: RunConfig) -> list[str]:
    """The run's first lines: where it writes, what it trains and tests on, the batch."""
    lines = [
        f"run folder: {run_dir}",
        *data.cleaning.lines(),
        f"data: {len(data.train):,} train / {len(data.validation):,} validation "
        f"({data.validation_name}) from {data.origin}",
        f"test set: {len(data.test):,} pairs ({data.test_name}), scored before and after "
        "fine-tuning only, never used to choose anything",
    ]
    tokenizer, fallback = bleu_tokenizer_for(config.target_lang)
    if fallback and config.bleu_tokenize == tokenizer:  # char for ja or ko: say why
        lines.append(fallback)
    world = distributed.world_size()
    lines.append(
        f"effective batch size {config.batch_size * world}"
        + (f" ({config.batch_size} per process x {world} processes)" if world > 1 else "")
    )
    if world > 1:
        waits = distributed.process_group_timeout()
        lines.append(
            f"processes wait up to {waits:.0f} s for each other (ddp_timeout)"
            if waits is not None
            else f"ddp_timeout {config.ddp_timeout} s"
        )
    return lines


def model_line(model: Any, precision: Precision) -> str:
    """What was loaded, how big, where, and at which precision it trains and decodes."""
    n_params = sum(p.numel() for p in model.parameters())
    return (
        f"model: {type(model).__name__}, {n_params / 1e6:.1f}M parameters, on "
        f"{precision.device}; training in {precision.training}, before/after decoded in "
        f"{precision.decoding}"
    )
