"""Where the workbench's training step spends its time, and what a library measure buys.

``child_profile`` runs the workbench arm's step by hand over the timed batches -- the
trainer's own ``compute_loss`` (the real-token loss), ``backward``, gradient clipping at
the trainer's ``max_grad_norm`` and the optimizer and scheduler steps -- and times its
parts from hooks and clocks:

- **collation**: ``DataCollatorForSeq2Seq`` padding the batch;
- **forward, layers**: the encoder and decoder, up to the vocabulary projection;
- **forward, projection**: ``lm_head`` (65,001 words) on the real target tokens;
- **loss**: the final-logits bias and the cross-entropy, after the projection;
- **backward, loss and projection** and **backward, layers**: split at the moment the
  projection's input gradient is computed (a full backward hook on ``lm_head``);
- **gradient clipping**, **optimizer** (AdamW's step, the scheduler, zeroing);
- **other**: the rest of the step's wall time (Python between the parts).

One step is also run under ``torch.profiler``, whose busiest operators (self CPU time)
are listed, copies and conversions (``aten::copy_``, ``aten::to``) among them.

``measure`` is one of :data:`MEASURES`; each is applied to the same model, batches and
learning-rate schedule, and the losses are returned so that a measure that changes them
beyond float rounding shows.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .phases import peak_memory, warm_up
from .recipes import build_trainer

if TYPE_CHECKING:
    from transformers import Seq2SeqTrainer

#: What a step may be run with: as ``workbench train`` runs it, or with one measure.
MEASURES = (
    "as shipped",
    "AdamW foreach",
    "AdamW for-loop",
    "loss in chunks",
    "torch.compile",
    "2 threads",
)
#: Parts of a step, in the order the table lists them.
PARTS = (
    "collation",
    "forward, layers",
    "forward, projection",
    "loss",
    "backward, loss and projection",
    "backward, layers",
    "gradient clipping",
    "optimizer",
)
CHUNK_ROWS = 256  # rows of the projection per cross-entropy chunk ("loss in chunks")


def child_profile(workdir: Path, device: str, measure: str, steps: int) -> dict[str, Any]:
    """Time ``steps`` workbench training steps (after one untimed) with ``measure``."""
    import torch

    threads = torch.get_num_threads()
    if measure == "2 threads":
        torch.set_num_threads(2)
    trainer, model, _, _ = build_trainer("workbench", "train", workdir, device)
    trainer.create_optimizer_and_scheduler(num_training_steps=steps + 1)
    undo = apply_measure(trainer, measure)
    try:
        return timed_steps(trainer, model, device, measure, steps)
    finally:
        undo()
        torch.set_num_threads(threads)


def timed_steps(
    trainer: Seq2SeqTrainer, model: Any, device: str, measure: str, steps: int
) -> dict[str, Any]:
    """The steps of :func:`child_profile`, timed, and one under ``torch.profiler``."""
    import torch

    stored = trainer._remove_unused_columns(trainer.train_dataset)  # as its dataloader does
    features = [stored[i] for i in range(len(stored))]
    batch = trainer.args.per_device_train_batch_size
    groups = [features[i : i + batch] for i in range(0, len(features), batch)]
    warm_up(model, device)
    clock = StepClock(model.get_output_embeddings())
    model.train()
    losses, rows, first_step = [], [], 0.0
    for n in range(steps + 1):
        group = groups[n % len(groups)]
        parts, loss = clock.step(trainer, group)
        losses.append(loss)
        if n:  # the first step pays one-time set-up (and compiles, under torch.compile)
            rows.append(parts)
        else:
            first_step = parts["step"]
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
        clock.step(trainer, groups[0])
    top = sorted(prof.key_averages(), key=lambda e: e.self_cpu_time_total, reverse=True)
    return {
        "measure": measure,
        "threads": torch.get_num_threads(),
        "parts": {name: [r[name] for r in rows] for name in (*PARTS, "other", "step")},
        "first_step": first_step,
        "losses": losses,
        "top_ops": [[e.key, e.self_cpu_time_total / 1e6, e.count] for e in top[:10]],
        "adamw": {key: trainer.optimizer.param_groups[0].get(key) for key in ("fused", "foreach")},  # type: ignore[union-attr]
        **peak_memory(device),
    }


def apply_measure(trainer: Seq2SeqTrainer, measure: str) -> Callable[[], None]:
    """Change the trainer the way ``measure`` says (its optimizer, loss or model); returns
    what undoes a change made outside the trainer (the loss in chunks)."""
    import torch

    if measure.startswith("AdamW"):
        # As shipped, the Trainer's default ("adamw_torch_fused") already runs the fused
        # kernel; these are the other two implementations.
        # A group's own options win over the constructor's: they are set in the groups.
        foreach = measure == "AdamW foreach"
        groups: Any = trainer.optimizer.param_groups  # type: ignore[union-attr]
        mine = [{**group, "fused": False, "foreach": foreach} for group in groups]
        trainer.optimizer = torch.optim.AdamW(mine)
        trainer.lr_scheduler.optimizer = trainer.optimizer  # type: ignore[union-attr]
    elif measure == "loss in chunks":
        return chunk_cross_entropy()
    elif measure == "torch.compile":
        # In place (Module.compile), so the Trainer still sees the model's own signature.
        trainer.model.compile()  # type: ignore[union-attr]
    return lambda: None


def chunk_cross_entropy() -> Callable[[], None]:
    """The cross-entropy over the real-token logits in chunks of :data:`CHUNK_ROWS` rows
    (the softmax's temporaries stay in cache), summed: the same loss. Returns its undo."""
    import torch.nn.functional as F

    whole = F.cross_entropy

    def in_chunks(logits: Any, labels: Any, reduction: str = "mean", **kwargs: Any) -> Any:
        if reduction != "sum":
            return whole(logits, labels, reduction=reduction, **kwargs)
        return sum(
            whole(logits[i : i + CHUNK_ROWS], labels[i : i + CHUNK_ROWS], reduction="sum", **kwargs)
            for i in range(0, len(labels), CHUNK_ROWS)
        )

    # core/train/loss.py's real_token_loss looks F.cross_entropy up at each call.
    F.cross_entropy = in_chunks  # type: ignore[assignment]

    def undo() -> None:
        F.cross_entropy = whole

    return undo


class StepClock:
    """Clocks one training step's parts (see the module's docstring)."""

    def __init__(self, head: Any) -> None:
        self.marks: dict[str, float] = {}
        mark = self.marks.__setitem__
        head.register_forward_pre_hook(lambda *_: mark("projection", time.perf_counter()))
        head.register_forward_hook(lambda *_: mark("projected", time.perf_counter()))
        head.register_full_backward_hook(lambda *_: mark("head backward", time.perf_counter()))

    def step(self, trainer: Seq2SeqTrainer, group: list[Any]) -> tuple[dict[str, float], float]:
        """Run one step on ``group``: each part's seconds, and the loss."""
        import torch

        model, optimizer, scheduler = trainer.model, trainer.optimizer, trainer.lr_scheduler
        assert model is not None
        assert optimizer is not None
        assert scheduler is not None
        clock = time.perf_counter
        start = clock()
        inputs = trainer._prepare_inputs(trainer.data_collator(group))
        collated = clock()
        count = inputs["labels"].ne(-100).sum()
        loss: Any = trainer.compute_loss(model, inputs, num_items_in_batch=count)
        forward_done = clock()
        loss.backward()
        backward_done = clock()
        torch.nn.utils.clip_grad_norm_(model.parameters(), trainer.args.max_grad_norm)
        clipped = clock()
        optimizer.step()
        scheduler.step()
        optimizer.zero_grad(set_to_none=True)
        end = clock()
        m = self.marks
        parts = {
            "collation": collated - start,
            "forward, layers": m["projection"] - collated,
            "forward, projection": m["projected"] - m["projection"],
            "loss": forward_done - m["projected"],
            "backward, loss and projection": m["head backward"] - forward_done,
            "backward, layers": backward_done - m["head backward"],
            "gradient clipping": clipped - backward_done,
            "optimizer": end - clipped,
        }
        parts["step"] = end - start
        parts["other"] = parts["step"] - sum(parts[p] for p in PARTS)
        return parts, float(loss.detach())


def profile_lines(found: dict[str, Any]) -> list[str]:
    """The table of a step's parts (median over the timed steps, and their share of the
    step) and the busiest operators of the profiled step."""
    import statistics

    parts = found["parts"]
    step = statistics.median(parts["step"])
    lines = [
        f"Median over {len(parts['step'])} steps of the workbench arm's step ({found['measure']}, "
        f"{found['threads']} torch thread(s)), after one untimed step "
        f"({found['first_step']:.2f} s): **{step:.2f} s a step**.",
        "",
        "| part | seconds a step | share |",
        "| --- | ---: | ---: |",
    ]
    for name in (*PARTS, "other"):
        value = statistics.median(parts[name])
        lines.append(f"| {name} | {value:.3f} | {value / step:.1%} |")
    lines += [
        "",
        "Busiest operators of one profiled step (`torch.profiler`, self CPU time):",
        "",
        "| operator | seconds | calls |",
        "| --- | ---: | ---: |",
        *(f"| `{name}` | {seconds:.3f} | {count} |" for name, seconds, count in found["top_ops"]),
    ]
    return lines


def profile_section(found: dict[str, Any]) -> list[str]:
    """RESULTS.md's section on the workbench step's parts."""
    return [
        "",
        "## Where a training step's time goes",
        "",
        *profile_lines(found),
        "",
        "What each measure the libraries offer (AdamW's foreach and for-loop kernels beside "
        "the fused one the Trainer uses, `torch.compile`, the loss in chunks, threads) did "
        "to this step: `python benchmarks/step_measures.py`, written to "
        "`benchmarks/STEP_MEASURES.md`.",
        "",
    ]
