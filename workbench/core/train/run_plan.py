"""A run's memory plan, made once for the run that starts and for ``train --plan-only``,
which prints it and stops: the model's config (a local folder's config.json, or the
Hub's config alone), the device and its arithmetic, the training step's plan (a rank's
under ``--shard``) and the scorers' beside it. No weight, tokenizer or data is read, so a
7B model's run can be sized for a cluster on a laptop without a GPU.

The plan leaves out what needs the tokenizer: a decoder-only model's prompt is the plan's
estimate (:data:`~workbench.core.train.memory.decoder_only.PROMPT_TOKENS`), in the run
that starts as in the plan that only prints.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from workbench.core.config.run_config import RunConfig
from workbench.core.model.load import pick_device
from workbench.core.records.memory import MemoryPlan, ScorerMemory
from workbench.core.records.run_records import Precision
from workbench.core.train.memory.candidates import check_candidates_fit
from workbench.core.train.memory.plan import plan_memory, plan_scorers
from workbench.core.train.preflight import check_model_reachable
from workbench.core.train.run_model import resolve_precision, run_model_config


@dataclass(frozen=True)
class RunPlan:
    """What the plan was made from (the model's config, the arithmetic) and what it says
    (the step's bytes, the scorers')."""

    model_config: Any
    precision: Precision
    plan: MemoryPlan
    scorers: list[ScorerMemory]


def plan_run(config: RunConfig) -> RunPlan:
    """The plan of ``config``'s run from its model's config alone; a scorer that cannot
    fit is refused in one line (:func:`~.memory.plan.plan_scorers`)."""
    model_config = run_model_config(config)
    precision = resolve_precision(config, pick_device(), model_config)
    plan = plan_memory(config, model_config, precision)
    return RunPlan(model_config, precision, plan, plan_scorers(config, plan))


def plan_only(config: RunConfig) -> RunPlan:
    """``train --plan-only``'s plan: the model checked as a run checks it (its folder, or
    the Hub), then :func:`plan_run`; a plan that fits also has its candidates checked
    (``--pick``'s, ``--objective``'s), as the run that starts would."""
    check_model_reachable(config)
    planned = plan_run(config)
    if planned.plan.fits:
        check_candidates_fit(config, planned.model_config, planned.plan)
    return planned
