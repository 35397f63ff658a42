"""Building a :class:`~workbench.core.config.run_config.RunConfig` from a preset, a TOML file and
flags (later wins), every value coerced to its field's type, and :func:`validate`, which
checks every value so that a typo fails in milliseconds rather than after a model
download.
"""

from __future__ import annotations

import math
from dataclasses import fields
from pathlib import Path
from typing import Any

from workbench.core.config.presets import DEFAULT_PRESET, PRESETS, preset_named
from workbench.core.config.run_config import RunConfig
from workbench.core.config.scorer_settings import check_scorer_settings
from workbench.core.config.settings import (
    AVERAGE_CHOICES,
    BLEU_TOKENIZERS,
    CLEANING_RULES,
    LR_SCHEDULERS,
    PROMPTS,
    REPORT_TARGETS,
    SELECT_ON,
    check_template,
    read_prompt_template,
)
from workbench.core.decoding import AUTO_LABEL, LENGTH_CEILING, check_beams, check_new_tokens
from workbench.errors import WorkbenchError

FIELD_NAMES = tuple(f.name for f in fields(RunConfig))


def preset_values(name: str) -> dict[str, Any]:
    """A setting's value in each preset, by preset name (as the preset writes it)."""
    default = next(f.default for f in fields(RunConfig) if f.name == name)
    return {preset: values.get(name, default) for preset, values in PRESETS.items()}


_TYPES = {f.name: str(f.type) for f in fields(RunConfig)}  # "int", "str | None", ...


def setting_type(name: str) -> tuple[str, bool]:
    """A setting's base type (``bool``, ``int``, ``float`` or ``str``) and whether it may
    be none."""
    return _TYPES[name].replace(" | None", ""), "None" in _TYPES[name]


def _coerce(name: str, value: Any) -> Any:
    """Convert a TOML/CLI value to the field's type, or raise a one-line error."""
    base, optional = setting_type(name)
    if value is None or (optional and isinstance(value, str) and value.lower() in ("", "none")):
        if optional:
            return None
        raise WorkbenchError(f"config '{name}' cannot be empty")
    try:
        if base == "bool":
            if isinstance(value, bool):
                return value
            text = str(value).strip().lower()
            if text in ("1", "true", "yes", "on"):
                return True
            if text in ("0", "false", "no", "off"):
                return False
            raise ValueError
        if base == "int":
            if isinstance(value, bool):
                raise ValueError
            if isinstance(value, float) and not value.is_integer():
                raise ValueError
            return int(str(value).replace("_", "")) if isinstance(value, str) else int(value)
        if base == "float":
            if isinstance(value, bool):
                raise ValueError
            return float(value)
        return str(value)
    except (TypeError, ValueError):
        raise WorkbenchError(
            f"config '{name}' must be {base.replace('str', 'text')}, got {value!r}"
        ) from None


def build_config(
    preset: str = DEFAULT_PRESET,
    toml_values: dict[str, Any] | None = None,
    overrides: dict[str, Any] | None = None,
) -> RunConfig:
    """Preset, then TOML, then flags; every value coerced and the result validated."""
    values: dict[str, Any] = {"preset": preset, **preset_named(preset)}
    for source in (toml_values or {}, overrides or {}):
        for key, value in source.items():
            name = key.replace("-", "_")
            if name not in FIELD_NAMES:
                raise WorkbenchError(
                    f"unknown config key '{key}'; valid keys: {', '.join(FIELD_NAMES)}"
                )
            if name == "preset" and value != preset:
                raise WorkbenchError("set the preset with --preset, not inside the config file")
            values[name] = _coerce(name, value)
    if values.get("prompt_template") is not None:  # the file's text, kept in config.json
        values["prompt_template"] = read_prompt_template(values["prompt_template"])
    config = RunConfig(**values)
    validate(config)
    return config


def _check(ok: bool, message: str) -> None:
    if not ok:
        raise WorkbenchError(message)


def validate(c: RunConfig) -> None:
    """Raise WorkbenchError with the value and the fix for the first bad field.

    The checks run in a fixed order, group by group, so a config with two bad values
    always names the same one first.
    """
    _check_data(c)
    _check_lengths(c)
    _check_schedule(c)
    _check_cleaning(c)
    _check_training_numbers(c)
    _check_named_choices(c)
    _check_model(c)
    picks_with = c.utility if c.pick == "mbr" else c.qe_metric if c.pick == "qe" else None
    check_scorer_settings(c, picks_with_metricx=picks_with == "metricx")
    _check_output(c)


def _check_data(c: RunConfig) -> None:
    """The model and data named, and how the pairs are drawn and split."""
    _check(bool(c.model.strip()), "model is empty; pass a Hub id, a local folder or 'scratch'")
    _check(bool(c.data.strip()), "data is empty; pass a Hub id, a local file or 'hsk'")
    _check(c.samples >= 0, f"samples must be >= 0 (0 = all), got {c.samples}")
    _check(c.num_proc >= 0, f"num_proc must be >= 0 (0 = one per core), got {c.num_proc}")
    _check(
        0 < c.validation_fraction < 1,
        f"validation_fraction must be between 0 and 1, got {c.validation_fraction}",
    )
    _check(0 < c.test_fraction < 1, f"test_fraction must be between 0 and 1, got {c.test_fraction}")
    _check(
        c.validation_fraction + c.test_fraction < 1,
        f"validation_fraction + test_fraction must leave pairs to train on, got "
        f"{c.validation_fraction} + {c.test_fraction}",
    )


def _check_lengths(c: RunConfig) -> None:
    """The token lengths of inputs and outputs, and the beams that decode them."""
    for name in ("max_source_length", "max_target_length"):
        value = getattr(c, name)
        _check(
            1 <= value <= LENGTH_CEILING,
            f"{name} must be between 1 and {LENGTH_CEILING}, got {value}",
        )
    check_new_tokens(c.max_new_tokens)
    for name in ("num_beams", "eval_num_beams"):
        check_beams(getattr(c, name), name)


def _check_schedule(c: RunConfig) -> None:
    """Batches, the learning rate and epochs, and how the model kept at the end is chosen
    (early stopping, averaging, ``select_on``)."""
    for name in ("batch_size", "eval_batch_size", "logging_steps"):
        value = getattr(c, name)
        _check(value >= 1, f"{name} must be a positive whole number, got {value}")
    _check(
        math.isfinite(c.learning_rate) and 0 < c.learning_rate <= 1,
        f"learning rate must be in (0, 1], got {c.learning_rate}; 2e-5 is typical for fine-tuning",
    )
    _check(
        math.isfinite(c.epochs) and 0 < c.epochs <= 1000,
        f"epochs must be in (0, 1000], got {c.epochs}",
    )
    _check(
        c.early_stopping >= 0,
        f"early_stopping must be >= 0 epochs (0 = off), got {c.early_stopping}",
    )
    _check(
        c.average_checkpoints >= 0 and c.average_checkpoints != 1,
        f"average_checkpoints must be 0 (off) or at least 2, got {c.average_checkpoints}",
    )
    _check(
        c.select_on in SELECT_ON,
        f"select_on '{c.select_on}' is not a choice; use {' or '.join(SELECT_ON)}",
    )
    if c.select_on == "comet":
        _check(
            bool(c.comet),
            "--select-on comet needs the COMET model to choose with: add --comet "
            "(Unbabel/wmt22-comet-da) or --comet MODEL",
        )
        _check(
            not c.average_checkpoints and not c.early_stopping,
            "--select-on comet does not go with --average-checkpoints or --early-stopping, "
            "which weigh validation BLEU; leave those out, or select on bleu",
        )
    _check(
        c.average in AVERAGE_CHOICES,
        f"average '{c.average}' is not a choice; use {' or '.join(AVERAGE_CHOICES)}",
    )


def _check_cleaning(c: RunConfig) -> None:
    """The cleaning rules skipped, and the thresholds of those that run."""
    for rule in c.skipped_rules():
        _check(
            rule in CLEANING_RULES,
            f"clean_skip names '{rule}', which is no cleaning rule; use any of: "
            f"{', '.join(CLEANING_RULES)}",
        )
    _check(
        0 <= c.clean_min_script_share <= 1,
        f"clean_min_script_share must be in [0, 1], got {c.clean_min_script_share}",
    )
    _check(
        c.clean_max_length_ratio >= 1,
        f"clean_max_length_ratio must be >= 1, got {c.clean_max_length_ratio}",
    )


def _check_training_numbers(c: RunConfig) -> None:
    """The optimiser's and the loss's shares, the n-gram block, the samples shown, the
    seed, the processes' timeout and the precision."""
    _check(0 <= c.warmup_ratio < 1, f"warmup_ratio must be in [0, 1), got {c.warmup_ratio}")
    _check(0 <= c.weight_decay < 1, f"weight_decay must be in [0, 1), got {c.weight_decay}")
    _check(
        0 <= c.label_smoothing < 1, f"label_smoothing must be in [0, 1), got {c.label_smoothing}"
    )
    _check(c.no_repeat_ngram_size >= 0, "no_repeat_ngram_size must be >= 0")
    _check(c.num_samples_shown >= 0, "num_samples_shown must be >= 0")
    _check(0 <= c.seed < 2**32, f"seed must be in [0, 2**32), got {c.seed}")
    _check(
        c.ddp_timeout >= 1, f"ddp_timeout must be a positive number of seconds, got {c.ddp_timeout}"
    )
    _check(
        not (c.fp16 and c.bf16),
        "fp16 and bf16 cannot both be on; choose one (bf16 where the GPU supports it)",
    )


def _check_named_choices(c: RunConfig) -> None:
    """The settings that name one of a library's choices: BLEU's tokenizer, where metrics
    are reported, the learning-rate schedule."""
    _check(
        c.bleu_tokenize in BLEU_TOKENIZERS,
        f"bleu_tokenize '{c.bleu_tokenize}' is not a sacreBLEU tokenizer; "
        f"use one of: {', '.join(BLEU_TOKENIZERS)}",
    )
    _check(
        c.report_to in REPORT_TARGETS,
        f"report_to '{c.report_to}' is not supported; use one of: {', '.join(REPORT_TARGETS)}",
    )
    _check(
        c.lr_scheduler in LR_SCHEDULERS,
        f"lr_scheduler '{c.lr_scheduler}' is not supported; use one of: {', '.join(LR_SCHEDULERS)}",
    )


def _check_model(c: RunConfig) -> None:
    """How the model is told the language (a label or a prompt), the scratch model's
    shape, LoRA's settings and the memory budget."""
    if c.target_label not in (None, AUTO_LABEL):
        _check(
            c.target_label.startswith(">>") and c.target_label.endswith("<<"),
            f"target_label '{c.target_label}' should look like '>>cmn_Hans<<', or be auto "
            "or none (NLLB, M2M100 and mBART-50 take --target-lang zho_Hans and the like)",
        )
    if c.prompt is not None:
        _check(
            c.prompt in PROMPTS,
            f"prompt '{c.prompt}' is not a built-in prompt; use {', '.join(PROMPTS)}, or "
            "--prompt-template FILE for your own",
        )
    if c.prompt_template is not None:
        check_template(c.prompt_template, "(prompt_template)")
    if c.is_scratch:
        _check_scratch(c)
    _check(c.lora_rank >= 1, f"lora_rank must be a positive whole number, got {c.lora_rank}")
    _check(c.lora_alpha >= 1, f"lora_alpha must be a positive whole number, got {c.lora_alpha}")
    _check(0 <= c.lora_dropout < 1, f"lora_dropout must be in [0, 1), got {c.lora_dropout}")
    _check(
        math.isfinite(c.memory_budget) and c.memory_budget >= 0,
        f"memory_budget must be >= 0 GB (0 = the device's memory), got {c.memory_budget}",
    )
    _check(c.gpus >= 0, f"gpus must be a whole number >= 0 (0 = the launcher's), got {c.gpus}")
    _check(
        c.shard or not c.shard_offload,
        "--shard-offload offloads a sharded run's state; add --shard, or drop --shard-offload",
    )
    _check(
        c.shard or not c.gpus,
        f"--gpus {c.gpus} divides a --shard run's plan; add --shard, or drop --gpus",
    )
    if c.lora:
        _check(
            not c.is_scratch,
            "--lora adapts a pretrained model, and the scratch model starts from random "
            "weights; drop --lora (or pass --model with a pretrained one)",
        )
        _check(
            not c.average_checkpoints,
            "--average-checkpoints averages whole weights, and a --lora run's checkpoints "
            "hold adapters; drop one of the two",
        )


def _check_scratch(c: RunConfig) -> None:
    """The shape of the model built from scratch (``--model scratch``)."""
    _check(
        c.scratch_d_model % c.scratch_heads == 0,
        f"scratch_d_model ({c.scratch_d_model}) must be divisible by scratch_heads "
        f"({c.scratch_heads})",
    )
    for name in ("scratch_d_model", "scratch_layers", "scratch_heads", "scratch_ffn_dim"):
        _check(getattr(c, name) >= 1, f"{name} must be positive, got {getattr(c, name)}")
    _check(0 <= c.scratch_dropout < 1, "scratch_dropout must be in [0, 1)")
    for name in ("scratch_source_vocab", "scratch_target_vocab"):
        _check(
            100 <= getattr(c, name) <= 64_000,
            f"{name} must be 100..64000, got {getattr(c, name)}",
        )


def _check_output(c: RunConfig) -> None:
    """The folder the run writes into: named, and a folder if it exists."""
    _check(bool(c.output_dir.strip()), "output_dir is empty; pass a folder")
    out = Path(c.output_dir).expanduser()
    _check(
        not out.exists() or out.is_dir(),
        f"output dir '{out}' exists and is not a folder; pass a folder with --output-dir",
    )
