"""The check that both recipes train the same model: identical batches, padded either way.

Speed alone would not show that padding per batch and projecting only real tokens leave
the loss unchanged; this check does, step by step, and the report prints its losses.
"""

from __future__ import annotations

from pathlib import Path

from .model import load_model
from .phases import count_projected_rows
from .recipes import MAX_LEN, reference_dataset, workbench_config
from .results import ARMS, CheckResult


def child_check(workdir: Path, device: str, batch: int, steps: int) -> CheckResult:
    """Same batches, same order, dropout off: padded to 128 vs padded per batch.

    With labels padded by -100 the loss ignores padding, so the per-step losses must agree
    to float rounding; any larger gap would mean the two recipes train differently. The
    reference takes the model's own loss; the workbench its trainer's ``compute_loss``
    (the vocabulary projection on real target tokens only, ``core/train/loss.py``).
    """
    import torch
    from transformers import DataCollatorForSeq2Seq

    from workbench.core.data.pair import Pair
    from workbench.core.data.tokenize import tokenize_pairs
    from workbench.core.languages import Direction

    losses: dict[str, list[float]] = {}
    projected: dict[str, dict[str, int]] = {}
    real_tokens = 0
    for arm in ARMS:
        model, tokenizer, data = load_model(
            workdir, device, dropout=0.0, attention_dropout=0.0, activation_dropout=0.0
        )
        pairs = data["train"][: batch * steps]
        if arm == "reference":
            dataset = reference_dataset(pairs, tokenizer)
        else:
            dataset = tokenize_pairs(
                [Pair(s, t) for s, t in pairs], tokenizer, Direction(), MAX_LEN, MAX_LEN
            )
        collate = DataCollatorForSeq2Seq(tokenizer, model=model, label_pad_token_id=-100)
        optimizer = torch.optim.AdamW(model.parameters(), lr=2e-5)
        if arm == "workbench":
            from workbench.core.train.recipe import training_arguments
            from workbench.core.train.run_model import resolve_precision
            from workbench.core.train.trainer import WorkbenchTrainer

            check = workbench_config(workdir / "check")
            trainer = WorkbenchTrainer(  # only its compute_loss is used
                model=model,
                eval_dataset=dataset,
                args=training_arguments(check, workdir / "check", resolve_precision(check, device)),
            )
        model.train()
        losses[arm] = []
        projected[arm] = count_projected_rows(model)
        for step in range(steps):
            features = [dataset[i] for i in range(step * batch, (step + 1) * batch)]
            inputs = {k: v.to(device) for k, v in collate(features).items()}
            if arm == "reference":
                loss = model(**inputs).loss
                real_tokens += int(inputs["labels"].ne(-100).sum())
            else:
                loss = trainer.compute_loss(
                    model, inputs, num_items_in_batch=inputs["labels"].ne(-100).sum()
                )
            loss.backward()
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
            losses[arm].append(float(loss.detach()))
    diffs = [abs(a - b) for a, b in zip(losses["reference"], losses["workbench"], strict=True)]
    return {
        "batch": batch,
        "steps": steps,
        "losses": losses,
        "max_abs_diff": max(diffs),
        "real_tokens": real_tokens,
        "projected_rows": {arm: found["rows"] for arm, found in projected.items()},
    }
