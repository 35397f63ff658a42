"""A run's memory plan: what its training step needs, from the model's config alone, held
against one device's memory before any weight is loaded; for a run that will not fit, the
cheapest flags that would make it fit that device, the fewest such devices that fit it
sharded, and the refusal in one line.

Each model kind counts its own step (:mod:`.seq2seq`, :mod:`.decoder_only`); this module
asks the one the model is, splits it over the ranks of a ``--shard`` run
(:mod:`.sharded`), and plans ``--comet``'s and ``--metricx``'s scorers beside it.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any

from workbench.core.config.command import command_flags
from workbench.core.config.run_config import RunConfig
from workbench.core.model.architecture import model_shape
from workbench.core.model.meta_model import ParameterCounts
from workbench.core.records.memory import GB, Fix, MemoryPlan, ScorerMemory
from workbench.core.records.run_records import Precision
from workbench.core.train.memory.decoder_only import decoder_only_plan
from workbench.core.train.memory.seq2seq import seq2seq_plan
from workbench.core.train.memory.sharded import plan_world_size, shard_plan, smallest_world
from workbench.core.train.memory.shared import FP32, PlanRequest
from workbench.core.train.objective import PREFERENCE_OBJECTIVES, Objective
from workbench.core.views.memory_text import refusal, scorer_refusal
from workbench.errors import WorkbenchError

#: What a sharded launch sets itself: ``--shard``, and the world size from the launcher.
LAUNCH_SETTINGS = ("shard", "gpus")


def device_budget(config: RunConfig, device: str) -> tuple[float, str]:
    """Bytes the plan is held against, and where that figure comes from."""
    if config.memory_budget:
        return config.memory_budget * GB, "(--memory-budget)"
    if device == "cuda":
        import torch

        free, _total = torch.cuda.mem_get_info()
        return float(free), f"free on {torch.cuda.get_device_name()}"
    import psutil

    return float(psutil.virtual_memory().available), "of RAM available"


def estimate(
    config: RunConfig,
    model_config: Any,
    precision: Precision,
    budget: tuple[float, str],
    prompt_tokens: int | None = None,
    world: int = 1,
) -> MemoryPlan:
    """The plan of ``config`` on ``model_config``'s model (no fix looked for), counted as
    its kind counts it; a ``--shard`` run's as one of ``world`` ranks holds it.

    ``prompt_tokens``: a decoder-only model's prompt around the source, where the caller
    has measured it (else :data:`~.decoder_only.PROMPT_TOKENS`)."""
    plan, counts = one_device(config, model_config, precision, budget, prompt_tokens)
    if not config.shard:
        return plan
    return shard_plan(plan, counts.units, world, config.shard_offload, precision.training)


def one_device(
    config: RunConfig,
    model_config: Any,
    precision: Precision,
    budget: tuple[float, str],
    prompt_tokens: int | None = None,
    counts: ParameterCounts | None = None,
) -> tuple[MemoryPlan, ParameterCounts]:
    """The plan of ``config`` with the whole step on one device, and the parameters it
    counted (``counts``: already counted for this model and these adapters)."""
    from workbench.core.model.meta_model import count_parameters
    from workbench.core.train.lora import lora_targets

    targets = lora_targets(config, model_config.model_type) if config.lora else None
    if counts is None:
        counts = count_parameters(model_config, targets, config.lora_rank)
    shape = model_shape(model_config)
    pairs = config.objective in PREFERENCE_OBJECTIVES
    # A preference step runs the chosen and the rejected rows of each example together.
    stepped = dataclasses.replace(config, batch_size=2 * config.batch_size) if pairs else config
    request = PlanRequest(stepped, model_config, shape, counts, targets, precision, budget)
    plan = decoder_only_plan(request, prompt_tokens) if shape.causal else seq2seq_plan(request)
    if not pairs:
        return plan, counts
    frozen = config.objective == "dpo" and not config.lora
    paired = dataclasses.replace(
        plan,
        what=f"{plan.what}, chosen and rejected rows",
        batch_size=config.batch_size,
        reference=counts.total * FP32 if frozen else 0.0,  # a copy of the fp32 weights
    )
    return paired, counts


def _fixes(
    config: RunConfig, precision: Precision, causal: bool = False, lora: bool = True
) -> list[tuple[tuple[str, ...], RunConfig, Precision]]:
    """Ways to make a run smaller, cheapest to the run's quality and speed first: LoRA
    (unless ``lora`` is False), then checkpointing, then bf16 (where the device has it; not
    for a decoder-only model, whose activations autocast does not halve), then halving the
    batch."""
    steps: list[tuple[str, dict[str, Any]]] = []
    if lora and not config.lora and not config.is_scratch and not config.average_checkpoints:
        steps.append(("--lora", {"lora": True}))
    if not config.gradient_checkpointing:
        steps.append(("--gradient-checkpointing", {"gradient_checkpointing": True}))
    found: list[tuple[tuple[str, ...], RunConfig, Precision]] = []
    flags: tuple[str, ...] = ()
    for flag, change in steps:
        flags, config = (*flags, flag), dataclasses.replace(config, **change)
        found.append((flags, config, precision))
    fp32 = precision.training == "fp32" and not config.fp16
    if fp32 and not causal and precision.device in ("cpu", "cuda"):
        precision = dataclasses.replace(precision, training="bf16")
        flags = (*flags, "--bf16")
        found.append((flags, config, precision))
    batch = config.batch_size
    while batch > 1:
        batch //= 2
        config = dataclasses.replace(config, batch_size=batch)
        found.append(((*flags, f"--batch-size {batch}"), config, precision))
    return found


def plan_memory(
    config: RunConfig, model_config: Any, precision: Precision, prompt_tokens: int | None = None
) -> MemoryPlan:
    """The run's plan against one device's memory (a rank's under ``--shard``, over
    :func:`~.sharded.plan_world_size` ranks); for a run that does not fit, the cheapest
    flags that would make it (:func:`_fixes`; a sharded run keeps every weight training,
    so not ``--lora``) and the fewest devices of the budget's size that fit it sharded
    (:func:`sharded_fix`; for a sharded run, more than it has). ``prompt_tokens``: a
    decoder-only model's measured prompt (else :data:`~.decoder_only.PROMPT_TOKENS`)."""
    budget = device_budget(config, precision.device)
    world = plan_world_size(config)
    plan = estimate(config, model_config, precision, budget, prompt_tokens, world)
    if plan.fits:
        return plan
    scale = sharded_fix(config, model_config, precision, budget, prompt_tokens)
    if scale is not None and config.shard and scale.world <= world:
        scale = None  # these flags fit the launch it has: the fix below names them
    fixes = _fixes(config, precision, plan.causal, lora=not config.shard)
    for flags, smaller, arithmetic in fixes:
        try:
            candidate = estimate(smaller, model_config, arithmetic, budget, prompt_tokens, world)
        except WorkbenchError:  # --lora on a family with no default targets: not a fix
            continue
        if candidate.fits:
            return dataclasses.replace(plan, fix=Fix(flags, candidate.total), scale=scale)
    return dataclasses.replace(plan, scale=scale)


def sharded_fix(
    config: RunConfig,
    model_config: Any,
    precision: Precision,
    budget: tuple[float, str],
    prompt_tokens: int | None = None,
) -> Fix | None:
    """The fewest devices of the budget's size that fit the run sharded (``--shard``):
    with its own flags, else with the fewest of :func:`_fixes`' that shrink what sharding
    does not divide (checkpointing, bf16, the batch; never LoRA, which would give up the
    full fine-tune a user shards for). None when no launch up to
    :data:`~workbench.core.records.memory.MOST_GPUS` fits even so."""
    shard = dataclasses.replace(config, shard=True, gpus=0)
    causal = model_shape(model_config).causal
    tries = [((), shard, precision), *_fixes(shard, precision, causal, lora=False)]
    counts: ParameterCounts | None = None  # the same model and adapters for every try
    for flags, smaller, arithmetic in tries:
        whole, counts = one_device(smaller, model_config, arithmetic, budget, prompt_tokens, counts)
        rank_plan = functools.partial(
            shard_plan,
            whole,
            counts.units,
            offload=smaller.shard_offload,
            training=arithmetic.training,
        )
        world = smallest_world(rank_plan)
        if world is not None:
            launched = dataclasses.replace(smaller, bf16=True) if "--bf16" in flags else smaller
            arguments = ("--shard", *command_flags(launched, leave_out=LAUNCH_SETTINGS))
            return Fix(flags, rank_plan(world).total, world, arguments)
    return None


def plan_scorers(config: RunConfig, plan: MemoryPlan) -> list[ScorerMemory]:
    """What each scorer the run asks for will take (``--comet``'s, ``--metricx``'s, then
    ``--rank-by``'s),
    each refused in one line when it cannot fit. They are loaded one at a time, so each is
    held against the budget alone (:func:`plan_scorer`, :func:`plan_metricx`)."""
    found = (plan_scorer(config, plan), plan_metricx(config, plan), plan_ranker(config, plan))
    return [m for m in found if m is not None]


def plan_scorer(config: RunConfig, plan: MemoryPlan) -> ScorerMemory | None:
    """What ``--comet``'s model will take, from its hparams.yaml and encoder config alone
    (fetched now, so a model that cannot be fetched is one line before training); refused
    in one line when it cannot fit: alone, once training has released its model, or with
    ``--select-on comet`` beside the training step of ``plan``."""
    if not config.comet:
        return None
    from workbench.core.comet.plan import scorer_memory
    from workbench.core.comet.scorer import BATCH_SIZE

    tokens = config.max_source_length + config.max_target_length
    budget = (plan.budget, plan.budget_source)
    memory = scorer_memory(config.comet, BATCH_SIZE, tokens, budget)
    if config.select_on == "comet":  # the runtime is counted once
        memory = dataclasses.replace(memory, beside=plan.total - plan.runtime)
    return _fitting(memory)


def plan_metricx(config: RunConfig, plan: MemoryPlan) -> ScorerMemory | None:
    """What ``--metricx``'s model will take, from its config.json alone, once its mode and
    tokenizer are checked (a QE-only checkpoint, or a folder without its tokenizer, is one
    line before training); refused in one line when it cannot fit the budget alone."""
    from workbench.core.evaluate.metricx_scores import check_metricx, run_metricx

    settings = run_metricx(config)
    if settings is None:
        return None
    from workbench.core.metricx.plan import input_tokens, scorer_memory

    check_metricx(settings, ["metricx"])  # a run scores against its references
    tokens = input_tokens(config.max_source_length, config.max_target_length)
    return _fitting(scorer_memory(settings, tokens, (plan.budget, plan.budget_source)))


def _fitting(memory: ScorerMemory) -> ScorerMemory:
    if not memory.fits:
        raise WorkbenchError(scorer_refusal(memory))
    return memory


def check_fits(plan: MemoryPlan, model: str) -> None:
    """Refuse, in one line with the flags that would help, a run that will not fit."""
    if not plan.fits:
        raise WorkbenchError(refusal(plan, model))


def plan_ranker(config: RunConfig, plan: MemoryPlan) -> ScorerMemory | None:
    """What ``--objective``'s neural ranker will take (None: chrF, BLEU, or no objective),
    held against the budget beside the starting model's weights, which drew the
    candidates it scores; refused in one line when it cannot fit."""
    objective = Objective.of(config)
    neural = objective.ceiling.neural_model if objective is not None else None
    if neural is None:
        return None
    kind, model, _ = neural
    budget = (plan.budget, plan.budget_source)
    tokens = config.max_source_length + config.max_target_length
    if kind == "comet":
        from workbench.core.comet.plan import scorer_memory
        from workbench.core.comet.scorer import BATCH_SIZE
        from workbench.core.config.settings import DEFAULT_QE

        memory = scorer_memory(model or DEFAULT_QE, BATCH_SIZE, tokens, budget)
    else:
        from workbench.core.metricx.plan import input_tokens
        from workbench.core.metricx.plan import scorer_memory as metricx_memory
        from workbench.core.picking.metrics import metricx_settings

        reading = (config.metricx_tokenizer, config.metricx_max_length)
        settings = metricx_settings(model, reading=reading)
        tokens = input_tokens(config.max_source_length, config.max_target_length)
        memory = metricx_memory(settings, tokens, budget)
    ranker = dataclasses.replace(memory, flag="--rank-by", beside=plan.weights)
    return _fitting(ranker)
