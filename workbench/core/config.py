"""Run configuration: typed, preset-based, and validated before anything slow happens.

A run is described by one frozen :class:`RunConfig`. It is built from a preset
(:mod:`workbench.core.presets`), then a TOML
file, then command-line flags (later wins), and :func:`validate` checks every value so that
a typo fails in milliseconds rather than after a model download.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from workbench.core.decoding import AUTO_LABEL, LENGTH_CEILING, check_beams, check_new_tokens
from workbench.core.languages import (
    DEFAULT_SOURCE_LANG,
    DEFAULT_TARGET_LANG,
    base_language,
    bleu_tokenizer_for,
)
from workbench.core.presets import DEFAULT_PRESET, PRESETS, SCRATCH_MODEL
from workbench.core.settings import (
    AUTO_TOKENIZER,
    AVERAGE_CHOICES,
    BLEU_TOKENIZERS,
    CLEANING_RULES,
    LR_SCHEDULERS,
    REPORT_TARGETS,
    setting,
)
from workbench.errors import WorkbenchError

#: Where runs, the published best model and the console history go by default.
DEFAULT_OUTPUT_DIR = "translation_output"


@dataclass(frozen=True)
class RunConfig:
    """Everything one fine-tuning run needs; see PRESETS for the defaults per job.

    Each field is one setting: its name is its TOML key and, in kebab case, its flag; its
    metadata holds its group and help for ``--help``; :func:`validate` holds its check.
    """

    # Not a setting() of its own: the preset is the base that TOML and flags override, so
    # it is chosen once (--preset) and a different one among the overrides is refused.
    preset: str = field(default=DEFAULT_PRESET, metadata={"help": "name of the preset used"})
    model: str = setting(
        "Helsinki-NLP/opus-mt-en-zh",
        group="model",
        help="Hub model id, local model folder, or 'scratch' to build one",
    )
    data: str = setting(
        "wmt/wmt19",
        group="data",
        help="Hub dataset id, local TSV/CSV/JSONL file or Moses prefix (corpus for "
        "corpus.en + corpus.zh), .gz too, datasets folder, or 'hsk'",
    )
    data_config: str | None = setting("zh-en", group="data", help="Hub dataset config, or none")
    source_lang: str = setting(
        DEFAULT_SOURCE_LANG,
        group="data",
        help="source language: en, or the model's own code (eng_Latn, en_XX)",
    )
    target_lang: str = setting(
        DEFAULT_TARGET_LANG,
        group="data",
        help="target language: zh, or the model's own code (zho_Hant, >>cmn_Hans<<)",
    )
    target_label: str | None = setting(
        AUTO_LABEL,
        group="model",
        help="Marian's target token (>>cmn_Hans<<); auto: the target language's, or none",
        aliases=("--label",),
    )
    source_prefix: str | None = setting(
        None,
        group="model",
        help="text put before every source, as T5 wants ('translate English to German: ')",
    )
    samples: int = setting(
        50_000, group="data", help="pairs sampled at random from the data (0 = all)"
    )
    validation_fraction: float = setting(
        0.1, group="data", help="validation share: per-epoch charts and best epoch"
    )
    test_fraction: float = setting(
        0.1,
        group="data",
        help="test share held out of local data when no test_data/test_split gives one",
    )
    test_data: str | None = setting(
        None,
        group="data",
        help="local test pairs (before/after BLEU): TSV/CSV/JSONL, Moses prefix, .gz, "
        "datasets folder",
    )
    test_split: str | None = setting(
        "validation",
        group="data",
        help="split of a Hub dataset used as the test set (none = a test_fraction)",
    )
    data_revision: str | None = setting(
        None,
        group="data",
        help="Hub dataset commit the sample is read at (none = the newest, then pinned)",
    )
    max_source_length: int = setting(
        128, group="data", help="source tokens kept (at most the model's positions)"
    )
    max_target_length: int = setting(
        128, group="data", help="target tokens kept (at most the model's positions)"
    )
    clean: bool = setting(
        True,
        group="data",
        help="clean the pairs before the split, counting each rule (--no-clean keeps all)",
    )
    clean_skip: str | None = setting(
        None,
        group="data",
        help=f"cleaning rules left off, comma-separated: {', '.join(CLEANING_RULES)}",
    )
    clean_min_script_share: float = setting(
        0.5,
        group="data",
        help="share of a side's letters that must be in its language's script (Han for zh)",
    )
    clean_max_length_ratio: float = setting(
        9.0,
        group="data",
        help="longest side over shortest, in words (characters for zh, ja, th)",
    )
    drop_long: bool = setting(
        False,
        group="data",
        help="drop pairs longer than the max lengths (default: counted, then truncated)",
    )
    batch_size: int = setting(16, group="training", help="training batch per device")
    eval_batch_size: int = setting(16, group="decoding", help="evaluation batch per device")
    learning_rate: float = setting(
        2e-5, group="training", help="peak learning rate", aliases=("--lr",)
    )
    epochs: float = setting(3.0, group="training", help="training epochs (a fraction allowed)")
    early_stopping: int = setting(
        0,
        group="training",
        help="stop after this many epochs without a validation BLEU gain (0 = every epoch)",
    )
    average_checkpoints: int = setting(
        0,
        group="training",
        help="average the weights of this many epoch checkpoints; kept only when better "
        "on validation (0 = off)",
    )
    average: str = setting(
        "best",
        group="training",
        help=f"which checkpoints are averaged: {' or '.join(AVERAGE_CHOICES)} epochs",
    )
    warmup_ratio: float = setting(0.0, group="training", help="share of steps warming up")
    lr_scheduler: str = setting(
        "linear", group="training", help=f"transformers schedule: {', '.join(LR_SCHEDULERS)}"
    )
    weight_decay: float = setting(0.0, group="training", help="AdamW weight decay")
    label_smoothing: float = setting(0.0, group="training", help="label smoothing factor")
    seed: int = setting(42, group="training", help="seed for sampling, split and training")
    fp16: bool = setting(False, group="training", help="fp16 mixed precision (CUDA only)")
    bf16: bool | None = setting(
        None,
        group="training",
        help="bf16 mixed precision, also on CPU (unset: on where the GPU has it)",
    )
    logging_steps: int = setting(50, group="output", help="optimizer steps between logs")
    bleu_tokenize: str = setting(
        AUTO_TOKENIZER,
        group="decoding",
        help=f"sacreBLEU tokenizer: {', '.join(BLEU_TOKENIZERS)} (auto: zh for Chinese, "
        "13a for most others)",
    )
    report_to: str = setting(
        "none", group="output", help=f"metrics besides metrics.jsonl: {' or '.join(REPORT_TARGETS)}"
    )
    # Under torchrun rank 0 alone samples the data and decodes the "before" sets while the
    # others wait at a barrier; NCCL's 10-minute default killed such runs on slow GPUs.
    ddp_timeout: int = setting(
        1800, group="training", help="seconds a process waits for the others under torchrun"
    )
    eval_num_beams: int = setting(
        1, group="decoding", help="beams for per-epoch evaluation (greedy is 4x cheaper)"
    )
    num_beams: int = setting(4, group="decoding", help="beams for before/after BLEU")
    max_new_tokens: int = setting(128, group="decoding", help="generation length bound")
    no_repeat_ngram_size: int = setting(
        0, group="decoding", help="generation n-gram block (0 = none)"
    )
    output_dir: str = setting(
        DEFAULT_OUTPUT_DIR, group="output", help="root folder for runs and best_model"
    )
    num_samples_shown: int = setting(5, group="output", help="before/after samples shown")
    # Shape of the model built when model == "scratch" (the offline demo).
    scratch_d_model: int = setting(192, group="model", help="scratch model width")
    scratch_layers: int = setting(2, group="model", help="scratch encoder and decoder layers")
    scratch_heads: int = setting(4, group="model", help="scratch attention heads")
    scratch_ffn_dim: int = setting(768, group="model", help="scratch feed-forward width")
    scratch_dropout: float = setting(0.1, group="model", help="scratch dropout")
    scratch_source_vocab: int = setting(3000, group="model", help="scratch source spm pieces")
    scratch_target_vocab: int = setting(2500, group="model", help="scratch target spm pieces")

    def __post_init__(self) -> None:
        # "auto" is recorded as the tokenizer it stands for, so config.json, the summary
        # and every score's signature name the real one.
        if self.bleu_tokenize == AUTO_TOKENIZER:
            object.__setattr__(self, "bleu_tokenize", bleu_tokenizer_for(self.target_lang)[0])

    @property
    def is_scratch(self) -> bool:
        """True when the model is built by the workbench rather than loaded."""
        return self.model == SCRATCH_MODEL

    @property
    def data_source_lang(self) -> str:
        """The source language as data names it (``en`` for ``eng_Latn``): the column,
        the Moses suffix, the Hub dataset's translation key."""
        return base_language(self.source_lang) or self.source_lang

    @property
    def data_target_lang(self) -> str:
        """The target language as data names it (``zh`` for ``zho_Hant`` or ``zh_CN``)."""
        return base_language(self.target_lang) or self.target_lang

    def skipped_rules(self) -> tuple[str, ...]:
        """The cleaning rules ``clean_skip`` leaves off, as named there."""
        return tuple(r.strip() for r in (self.clean_skip or "").split(",") if r.strip())

    def cleaning_rules(self) -> tuple[str, ...]:
        """The cleaning rules this run applies, in order (none with ``--no-clean``)."""
        if not self.clean:
            return ()
        return tuple(r for r in CLEANING_RULES if r not in self.skipped_rules())

    def languages(self) -> dict[str, str | None]:
        """The run's direction as the translating front ends take it (the base model of
        a run decodes in it, as the run's "before" side did)."""
        return {
            "source_lang": self.source_lang,
            "target_lang": self.target_lang,
            "target_label": self.target_label,
            "source_prefix": self.source_prefix,
        }

    def to_dict(self) -> dict[str, Any]:
        """Plain dict for config.json in the run folder."""
        return dataclasses.asdict(self)


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
    if preset not in PRESETS:
        raise WorkbenchError(f"unknown preset '{preset}'; choose one of: {', '.join(PRESETS)}")
    values: dict[str, Any] = {"preset": preset, **PRESETS[preset]}
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
    config = RunConfig(**values)
    validate(config)
    return config


def _check(ok: bool, message: str) -> None:
    if not ok:
        raise WorkbenchError(message)


def validate(c: RunConfig) -> None:
    """Raise WorkbenchError with the value and the fix for the first bad field."""
    _check(bool(c.model.strip()), "model is empty; pass a Hub id, a local folder or 'scratch'")
    _check(bool(c.data.strip()), "data is empty; pass a Hub id, a local file or 'hsk'")
    _check(c.samples >= 0, f"samples must be >= 0 (0 = all), got {c.samples}")
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
    for name in ("max_source_length", "max_target_length"):
        value = getattr(c, name)
        _check(
            1 <= value <= LENGTH_CEILING,
            f"{name} must be between 1 and {LENGTH_CEILING}, got {value}",
        )
    check_new_tokens(c.max_new_tokens)
    for name in ("num_beams", "eval_num_beams"):
        check_beams(getattr(c, name), name)
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
        c.average in AVERAGE_CHOICES,
        f"average '{c.average}' is not a choice; use {' or '.join(AVERAGE_CHOICES)}",
    )
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
    if c.target_label not in (None, AUTO_LABEL):
        _check(
            c.target_label.startswith(">>") and c.target_label.endswith("<<"),
            f"target_label '{c.target_label}' should look like '>>cmn_Hans<<', or be auto "
            "or none (NLLB, M2M100 and mBART-50 take --target-lang zho_Hans and the like)",
        )
    if c.is_scratch:
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
    _check(bool(c.output_dir.strip()), "output_dir is empty; pass a folder")
    out = Path(c.output_dir).expanduser()
    _check(
        not out.exists() or out.is_dir(),
        f"output dir '{out}' exists and is not a folder; pass a folder with --output-dir",
    )
