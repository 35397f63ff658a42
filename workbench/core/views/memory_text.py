"""The memory plan in words: the lines a run starts with, and the one-line refusal of a
run that will not fit."""

from __future__ import annotations

from collections.abc import Sequence

from workbench.core.records.memory import GB, MemoryPlan, ScorerMemory


def gb(count: float) -> str:
    """Bytes as ``13.2 GB`` (decimal GB; two decimals under 1 GB so a tiny model is not
    ``0.0 GB``)."""
    value = count / GB
    return f"{value:.2f} GB" if value < 1 else f"{value:.1f} GB"


def _figure(value: float) -> str:
    return gb(value).removesuffix(" GB")


def parts_text(plan: MemoryPlan) -> str:
    """``weights 13.2 · gradients 13.2 · AdamW 26.4 · activations 15.3 · runtime 0.8 GB``;
    where decoding is counted, the larger of it and the activations first, the other in
    brackets (``activations 5.2 (decoding 2.3)``): the peak holds one of them."""
    peak = f"activations {_figure(plan.activations)}"
    if plan.decoding:
        decoding = f"decoding {_figure(plan.decoding)}"
        peak = (
            f"{decoding} ({peak})" if plan.decoding > plan.activations else f"{peak} ({decoding})"
        )
    reference = (f"DPO's reference {_figure(plan.reference)}",) if plan.reference else ()
    parts = (
        f"weights {_figure(plan.weights)}",
        *reference,
        f"gradients {_figure(plan.gradients)}",
        f"AdamW {_figure(plan.optimizer)}",
        peak,
        f"runtime {_figure(plan.runtime)}",
    )
    return " · ".join(parts) + " GB"


def step_text(plan: MemoryPlan) -> str:
    """``batch 16 × 128/128 tokens, fp32, gradient checkpointing``: what the step is; a
    decoder-only model's ``batch 16 × 296 tokens (prompt 40 + 128 + 128)``."""
    source, target = plan.lengths
    checkpointing = ", gradient checkpointing" if plan.checkpointing else ""
    tokens = (
        f"{plan.prompt + source + target} tokens (prompt {plan.prompt} + {source} + {target})"
        if plan.causal
        else f"{source}/{target} tokens"
    )
    return f"batch {plan.batch_size} × {tokens}, {plan.precision}{checkpointing}"


def plan_lines(plan: MemoryPlan, scorers: Sequence[ScorerMemory] = ()) -> list[str]:
    """The plan as a run prints it before any weight is loaded, and each scorer's line
    (``--comet``'s model, ``--metricx``'s)."""
    return [
        f"memory plan ({plan.what}; {step_text(plan)}): about {gb(plan.total)} at a "
        f"step's peak, against {gb(plan.budget)} {plan.budget_source}",
        f"  {parts_text(plan)}; {plan.trainable:,} of {plan.parameters:,} parameters "
        f"trained ({100 * plan.share:.2f}%)",
        *(f"  {scorer_line(scorer)}" for scorer in scorers),
    ]


def refusal(plan: MemoryPlan, model: str) -> str:
    """One line: the run does not fit, by how much, and the flags that would make it."""
    head = (
        f"{model} will not fit: its memory plan needs about {gb(plan.total)} "
        f"({parts_text(plan)}; {step_text(plan)}) against {gb(plan.budget)} "
        f"{plan.budget_source}"
    )
    if plan.fix is not None:
        fix = f"; pass {' '.join(plan.fix.flags)} (about {gb(plan.fix.total)})"
    else:
        fix = (
            "; even --lora --gradient-checkpointing --batch-size 1 would not fit: use a "
            "device with more memory"
        )
    return head + fix + ", or --memory-budget GB to plan against another figure"


def scorer_line(memory: ScorerMemory) -> str:
    """The line a run with ``--comet`` or ``--metricx`` adds to its memory plan."""
    when = (
        f"loaded for each epoch's validation score beside the training step: about "
        f"{gb(memory.bytes + memory.beside)} together"
        if memory.beside
        else "loaded once training has released its model, never beside it"
    )
    return (
        f"{memory.metric} {memory.name}: {memory.parameters:,} parameters (encoder "
        f"{memory.encoder}), about {gb(memory.bytes)} in {memory.dtype}, {when}"
    )


def scorer_refusal(memory: ScorerMemory) -> str:
    """One line: the scorer will not fit, and what to do."""
    beside = f" beside the training step's {gb(memory.beside)}" if memory.beside else ""
    instead = "select on bleu, " if memory.beside else ""
    return (
        f"{memory.metric} model '{memory.name}' will not fit: it needs about "
        f"{gb(memory.bytes)} ({memory.parameters:,} parameters in {memory.dtype}, with the "
        f"runtime){beside} against {gb(memory.budget)} {memory.budget_source}; {instead}score "
        f"on a machine with more memory (workbench score {memory.flag} after the run), leave "
        f"{memory.flag} out, or pass --memory-budget GB"
    )
