"""The model of a run: loaded or built from the configuration, bounded, and described.

What ``run_training`` does to a model besides training it: load a Hub or local model (or
build the scratch one), bound its generation, pick the arithmetic it trains in, and write
the settings a saved model needs to be decoded the same way everywhere (workbench.json).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from workbench.core.config.run_config import RunConfig
from workbench.core.data.arrow_pairs import PairTable
from workbench.core.data.pair import Pair
from workbench.core.data.splits import SplitData
from workbench.core.data.tokenize import PairTokenizer
from workbench.core.events import EventSink, Note
from workbench.core.languages import Direction
from workbench.core.records.model_settings import ModelSettings, write_model_settings
from workbench.core.records.run_records import FP32_DECODING, Precision
from workbench.core.run_folder.layout import RunFolder
from workbench.core.train import distributed
from workbench.errors import WorkbenchError


def run_direction(config: RunConfig, tokenizer: Any, model_config: Any) -> Direction:
    """The run's direction on its model, with the lengths checked against the model's
    positions: a language, label or length mistake fails here, before the run folder."""
    from workbench.core.model.architecture import model_class
    from workbench.core.model.direction import resolve_direction
    from workbench.core.model.family import max_positions
    from workbench.core.model.prompts import prompt_overhead

    model_class(model_config)  # an encoder (BERT) is refused here, in one line
    direction = resolve_direction(
        model_config.model_type,
        max_positions(model_config),
        tokenizer,
        config.direction_request(),
        model_name=config.model,
    )
    bound = direction.max_positions
    if bound is not None and direction.causal:
        # One sequence holds the prompt, the source and the target (or the translation).
        prompt = prompt_overhead(tokenizer, direction)
        longest = (
            prompt + config.max_source_length + max(config.max_target_length, config.max_new_tokens)
        )
        if longest > bound:
            raise WorkbenchError(
                f"the prompt ({prompt} tokens), max_source_length {config.max_source_length} "
                f"and max_target_length/max_new_tokens "
                f"{max(config.max_target_length, config.max_new_tokens)} make {longest} "
                f"tokens, more than this model's {bound} positions ({config.model}); pass "
                "smaller --max-source-length and --max-target-length"
            )
    elif bound is not None:
        for name, limit in (
            ("max_source_length", bound),
            ("max_target_length", bound),
            ("max_new_tokens", bound - 1),
        ):
            value = getattr(config, name)
            if value > limit:
                raise WorkbenchError(
                    f"{name} {value} is more than this model's {bound} positions allow "
                    f"({config.model}); pass --{name.replace('_', '-')} {limit} or less"
                )
    return direction


def check_run_model(config: RunConfig) -> PairTokenizer | None:
    """Resolve the direction of a configured model from its tokenizer and config alone
    (no weights yet), and return the tokenizer with the run's direction and lengths:
    what prepares the training ids and counts a pair's tokens for the cleaning's ``long``
    rule; None for a scratch model, whose vocabulary is built from
    the cleaned training split."""
    if config.is_scratch:
        return None
    from workbench.core.model.direction import apply_direction
    from workbench.core.model.load import load_tokenizer_and_config

    tokenizer, model_config = load_tokenizer_and_config(config.model)
    direction = run_direction(config, tokenizer, model_config)
    apply_direction(tokenizer, direction)
    return PairTokenizer(tokenizer, direction, config.max_source_length, config.max_target_length)


def run_model_config(config: RunConfig) -> Any:
    """The config of the model the run trains, no weights: the configured model's, or the
    scratch shape at the largest vocabulary its settings allow."""
    if config.is_scratch:
        from workbench.core.model.scratch import scratch_model_config

        vocab = config.scratch_source_vocab + config.scratch_target_vocab
        return scratch_model_config(config, vocab, pad_id=0, eos_id=1)
    from workbench.core.model.load import load_model_config

    return load_model_config(config.model)


def load_run_model(
    config: RunConfig, data: SplitData, run_dir: Path, emit: EventSink
) -> tuple[Any, Any, Direction]:
    """The model, tokenizer and direction to fine-tune: the configured model, or a scratch
    one, with the direction set on both (:func:`~workbench.core.model.direction.apply_direction`).

    A scratch model's SentencePiece vocabularies are trained on the training split and
    kept in the run folder (other ranks reuse rank 0's).
    """
    from workbench.core.model.direction import apply_direction
    from workbench.core.model.load import frozen_as_built, load_model_and_tokenizer

    model: Any
    tokenizer: Any
    if config.is_scratch:
        from workbench.core.model.scratch import build_scratch_model

        emit(
            Note(
                f"building a {config.scratch_layers}+{config.scratch_layers}-layer MarianMT "
                f"(d_model {config.scratch_d_model}) and SentencePiece vocabularies from "
                "the training split"
            )
        )
        model, tokenizer = build_scratch_model(
            _column(data.train, "source"),
            _column(data.train, "target"),
            RunFolder(run_dir).scratch_tokenizer,
            config,
            reuse=not distributed.is_main(),
        )
        sizes = (tokenizer.spm_source.get_piece_size(), tokenizer.spm_target.get_piece_size())
        if sizes[0] < config.scratch_source_vocab or sizes[1] < config.scratch_target_vocab:
            emit(
                Note(
                    f"vocabularies of {sizes[0]:,} source / {sizes[1]:,} target pieces "
                    f"(asked for {config.scratch_source_vocab:,} / "
                    f"{config.scratch_target_vocab:,}): the {len(data.train):,} training "
                    "pairs support no more"
                )
            )
    else:
        from workbench.core.model.architecture import run_dtype
        from workbench.core.model.load import load_model_config

        dtype = run_dtype(load_model_config(config.model), config.lora)
        model, tokenizer = load_model_and_tokenizer(config.model, dtype=dtype)
        model = frozen_as_built(model)  # trains what its class trains, as a scratch one does
    direction = run_direction(config, tokenizer, model.config)
    apply_direction(tokenizer, direction, model)
    for note in direction.notes:
        emit(Note(note))
    return model, tokenizer, direction


def configure_generation(model: Any, config: RunConfig) -> None:
    """Bound generation everywhere: the model default is 512 tokens and 4+ beams."""
    gen = model.generation_config
    if model.config.is_encoder_decoder:
        # Only max_length (decoder start + new tokens): setting max_new_tokens as well
        # makes generate() warn on every batch.
        gen.max_length = config.max_new_tokens + 1
        gen.max_new_tokens = None
    else:  # a decoder-only model's max_length would count its prompt
        gen.max_new_tokens = config.max_new_tokens
    gen.num_beams = config.num_beams
    if config.num_beams == 1 and gen.early_stopping:
        # A beam-search setting (M2M100's and mBART's Hub configs have it); transformers
        # refuses to save a greedy config that keeps it.
        gen.early_stopping = False
    gen.no_repeat_ngram_size = config.no_repeat_ngram_size or None


def model_settings(config: RunConfig, direction: Direction, run_dir: Path) -> ModelSettings:
    """What a saved model needs besides its weights: its direction and limits
    (workbench.json), so every front end decodes it as the run did, with no flags."""
    return replace(
        direction.settings(),
        max_source_length=config.max_source_length,
        bleu_tokenize=config.bleu_tokenize,
        run_dir=str(run_dir),
    )


def keep_initial_model(
    model: Any, tokenizer: Any, config: RunConfig, direction: Direction, run_dir: Path
) -> str:
    """The model "before" fine-tuning, as the console and the report load it.

    A Hub or local model is its own name. A scratch model exists nowhere else, so its
    untrained weights are saved in the run folder first (once: a resumed run keeps them).
    """
    if not config.is_scratch:
        return config.model
    base_dir = RunFolder(run_dir).initial_model
    if distributed.is_main() and not base_dir.exists():
        model.save_pretrained(base_dir)
        tokenizer.save_pretrained(base_dir)
        write_model_settings(base_dir, model_settings(config, direction, run_dir))
    return str(base_dir)


def resolve_precision(config: RunConfig, device: str, model_config: Any = None) -> Precision:
    """The run's precision from its ``--fp16``/``--bf16`` flags and the device (and, for a
    LoRA run, the dtype its frozen base keeps:
    :func:`~workbench.core.model.architecture.run_dtype`).

    An unsupported flag fails here, before the run folder is made, with what to drop.
    ``--bf16`` unset means bf16 where the GPU has it.
    """
    from workbench.core.model.architecture import run_dtype
    from workbench.core.model.load import bf16_supported

    bf16 = config.bf16 if config.bf16 is not None else (not config.fp16 and bf16_supported())
    if config.fp16 and device != "cuda":
        raise WorkbenchError(
            "--fp16 needs a CUDA GPU and none is visible; drop the flag "
            "(--bf16 also works on the CPU)"
        )
    if bf16 and device not in ("cuda", "cpu"):
        raise WorkbenchError(
            f"--bf16 is supported on CUDA GPUs and the CPU, not on {device}; drop the flag"
        )
    base = "float32" if model_config is None else run_dtype(model_config, config.lora)
    return Precision(
        device=device,
        training="fp16" if config.fp16 else "bf16" if bf16 else "fp32",
        training_tf32=device == "cuda" and bf16_supported(),
        decoding=FP32_DECODING if base == "float32" else f"{base} (the frozen base's), TF32 off",
    )


def _column(pairs: Sequence[Pair], side: str) -> list[str]:
    """One side of every pair: read as one column from a prepared table."""
    if isinstance(pairs, PairTable):
        return pairs.column(side)
    return [getattr(p, side) for p in pairs]
