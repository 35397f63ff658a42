"""The work folder every child process loads: the random model, the tokenizer, the pairs.

Saved once, before any arm runs, so that both arms and all repetitions train and
evaluate the very same weights on the very same pairs.
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .model import EOS, OPUS_GENERATION, OPUS_SHAPE, PAD, build_tokenizer
from .modes import Mode
from .pairs import fill_ids, ids_to_text, length_stats, length_strata, make_lengths, make_pairs
from .recipes import BATCH, workbench_config
from .results import DataSummary, SavedPairs

if TYPE_CHECKING:
    from transformers import MarianMTModel


def plan_training(
    model: MarianMTModel, lengths: list[tuple[int, int]], batches: int, workdir: Path, device: str
) -> tuple[list[int], dict[str, float]]:
    """``batches`` of the batches the workbench's sampler forms over an epoch of ``lengths``.

    The sampler (``trainer.EpochSeededLengthSampler``) sorts megabatches of 50 x 16 pairs by
    length, but only in datasets of 3,200 pairs or more; on a few dozen pairs its batches
    would be random. So it orders the full epoch here; the epoch's batches, sorted by
    padded size (source + target width), are split into ``batches`` equal groups, and
    from each group the batch nearest the group's mean size is kept, so the kept batches
    are as wide as the epoch's on average. Returns their pair indices, batch after batch,
    and the mean source/target widths of the kept batches and of the whole epoch.
    """
    import datasets

    from workbench.core.train.recipe import training_arguments
    from workbench.core.train.run_model import resolve_precision
    from workbench.core.train.trainer import WorkbenchTrainer

    config = workbench_config(workdir / "plan")
    dataset = datasets.Dataset.from_dict(
        {"input_ids": [[0] * s for s, _ in lengths], "labels": [[0] * t for _, t in lengths]}
    )
    trainer = WorkbenchTrainer(
        model=model,
        args=training_arguments(config, workdir / "plan", resolve_precision(config, device)),
        eval_dataset=dataset,
    )  # only its sampler is used
    order = list(trainer._get_train_sampler(dataset))
    # The Trainer moved it to the device; the children load their own. (transformers wraps
    # Module.to with functools.wraps, which hides the bound self from mypy.)
    model.to("cpu")  # type: ignore[arg-type]
    epoch = [order[i : i + BATCH] for i in range(0, len(order) - BATCH + 1, BATCH)]

    def widths(batch: list[int]) -> tuple[int, int]:
        return max(lengths[i][0] for i in batch), max(lengths[i][1] for i in batch)

    by_size = sorted(epoch, key=lambda b: sum(widths(b)))
    kept = []
    for k in range(batches):  # from each of `batches` equal groups, its most typical batch
        group = by_size[k * len(by_size) // batches : (k + 1) * len(by_size) // batches]
        mean = statistics.fmean(sum(widths(b)) for b in group)
        kept.append(min(group, key=lambda b: abs(sum(widths(b)) - mean)))
    summary = {
        f"{who}_{side}": statistics.fmean(widths(b)[j] for b in batches_)
        for who, batches_ in (("kept", kept), ("epoch", epoch))
        for j, side in enumerate(("source", "target"))
    }
    return [i for batch in kept for i in batch], summary


def prepare_workdir(
    workdir: Path,
    mode: Mode,
    device: str = "cpu",
    seed: int = 0,
    shape: Mapping[str, Any] | None = None,
) -> DataSummary:
    """Save the random model, the tokenizer and the data every child process loads.

    ``shape`` overrides parts of opus-mt's shape (the smoke run and the tests build a
    tiny model).
    """
    import torch
    from transformers import GenerationConfig, MarianConfig, MarianMTModel

    torch.manual_seed(seed)
    model = MarianMTModel(MarianConfig(**{**OPUS_SHAPE, **(shape or {})}))
    model.generation_config = GenerationConfig(
        **{
            **OPUS_GENERATION,
            "pad_token_id": PAD,
            "eos_token_id": EOS,
            "decoder_start_token_id": PAD,
            "forced_eos_token_id": EOS,
        }
    )
    model.save_pretrained(workdir / "model")
    build_tokenizer().save_pretrained(workdir / "model")
    val_pool, val_batches = mode.validation_pool, mode.validation_batches
    epoch = make_lengths(mode.epoch, seed=1)
    kept, plan = plan_training(model, epoch, mode.train_batches, workdir, device)
    train = fill_ids([epoch[i] for i in kept], seed=3)
    validation = make_pairs(val_pool, seed=2)
    if val_batches:
        validation = length_strata(validation, val_batches, seed=4)
    data: SavedPairs = {
        "train": [[ids_to_text(s), ids_to_text(t)] for s, t in train],
        "validation": [[ids_to_text(s), ids_to_text(t)] for s, t in validation],
    }
    (workdir / "data.json").write_text(json.dumps(data), encoding="utf-8")
    model_sample = make_lengths(20_000, seed=99)  # the distribution itself, not this sample

    val_text = f"{len(validation)} sentences drawn at random"
    if val_batches:
        val_text = (
            f"{len(validation)} sentences = {val_batches} batches of {BATCH} at evenly "
            f"spaced ranks of a {val_pool}-sentence set sorted by length "
            "(`length_strata`), stored in random order"
        )
    return {
        "parameters": sum(p.numel() for p in model.parameters()),
        "train_pairs": len(train),
        "train_target_tokens": sum(len(t) + 1 for _, t in train),  # </s> included
        "train_text": (
            f"{len(train)} pairs = {mode.train_batches} batches of {BATCH} that "
            f"the workbench's sampler forms over a {mode.epoch:,}-pair epoch, "
            "one typical batch from each equal share of its batches sorted by "
            "size (`plan_training`; mean source/target width "
            f"{plan['kept_source']:.1f}/{plan['kept_target']:.1f} tokens, the "
            f"whole epoch's {plan['epoch_source']:.1f}/{plan['epoch_target']:.1f})"
        ),
        "validation_pairs": len(validation),
        "validation_text": val_text,
        "lengths": {
            "source, model (20,000 draws)": length_stats([s for s, _ in model_sample]),
            "target, model (20,000 draws)": length_stats([t for _, t in model_sample]),
            "source, this run's pairs": length_stats([len(s) + 1 for s, _ in train + validation]),
            "target, this run's pairs": length_stats([len(t) + 1 for _, t in train + validation]),
        },
    }
