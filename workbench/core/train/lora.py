"""LoRA adapters (peft) on a run's model, and the merged model a LoRA run publishes.

With ``--lora`` the Trainer trains a ``PeftModel``: the base weights frozen, rank-r
adapters on the family's attention projections (:func:`lora_targets`). transformers saves
and resumes such a model natively: a checkpoint holds ``adapter_model.safetensors`` and
the adapters' optimizer state, and ``load_best_model_at_end`` loads the best adapter.

What a LoRA run publishes is the base model with the best adapter merged into its weights
(:func:`save_merged`), a plain model that ``translate``, ``attention``, the Lab, the report,
``compare`` and ``export --ctranslate2`` read as they read any other; the adapter itself
is kept beside it in ``best_model/adapter/``, megabytes where the model is gigabytes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from workbench.core.atomic import save_atomically
from workbench.core.config.run_config import RunConfig
from workbench.core.model.family import default_lora_targets
from workbench.core.records.model_settings import ModelSettings, write_model_settings

#: Where a LoRA run's ``best_model/`` keeps the adapter its weights were merged from.
ADAPTER_FOLDER = "adapter"
#: The adapter's weights in a checkpoint or an adapter folder, as peft names them.
ADAPTER_WEIGHTS = "adapter_model.safetensors"


def lora_targets(config: RunConfig, model_type: str) -> tuple[str, ...]:
    """The layers the adapters go on: ``--lora-targets``, else the family's own."""
    return config.lora_target_names() or default_lora_targets(model_type)


def with_adapters(model: Any, config: RunConfig) -> Any:
    """``model`` wrapped by peft with fresh adapters (B = 0: the model's outputs are
    unchanged until the first step), every other weight frozen."""
    from peft import LoraConfig, TaskType, get_peft_model

    lora = LoraConfig(
        # peft's wrapper for each kind: a causal LM's forward takes no decoder inputs
        task_type=TaskType.SEQ_2_SEQ_LM if model.config.is_encoder_decoder else TaskType.CAUSAL_LM,
        r=config.lora_rank,
        lora_alpha=config.lora_alpha,
        lora_dropout=config.lora_dropout,
        target_modules=list(lora_targets(config, model.config.model_type)),
    )
    adapted = get_peft_model(model, lora)
    # The adapter's config names its base: a local folder by its full path, so that
    # AutoPeftModel finds it from any directory (a Hub id stays an id).
    local = Path(config.model).expanduser()
    if local.is_dir():
        adapted.peft_config["default"].base_model_name_or_path = str(local.resolve())
    return adapted


def is_adapted(model: Any) -> bool:
    """Whether ``model`` is a peft model (a LoRA run's), whose saves hold adapters only."""
    return hasattr(model, "peft_config") and hasattr(model, "merge_and_unload")


def trainable_line(model: Any) -> str:
    """``LoRA rank 8, alpha 16 on q_proj, v_proj: 1,536 trainable parameters of 26,432
    (5.81%)``: peft's own count, the adapters included in the whole."""
    trainable, total = model.get_nb_trainable_parameters()
    config = next(iter(model.peft_config.values()))
    targets = ", ".join(sorted(config.target_modules))
    return (
        f"LoRA rank {config.r}, alpha {config.lora_alpha} on {targets}: {trainable:,} "
        f"trainable parameters of {total:,} ({100 * trainable / total:.2f}%)"
    )


def save_merged(model: Any, tokenizer: Any, destination: Path, settings: ModelSettings) -> None:
    """Write the adapter to ``destination/adapter`` and the base model with it merged to
    ``destination``, atomically.

    The merge is done in place (no second copy of a large model in memory): ``model`` is
    a plain model afterwards, and the run has no more use for its adapters.
    """

    def write(folder: Path) -> None:
        model.save_pretrained(str(folder / ADAPTER_FOLDER))
        merged = model.merge_and_unload()
        merged.save_pretrained(str(folder))
        tokenizer.save_pretrained(str(folder))
        write_model_settings(folder, settings)

    save_atomically(destination, write)


def load_adapter_weights(model: Any, checkpoint: Path) -> None:
    """Put the adapter saved in ``checkpoint`` back into ``model`` (a peft model): the best
    checkpoint's adapter, after a NaN loss broke the ones in memory (the frozen base
    weights cannot have changed)."""
    from peft import set_peft_model_state_dict
    from safetensors.torch import load_file

    set_peft_model_state_dict(model, load_file(str(checkpoint / ADAPTER_WEIGHTS)))
