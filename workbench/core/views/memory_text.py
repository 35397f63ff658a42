"""The memory plan in words: the lines a run starts with (and all ``train --plan-only``
prints), and the one-line refusal of a run that will not fit, with the flags that would
make it fit its device and the GPUs that would fit it sharded."""

from __future__ import annotations

from collections.abc import Sequence

from workbench.core.records.memory import GB, MOST_GPUS, Fix, MemoryPlan, ScorerMemory, Sharding
from workbench.core.views.launch_text import launch_command


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
    brackets (``activations 5.2 (decoding 2.3)``): the peak holds one of them. A sharded
    plan's are a rank's, with what it gathers; offloaded, the device's parts first and the
    host's after (``on the device: … GB; in host memory: … GB``)."""
    peak = f"activations {_figure(plan.activations)}"
    if plan.decoding:
        decoding = f"decoding {_figure(plan.decoding)}"
        peak = (
            f"{decoding} ({peak})" if plan.decoding > plan.activations else f"{peak} ({decoding})"
        )
    reference = (f"DPO's reference {_figure(plan.reference)}",) if plan.reference else ()
    weights = f"weights {_figure(plan.weights)}"
    moments = (f"gradients {_figure(plan.gradients)}", f"AdamW {_figure(plan.optimizer)}")
    runtime = f"runtime {_figure(plan.runtime)}"
    sharding = plan.sharding
    if sharding is None:
        return " · ".join((weights, *reference, *moments, peak, runtime)) + " GB"
    device = (f"gathered {_figure(sharding.gathered)}", *reference, peak, runtime)
    if sharding.offload:
        host = " · ".join((weights, *moments))
        return f"on the device: {' · '.join(device)} GB; in host memory: {host} GB"
    return " · ".join((weights, *moments, *device)) + " GB"


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


def _what(plan: MemoryPlan) -> str:
    """``every weight``; sharded, ``every weight, sharded over 8 ranks``."""
    if plan.sharding is None:
        return plan.what
    offload = ", its shards in host memory" if plan.sharding.offload else ""
    return f"{plan.what}, sharded over {plan.sharding.world_size} ranks{offload}"


def _each(plan: MemoryPlan) -> str:
    """`` a rank`` after a sharded plan's figures (its budget is one device's)."""
    return " a rank" if plan.sharding is not None else ""


def sharding_line(sharding: Sharding) -> str:
    """What a rank of a sharded plan keeps, where, and what it gathers whole."""
    where = "in host memory (--shard-offload)" if sharding.offload else "on its device"
    return (
        f"FSDP2: each rank keeps 1/{sharding.world_size} of the weights, gradients and "
        f"AdamW's moments {where}, and gathers whole, in {sharding.dtype}: the root (what "
        f"no block holds, the embeddings and the output layer: {sharding.root:,} parameters) "
        f"and two blocks of {sharding.block:,} (the largest: one computed, the next "
        f"prefetched), with the gradients of those that train: {gb(sharding.gathered)}"
    )


def plan_lines(plan: MemoryPlan, scorers: Sequence[ScorerMemory] = ()) -> list[str]:
    """The plan as a run prints it before any weight is loaded, and each scorer's line
    (``--comet``'s model, ``--metricx``'s)."""
    shards = [f"  {sharding_line(plan.sharding)}"] if plan.sharding is not None else []
    return [
        f"memory plan ({_what(plan)}; {step_text(plan)}): about {gb(plan.total)}"
        f"{_each(plan)} at a step's peak, against {gb(plan.budget)} {plan.budget_source}",
        f"  {parts_text(plan)}; {plan.trainable:,} of {plan.parameters:,} parameters "
        f"trained ({100 * plan.share:.2f}%)",
        *shards,
        *(f"  {scorer_line(scorer)}" for scorer in scorers),
    ]


def scale_text(scale: Fix, sharded: bool) -> str:
    """The fix of more GPUs: how many, with which flags, how much each, and the command
    (``sharded``: the run is a ``--shard`` run already, on fewer)."""
    extra = f" with {' '.join(scale.flags)}" if scale.flags else ""
    how = "launch it" if sharded else "shard it (--shard)"
    return (
        f"{how} on {scale.world} GPUs of this size{extra} (about {gb(scale.total)} each): "
        f"{launch_command(scale.world, scale.arguments)}"
    )


def refusal(plan: MemoryPlan, model: str) -> str:
    """One line: the run does not fit, by how much, the flags that would make it fit its
    device (its launch's, sharded), and the GPUs of the budget's size that would fit it
    sharded: first what the devices it has can run, then the launch that keeps the run as
    it was asked for. A sharded run that no number of GPUs fits as it is says what no rank
    shares, before the flags that shrink it."""
    head = (
        f"{model} will not fit: its memory plan needs about {gb(plan.total)}{_each(plan)} "
        f"({parts_text(plan)}; {step_text(plan)}) against {gb(plan.budget)} "
        f"{plan.budget_source}"
    )
    sharded = plan.sharding is not None
    if sharded and (plan.scale is None or plan.scale.flags):
        head += (
            f"; no number of GPUs up to {MOST_GPUS:,} fits it as it is: what no rank shares "
            f"(the gathered units, the activations and the runtime) is {gb(plan.unshared)}"
        )
    fixes = []
    if plan.fix is not None:
        fixes.append(f"pass {' '.join(plan.fix.flags)} (about {gb(plan.fix.total)}{_each(plan)})")
    if plan.scale is not None:
        fixes.append(scale_text(plan.scale, sharded))
    if fixes:
        return (
            f"{head}; {', or '.join(fixes)}, or --memory-budget GB to plan against another figure"
        )
    tried = (
        "--gradient-checkpointing --batch-size 1 would not fit either"
        if sharded
        else "--lora --gradient-checkpointing --batch-size 1 would not fit, nor sharded over "
        f"up to {MOST_GPUS:,} GPUs"
    )
    return (
        f"{head}; even {tried}: pass shorter --max-source-length and --max-target-length, "
        "use a device with more memory, or --memory-budget GB to plan against another figure"
    )


def plan_only_lines(plan: MemoryPlan, scorers: Sequence[ScorerMemory], model: str) -> list[str]:
    """What ``train --plan-only`` prints: the plan, then whether the run fits (its refusal,
    word for word, when it does not)."""
    verdict = (
        f"{model} fits: about {gb(plan.total)}{_each(plan)} of {gb(plan.budget)}; no weight "
        "was loaded (leave out --plan-only to train)"
        if plan.fits
        else refusal(plan, model)
    )
    return [*plan_lines(plan, scorers), verdict]


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
