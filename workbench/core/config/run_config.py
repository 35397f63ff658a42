"""Run configuration: typed, preset-based, and validated before anything slow happens.

A run is described by one frozen :class:`RunConfig`. It is built from a preset
(:mod:`workbench.core.config.presets`), then a TOML file, then command-line flags (later wins),
and checked, by :mod:`workbench.core.config.build`.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from workbench.core.config import objective_settings, picking_settings, sharding_settings
from workbench.core.config.direction_request import DirectionRequest
from workbench.core.config.presets import DEFAULT_PRESET, SCRATCH_MODEL
from workbench.core.config.scorer_settings import ScorerSettings
from workbench.core.config.settings import (
    AUTO_TOKENIZER,
    AVERAGE_CHOICES,
    BLEU_TOKENIZERS,
    CLEANING_RULES,
    LR_SCHEDULERS,
    REPORT_TARGETS,
    SELECT_ON,
    setting,
)
from workbench.core.decoding import AUTO_LABEL
from workbench.core.languages import (
    DEFAULT_SOURCE_LANG,
    DEFAULT_TARGET_LANG,
    base_language,
    bleu_tokenizer_for,
)

#: Where runs, the published best model and the console history go by default.
DEFAULT_OUTPUT_DIR = "translation_output"


@dataclass(frozen=True)
class RunConfig(ScorerSettings):
    """Everything one fine-tuning run needs; see PRESETS for the defaults per job.

    Each field is one setting: its name is its TOML key and, in kebab case, its flag; its
    metadata holds its group and help for ``--help``; :func:`validate` holds its check.
    The neural metrics that judge the held-out sets are :class:`ScorerSettings`' fields.
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
    prompt: str | None = setting(
        None,
        group="model",
        help="how a decoder-only model is asked to translate: chat (its chat template, "
        "the default where it has one), alma or seed-x",
    )
    prompt_template: str | None = setting(
        None,
        group="model",
        help="a decoder-only model's own prompt: a file (in TOML also the text) with "
        "{source}, and {source_lang}, {target_lang} where wanted",
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
        help="clean the pairs before the split, counting what each rule drops",
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
    num_proc: int = setting(
        0,
        group="data",
        help="processes that clean and tokenize the data (0 = one per core; same result)",
    )
    batch_size: int = setting(16, group="training", help="training batch per device")
    eval_batch_size: int = setting(16, group="decoding", help="evaluation batch per device")
    learning_rate: float = setting(
        2e-5, group="training", help="peak learning rate", aliases=("--lr",)
    )
    epochs: float = setting(3.0, group="training", help="training epochs (a fraction allowed)")
    select_on: str = setting(
        "bleu",
        group="training",
        help=f"what chooses the best epoch on the validation set: {' or '.join(SELECT_ON)} "
        "(the --comet model, loaded for each epoch's evaluation); the test set never chooses",
    )
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
    lora: bool = setting(
        False,
        group="memory",
        help="train LoRA adapters (peft) instead of every weight; best_model is published "
        "merged, its adapter kept beside it",
    )
    lora_rank: int = setting(8, group="memory", help="LoRA rank: the adapters' inner width")
    lora_alpha: int = setting(
        16, group="memory", help="LoRA alpha: the adapters' update is scaled by alpha / rank"
    )
    lora_dropout: float = setting(0.05, group="memory", help="dropout on the adapters' input")
    lora_targets: str | None = setting(
        None,
        group="memory",
        help="linear layers the adapters go on, comma-separated (none = the family's: "
        "q_proj,v_proj; T5: q,v)",
    )
    gradient_checkpointing: bool = setting(
        False,
        group="memory",
        help="recompute activations in the backward pass (transformers'): less memory, "
        "about a third slower",
    )
    memory_budget: float = setting(
        0.0,
        group="memory",
        help="GB of one device the memory plan checks the run against, also for each GPU "
        "of a --shard or torchrun run (0 = this machine's: the GPU's free memory, or the "
        "RAM available)",
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
    # sharding (train --shard): defined in sharding_settings, which says why
    shard: bool = sharding_settings.SHARD
    shard_offload: bool = sharding_settings.SHARD_OFFLOAD
    gpus: int = sharding_settings.GPUS
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
    # picking (train --pick): defined in picking_settings, where their docstring says why
    pick: str | None = picking_settings.PICK
    candidates: int | None = picking_settings.CANDIDATES
    candidates_from: str = picking_settings.CANDIDATES_FROM
    epsilon: float | None = picking_settings.EPSILON
    top_p: float = picking_settings.TOP_P
    temperature: float = picking_settings.TEMPERATURE
    utility: str | None = picking_settings.UTILITY
    utility_model: str | None = picking_settings.UTILITY_MODEL
    fast_mbr: bool = picking_settings.FAST_MBR
    qe_metric: str = picking_settings.QE_METRIC
    qe_model: str | None = picking_settings.QE_MODEL
    # the objective (train --objective): defined in objective_settings, which says why
    objective: str = objective_settings.OBJECTIVE
    rank_by: str | None = objective_settings.RANK_BY
    beta: float = objective_settings.BETA
    nll_weight: float = objective_settings.NLL_WEIGHT
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

    def lora_target_names(self) -> tuple[str, ...]:
        """The layers ``lora_targets`` names (empty: the family's defaults)."""
        return tuple(t.strip() for t in (self.lora_targets or "").split(",") if t.strip())

    def skipped_rules(self) -> tuple[str, ...]:
        """The cleaning rules ``clean_skip`` leaves off, as named there."""
        return tuple(r.strip() for r in (self.clean_skip or "").split(",") if r.strip())

    def cleaning_rules(self) -> tuple[str, ...]:
        """The cleaning rules this run applies, in order (none with ``--no-clean``)."""
        if not self.clean:
            return ()
        return tuple(r for r in CLEANING_RULES if r not in self.skipped_rules())

    def direction_request(self) -> DirectionRequest:
        """The run's direction as the translating front ends ask it (the base model of a
        run decodes in it, as the run's "before" side did)."""
        return DirectionRequest(
            source_lang=self.source_lang,
            target_lang=self.target_lang,
            target_label=self.target_label,
            source_prefix=self.source_prefix,
            prompt=self.prompt,
            prompt_template=self.prompt_template,
        )

    def to_dict(self) -> dict[str, Any]:
        """Plain dict for config.json in the run folder."""
        return dataclasses.asdict(self)
