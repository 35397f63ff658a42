"""What ``--pick``'s candidates will take after training, held against the run's memory
plan before any weight is loaded: a run whose test lines' candidates cannot be decoded
is refused in one line now, not after hours of training.

"After" is decoded with the training model released (``release_model``), so the
candidates sit beside the best model's fp32 weights and the framework's runtime alone;
their bytes a line are :mod:`workbench.core.translate.candidate_memory`'s, which
checks them again against the memory free when they are decoded.
"""

from __future__ import annotations

from typing import Any

from workbench.core.config.run_config import RunConfig
from workbench.core.decoding import DecodeOptions
from workbench.core.records.memory import MemoryPlan
from workbench.core.translate.candidate_memory import (
    USABLE_SHARE,
    decoded_rows,
    refusal,
    sequence_bytes,
)
from workbench.core.translate.picked import PickSettings
from workbench.errors import WorkbenchError

#: Bytes per value while "after" decodes: in fp32, as "before" did.
DECODING_BYTES = 4


def check_candidates_fit(config: RunConfig, model_config: Any, plan: MemoryPlan) -> None:
    """Refuse, in one line, candidates whose one line cannot fit the plan's budget beside
    the model: ``--pick``'s, drawn from the best model after training, and
    ``--objective``'s, drawn from the starting model for each training source (nothing to
    check without either)."""
    from workbench.core.train.objective import Objective

    pick = PickSettings.requested(config, config.qe_model)
    objective = Objective.of(config)
    drawn = [s.candidates for s in (pick, objective) if s is not None]
    free = plan.budget - plan.parameters * DECODING_BYTES - plan.runtime
    where = f"left of the plan's {plan.budget / 1e9:.1f} GB {plan.budget_source} beside the model"
    base = DecodeOptions(config.num_beams, config.max_new_tokens, config.no_repeat_ngram_size)
    for options in (o for candidates in drawn for o in candidates.decodings(base)):
        each = sequence_bytes(
            model_config, DECODING_BYTES, config.max_source_length, options.max_new_tokens
        )
        needed = decoded_rows(options) * each
        if needed > free * USABLE_SHARE:
            raise WorkbenchError(
                refusal(options, needed, config.max_source_length, max(0.0, free), where)
            )
