"""Reference recipe vs workbench recipe: training and evaluation throughput, one run.

Usage:
    python benchmarks/speed.py --quick     # CPU: ~9 minutes on 2 cores, 1 thread each
    python benchmarks/speed.py             # full mode, meant for a CUDA GPU

Both arms fine-tune the same model (opus-mt-en-zh's shape: d_model 512, 6+6 layers,
8 heads, FFN 2048, vocabulary 65,001, tied embeddings; random weights saved once, loaded
by every arm) on the same synthetic pairs whose lengths follow a model of WMT19 zh-en
(``make_lengths``). Every (arm, phase, repetition) runs in its own fresh process, arms
interleaved (A B, then B A), so they never share a peak-memory figure or a warm cache;
the tables report medians and workbench / reference ratios.

* **reference** -- the assignment's code: ``tokenizer(..., padding="max_length",
  max_length=128, truncation=True)``, labels padded to 128 with pad -> -100, a default
  ``Seq2SeqTrainer`` (random order, no length grouping), evaluation with the model's
  default decoding (4 beams, ``max_length`` 512), batch by batch in dataset order.
* **workbench** -- the code users run, imported, not re-implemented:
  ``workbench.core.train.trainer.build_trainer``, the trainer ``workbench train`` runs (no
  padding in tokenizing, length-grouped batches, dynamic padding, the loss on real
  target tokens, greedy evaluation bounded to 128 new tokens, longest sentences first,
  bf16 on GPUs that have it), and ``workbench.core.translate.translator.Translator`` for the
  before/after decoding.

Random weights never emit </s>, so generation would always run to its length bound. In
both arms a logits processor (``EosAtLength``) bans </s> until the sentence's reference
length and forces it there, so every sentence gets the length a trained model would
roughly give it, identically in both arms; only padding, batching, beams and bounds
differ. The timed training epoch runs with evaluation and checkpointing off in both arms
(evaluation is timed separately, as a whole ``trainer.evaluate()``).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:  # measure this checkout's workbench, not an installed one
    sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).parent))
import startup  # noqa: E402  (the sibling script: start-up timing, load average)

# opus-mt-en-zh's config.json / generation_config.json (the parts that cost time).
OPUS_SHAPE = {
    "vocab_size": 65001, "d_model": 512, "encoder_layers": 6, "decoder_layers": 6,
    "encoder_attention_heads": 8, "decoder_attention_heads": 8, "encoder_ffn_dim": 2048,
    "decoder_ffn_dim": 2048, "max_position_embeddings": 512, "activation_function": "swish",
    "scale_embedding": True, "share_encoder_decoder_embeddings": True,
    "tie_word_embeddings": True, "pad_token_id": 65000, "eos_token_id": 0,
    "decoder_start_token_id": 65000, "forced_eos_token_id": 0,
}
OPUS_GENERATION = {"num_beams": 4, "max_length": 512, "bad_words_ids": [[65000]]}
PAD, EOS, UNK = 65000, 0, 1
MAX_LEN = 128  # the assignment's max source/target length
BATCH = 16  # the assignment's batch size, training and evaluation

# Sentence lengths in subword tokens, </s> included (see make_lengths and RESULTS.md).
SOURCE_MEDIAN, SOURCE_SIGMA = 28.0, 0.6
RATIO_SIGMA = 0.25

MODES = {
    # Training: the workbench's own sampler orders a full epoch of `epoch` pairs (the
    # assignment's 50,000 x 9/10); `train_batches` of its batches, one typical batch per
    # equal share of them by size, are timed (plan_training). Evaluation: (pool, batches)
    # -- `batches` length strata of a `pool`-sentence set (length_strata), or all `pool`.
    # Quick: a reference step takes ~23 s on one CPU core and its 4-beam evaluation ~30 s
    # per batch of 16, hence 2 training batches (one typical of each half of the epoch's
    # batch sizes) and 2 evaluation batches per repetition.
    "quick": {"epoch": 45_000, "train_batches": 2, "validation": (5000, 2), "reps": 2,
              "check_batch": 2, "check_steps": 3, "threads": 1},
    "full": {"epoch": 45_000, "train_batches": 100, "validation": (512, None), "reps": 3,
             "check_batch": 16, "check_steps": 20, "threads": 0},
}


# --------------------------------------------------------------------------- data


def make_lengths(n: int, seed: int) -> list[tuple[int, int]]:
    """(source, target) lengths in tokens, </s> included, modelled on WMT19 zh-en.

    Source ~ lognormal(ln 28, 0.6): median 28, mean ~33 subword tokens; target = source x
    lognormal(0, 0.25) (Chinese and English take similar numbers of pieces). Both clipped
    to [3, 128]; 128 is where the assignment truncates.
    """
    rng = random.Random(seed)
    lengths = []
    for _ in range(n):
        src = min(MAX_LEN, max(3, round(rng.lognormvariate(math.log(SOURCE_MEDIAN),
                                                           SOURCE_SIGMA))))
        tgt = min(MAX_LEN, max(3, round(src * rng.lognormvariate(0.0, RATIO_SIGMA))))
        lengths.append((src, tgt))
    return lengths


def fill_ids(lengths: list[tuple[int, int]], seed: int) -> list[tuple[list[int], list[int]]]:
    """Token ids (uniform over the vocabulary, no </s>: the tokenizer adds it) per pair."""
    rng = random.Random(seed)
    return [([rng.randrange(2, PAD) for _ in range(src - 1)],
             [rng.randrange(2, PAD) for _ in range(tgt - 1)]) for src, tgt in lengths]


def make_pairs(n: int, seed: int) -> list[tuple[list[int], list[int]]]:
    """Random token-id pairs with WMT19-like lengths (make_lengths)."""
    return fill_ids(make_lengths(n, seed), seed + 1)


def length_strata(pairs: list[Any], batches: int, seed: int) -> list[Any]:
    """``batches`` batches of 16, spread evenly over ``pairs`` sorted by source length.

    A length-sorted evaluation of the whole set, in miniature: the workbench evaluates
    longest first (``trainer.longest_first``), so its batches over the kept pairs are
    these same homogeneous batches. Returned shuffled, since the reference evaluates in
    dataset order; its batches mix the strata, which run shorter than random batches of
    the whole set would (favouring the reference).
    """
    ranked = sorted(pairs, key=lambda p: len(p[0]), reverse=True)
    chunks = [ranked[i : i + BATCH] for i in range(0, len(ranked), BATCH)]
    kept = [p for i in range(batches) for p in chunks[int((i + 0.5) * len(chunks) / batches)]]
    random.Random(seed).shuffle(kept)
    return kept


def plan_training(model: Any, lengths: list[tuple[int, int]], batches: int, workdir: Path,
                  device: str) -> tuple[list[int], dict[str, float]]:
    """``batches`` of the batches the workbench's sampler forms over an epoch of ``lengths``.

    The sampler (``trainer.EpochSeededLengthSampler``) sorts megabatches of 50 x 16 pairs by
    length, but only in datasets of 3,200 pairs or more; on a few dozen pairs its batches
    would be random. So it orders the full epoch here; the epoch's batches, sorted by
    padded size (source + target width), are split into ``batches`` equal groups, and
    from each group the batch nearest the group's mean size is kept, so the kept batches
    are as wide as the epoch's on average. Returns their pair indices, batch after batch,
    and the mean source/target widths of the kept batches and of the whole epoch.
    """
    import datasets

    from workbench.core.train.run_model import resolve_precision
    from workbench.core.train.trainer import WorkbenchTrainer, training_arguments

    config = workbench_config(workdir / "plan")
    dataset = datasets.Dataset.from_dict({"input_ids": [[0] * s for s, _ in lengths],
                                          "labels": [[0] * t for _, t in lengths]})
    trainer = WorkbenchTrainer(
        model=model, args=training_arguments(config, workdir / "plan",
                                            resolve_precision(config, device)),
        eval_dataset=dataset)  # only its sampler is used
    order = list(trainer._get_train_sampler(dataset))
    model.to("cpu")  # the Trainer moved it to the device; the children load their own
    epoch = [order[i : i + BATCH] for i in range(0, len(order) - BATCH + 1, BATCH)]

    def widths(batch: list[int]) -> tuple[int, int]:
        return max(lengths[i][0] for i in batch), max(lengths[i][1] for i in batch)

    by_size = sorted(epoch, key=lambda b: sum(widths(b)))
    kept = []
    for k in range(batches):  # from each of `batches` equal groups, its most typical batch
        group = by_size[k * len(by_size) // batches : (k + 1) * len(by_size) // batches]
        mean = statistics.fmean(sum(widths(b)) for b in group)
        kept.append(min(group, key=lambda b: abs(sum(widths(b)) - mean)))
    summary = {
        f"{who}_{side}": statistics.fmean(widths(b)[j] for b in batches_)
        for who, batches_ in (("kept", kept), ("epoch", epoch))
        for j, side in enumerate(("source", "target"))
    }
    return [i for batch in kept for i in batch], summary


def ids_to_text(ids: list[int]) -> str:
    """Text for the word-level test tokenizer: one word per token id."""
    return " ".join(f"t{i}" for i in ids)


def length_stats(lengths: list[int]) -> dict[str, float]:
    """Mean, median and tail of a list of lengths."""
    ordered = sorted(lengths)
    return {
        "mean": statistics.fmean(ordered),
        "median": statistics.median(ordered),
        "p90": ordered[int(0.9 * (len(ordered) - 1))],
        "p99": ordered[int(0.99 * (len(ordered) - 1))],
        "max": ordered[-1],
        "share_over_64": sum(v > 64 for v in ordered) / len(ordered),
    }


def build_tokenizer() -> Any:
    """A real fast tokenizer (``t123`` -> id 123, </s> appended) with opus-mt's ids.

    Word-level, so a pair's token ids are exactly the ones drawn in make_pairs; padding,
    truncation, decoding and the collators behave as with opus-mt's tokenizer.
    """
    from tokenizers import Tokenizer, models, pre_tokenizers, processors
    from transformers import PreTrainedTokenizerFast

    vocab = {"</s>": EOS, "<unk>": UNK, **{f"t{i}": i for i in range(2, PAD)}, "<pad>": PAD}
    core = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    core.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    core.post_processor = processors.TemplateProcessing(
        single="$A </s>", special_tokens=[("</s>", EOS)])
    return PreTrainedTokenizerFast(tokenizer_object=core, eos_token="</s>", unk_token="<unk>",
                                   pad_token="<pad>", model_max_length=512,
                                   model_input_names=["input_ids", "attention_mask"])


def prepare_workdir(
    workdir: Path, mode: dict[str, Any], device: str = "cpu", seed: int = 0,
    shape: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Save the random model, the tokenizer and the data every child process loads.

    ``shape`` overrides parts of opus-mt's shape (the tests build a tiny model).
    """
    import torch
    from transformers import GenerationConfig, MarianConfig, MarianMTModel

    torch.manual_seed(seed)
    model = MarianMTModel(MarianConfig(**{**OPUS_SHAPE, **(shape or {})}))
    model.generation_config = GenerationConfig(**{
        **OPUS_GENERATION, "pad_token_id": PAD, "eos_token_id": EOS,
        "decoder_start_token_id": PAD, "forced_eos_token_id": EOS})
    model.save_pretrained(workdir / "model")
    build_tokenizer().save_pretrained(workdir / "model")
    val_pool, val_batches = mode["validation"]
    epoch = make_lengths(mode["epoch"], seed=1)
    kept, plan = plan_training(model, epoch, mode["train_batches"], workdir, device)
    train = fill_ids([epoch[i] for i in kept], seed=3)
    validation = make_pairs(val_pool, seed=2)
    if val_batches:
        validation = length_strata(validation, val_batches, seed=4)
    data = {"train": [[ids_to_text(s), ids_to_text(t)] for s, t in train],
            "validation": [[ids_to_text(s), ids_to_text(t)] for s, t in validation]}
    (workdir / "data.json").write_text(json.dumps(data), encoding="utf-8")
    model_sample = make_lengths(20_000, seed=99)  # the distribution itself, not this sample

    val_text = f"{len(validation)} sentences drawn at random"
    if val_batches:
        val_text = (f"{len(validation)} sentences = {val_batches} batches of {BATCH} at evenly "
                    f"spaced ranks of a {val_pool}-sentence set sorted by length "
                    "(`length_strata`), stored in random order")
    return {
        "parameters": sum(p.numel() for p in model.parameters()),
        "train_pairs": len(train),
        "train_target_tokens": sum(len(t) + 1 for _, t in train),  # </s> included
        "train_text": (f"{len(train)} pairs = {mode['train_batches']} batches of {BATCH} that "
                       f"the workbench's sampler forms over a {mode['epoch']:,}-pair epoch, "
                       "one typical batch from each equal share of its batches sorted by "
                       "size (`plan_training`; mean source/target width "
                       f"{plan['kept_source']:.1f}/{plan['kept_target']:.1f} tokens, the "
                       f"whole epoch's {plan['epoch_source']:.1f}/{plan['epoch_target']:.1f})"),
        "validation_pairs": len(validation),
        "validation_text": val_text,
        "lengths": {
            "source, model (20,000 draws)": length_stats([s for s, _ in model_sample]),
            "target, model (20,000 draws)": length_stats([t for _, t in model_sample]),
            "source, this run's pairs": length_stats([len(s) + 1 for s, _ in train + validation]),
            "target, this run's pairs": length_stats([len(t) + 1 for _, t in train + validation]),
        },
    }


# --------------------------------------------------------------------------- generation


def length_forced_model_class() -> Any:
    """MarianMTModel whose generate() ends each sentence at its reference length."""
    import torch
    from transformers import LogitsProcessor, LogitsProcessorList, MarianMTModel

    class EosAtLength(LogitsProcessor):
        """Ban </s> before row i has ``lengths[i]`` tokens (</s> included), force it then."""

        def __init__(self, lengths: torch.Tensor, eos: int) -> None:
            self.lengths = lengths
            self.eos = eos

        def __call__(self, input_ids: torch.Tensor, scores: torch.Tensor) -> torch.Tensor:
            per_row = scores.shape[0] // self.lengths.shape[0]  # beams
            target = self.lengths.to(scores.device).repeat_interleave(per_row)
            at_end = input_ids.shape[1] >= target  # decoder start + (length - 1) tokens
            scores[~at_end, self.eos] = -math.inf
            scores[at_end] = -math.inf
            scores[at_end, self.eos] = 0.0
            return scores

    class LengthForcedMarian(MarianMTModel):
        forced_lengths: dict[tuple[int, ...], int] = {}

        def generate(self, input_ids=None, attention_mask=None, **kwargs):  # type: ignore[no-untyped-def]
            mask = attention_mask if attention_mask is not None else input_ids != PAD
            lengths = [self.forced_lengths[tuple(row[keep].tolist())]
                       for row, keep in zip(input_ids.cpu(), mask.cpu().bool(), strict=True)]
            processors = LogitsProcessorList(kwargs.pop("logits_processor", None) or [])
            processors.append(EosAtLength(torch.tensor(lengths), EOS))
            return super().generate(input_ids=input_ids, attention_mask=attention_mask,
                                    logits_processor=processors, **kwargs)

    return LengthForcedMarian


def load_model(workdir: Path, device: str, **overrides: Any) -> tuple[Any, Any, dict]:
    """The saved random model (length-forced generation), its tokenizer and the data."""
    from transformers import AutoTokenizer

    from workbench.core.model.load import quiet_libraries

    quiet_libraries()
    tokenizer = AutoTokenizer.from_pretrained(str(workdir / "model"))
    model = length_forced_model_class().from_pretrained(str(workdir / "model"), **overrides)
    data = json.loads((workdir / "data.json").read_text(encoding="utf-8"))
    model.forced_lengths = {
        tuple(tokenizer(src)["input_ids"]): len(tokenizer(text_target=tgt)["input_ids"])
        for src, tgt in data["train"] + data["validation"]
    }
    return model.to(device), tokenizer, data


# --------------------------------------------------------------------------- the two recipes


def reference_dataset(pairs: list[list[str]], tokenizer: Any) -> Any:
    """The assignment's preprocessing: everything padded to 128, label padding -> -100."""
    import datasets

    inputs = tokenizer([s for s, _ in pairs], max_length=MAX_LEN, truncation=True,
                       padding="max_length")
    labels = tokenizer(text_target=[t for _, t in pairs], max_length=MAX_LEN, truncation=True,
                       padding="max_length")["input_ids"]
    labels = [[(i if i != tokenizer.pad_token_id else -100) for i in row] for row in labels]
    return datasets.Dataset.from_dict({"input_ids": inputs["input_ids"],
                                       "attention_mask": inputs["attention_mask"],
                                       "labels": labels})


def workbench_config(out_dir: Path) -> Any:
    """The opus-en-zh preset (batch 16/16, lr 2e-5, lengths 128, greedy per-epoch eval)."""
    from workbench.core.config import build_config

    # No target label: the test vocabulary has none, and the reference adds none either.
    return build_config("opus-en-zh", overrides={
        "target_label": "none", "epochs": 1, "output_dir": str(out_dir), "logging_steps": 1})


def build_trainer(arm: str, phase: str, workdir: Path, device: str) -> tuple[Any, Any, Any, dict]:
    """The arm's trainer over the saved model and data, as its recipe builds it."""
    from transformers import DataCollatorForSeq2Seq, Seq2SeqTrainer, Seq2SeqTrainingArguments
    from transformers.trainer_callback import PrinterCallback, ProgressCallback

    from workbench.core.evaluate.metrics import make_compute_metrics

    model, tokenizer, data = load_model(workdir, device)
    out = workdir / f"out-{arm}-{phase}-{os.getpid()}"
    train_pairs, val_pairs = data["train"], data["validation"]
    if arm == "reference":
        args = Seq2SeqTrainingArguments(
            output_dir=str(out), per_device_train_batch_size=BATCH,
            per_device_eval_batch_size=BATCH, learning_rate=2e-5, weight_decay=0.01,
            num_train_epochs=1, predict_with_generate=True, eval_strategy="epoch",
            logging_steps=1, report_to="none", disable_tqdm=True, seed=42,
            use_cpu=device == "cpu",
        )
        trainer = Seq2SeqTrainer(
            model=model, args=args,
            train_dataset=reference_dataset(train_pairs, tokenizer),
            eval_dataset=reference_dataset(val_pairs, tokenizer),
            data_collator=DataCollatorForSeq2Seq(tokenizer, model=model),
            processing_class=tokenizer,
            compute_metrics=make_compute_metrics(tokenizer, "zh"),
        )
    else:
        from workbench.core.data.pairs import Pair
        from workbench.core.train.run_model import configure_generation, resolve_precision
        from workbench.core.train.trainer import build_trainer

        config = workbench_config(out)
        configure_generation(model, config)
        trainer = build_trainer(config, model, tokenizer,
                                [Pair(s, t) for s, t in train_pairs],
                                [Pair(s, t) for s, t in val_pairs], out,
                                resolve_precision(config, device))
    trainer.remove_callback(PrinterCallback)
    trainer.remove_callback(ProgressCallback)
    return trainer, model, tokenizer, data


# --------------------------------------------------------------------------- child phases


def synchronize(device: str) -> None:
    if device == "cuda":
        import torch

        torch.cuda.synchronize()


def peak_memory(device: str) -> dict[str, float]:
    """Peak resident memory of this process (and of the GPU), in MiB."""
    found = {"rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}
    if device == "cuda":
        import torch

        found["gpu_mib"] = torch.cuda.max_memory_allocated() / 2**20
    return found


def model_flops(model: Any, pairs: list[tuple[int, int]]) -> float:
    """Useful training FLOPs (forward + backward = 3 x forward) for real, unpadded lengths.

    Matmul FLOPs only: 2 per multiply-add through every layer's weights, the tied output
    projection on target tokens, and attention scores/values (4·L²·d per layer; no
    discount for the causal mask). Padding adds work, never useful FLOPs.
    """
    d, vocab = model.config.d_model, model.config.vocab_size
    enc = sum(p.numel() for p in model.model.encoder.layers.parameters())
    dec = sum(p.numel() for p in model.model.decoder.layers.parameters())
    n_enc, n_dec = model.config.encoder_layers, model.config.decoder_layers
    forward = sum(
        2 * enc * s + 2 * dec * t + 2 * d * vocab * t
        + n_enc * 4 * s * s * d + n_dec * (4 * t * t * d + 4 * t * s * d)
        for s, t in pairs
    )
    return 3.0 * forward


def warm_up(model: Any, device: str) -> None:
    """One throw-away forward/backward so neither arm pays first-call set-up in its timing."""
    import torch

    ids = torch.randint(2, PAD, (2, 16), device=device)
    model.train()
    model(input_ids=ids, labels=ids).loss.backward()
    model.zero_grad(set_to_none=True)


def count_projected_rows(model: Any) -> dict[str, int]:
    """Count the decoder positions the vocabulary projection (``lm_head``) is applied to.

    The reference projects every padded position; the workbench only the real target
    tokens (``core/token_loss.py``), which this shows for the timed steps themselves.
    """
    counts = {"rows": 0}

    def hook(_module: Any, _args: Any, output: Any) -> None:
        counts["rows"] += output.shape[:-1].numel()

    model.get_output_embeddings().register_forward_hook(hook)
    return counts


def child_train(arm: str, workdir: Path, device: str) -> dict[str, Any]:
    """Time one epoch of training (every train pair once) in this arm's recipe."""
    from transformers import TrainerCallback
    from transformers.trainer_utils import IntervalStrategy, SaveStrategy

    trainer, model, tokenizer, data = build_trainer(arm, "train", workdir, device)
    # Evaluation and checkpoints are timed apart from training, in both arms.
    trainer.args.eval_strategy = IntervalStrategy.NO
    trainer.args.save_strategy = SaveStrategy.NO
    trainer.args.load_best_model_at_end = False
    marks: dict[str, Any] = {"begin": [], "end": [], "loss": []}

    class StepTimer(TrainerCallback):
        def on_step_begin(self, args, state, control, **kwargs):  # type: ignore[no-untyped-def]
            marks["begin"].append(time.perf_counter())

        def on_step_end(self, args, state, control, **kwargs):  # type: ignore[no-untyped-def]
            synchronize(device)
            marks["end"].append(time.perf_counter())

        def on_log(self, args, state, control, logs=None, **kwargs):  # type: ignore[no-untyped-def]
            if logs and "loss" in logs:
                marks["loss"].append(float(logs["loss"]))

    trainer.add_callback(StepTimer())
    if arm == "workbench":
        from torch.utils.data import SequentialSampler

        # The pairs are stored batch after batch in the order the workbench's own sampler
        # gave them over a full epoch (plan_training); keep that order.
        trainer._get_train_sampler = lambda *a, **k: SequentialSampler(trainer.train_dataset)
    widths: list[list[int]] = []
    collate = trainer.data_collator

    def recording_collator(features: list[dict]) -> Any:
        batch = collate(features)
        widths.append([int(batch["input_ids"].shape[1]), int(batch["labels"].shape[1])])
        return batch

    trainer.data_collator = recording_collator
    warm_up(model, device)
    projected = count_projected_rows(model)
    if device == "cuda":
        import torch

        torch.cuda.reset_peak_memory_stats()
    trainer.train()
    seconds = marks["end"][-1] - marks["begin"][0]
    lengths = [(len(tokenizer(s)["input_ids"]), len(tokenizer(text_target=t)["input_ids"]))
               for s, t in data["train"]]
    flops = model_flops(model, lengths)
    return {
        "samples": len(lengths),
        "steps": len(marks["end"]),
        "seconds": seconds,
        "samples_per_s": len(lengths) / seconds,
        "target_tokens_per_s": sum(t for _, t in lengths) / seconds,
        "model_flops_per_s": flops / seconds,
        "step_seconds": [e - b for b, e in zip(marks["begin"], marks["end"], strict=True)],
        "padded_widths": widths,  # [source, target] tensor width of each batch
        "projected_rows": projected["rows"],  # decoder positions projected onto the vocabulary
        "losses": marks["loss"],
        "precision": "bf16" if trainer.args.bf16 else ("fp16" if trainer.args.fp16 else "fp32"),
        "attention": model.config._attn_implementation,
        **peak_memory(device),
    }


def child_eval(arm: str, workdir: Path, device: str, final: bool = True) -> dict[str, Any]:
    """Time ``trainer.evaluate()`` (evaluation during training) and the final decoding."""
    trainer, model, tokenizer, data = build_trainer(arm, "eval", workdir, device)
    sources = [s for s, _ in data["validation"]]
    target_tokens = sum(len(tokenizer(text_target=t)["input_ids"]) for _, t in data["validation"])
    model.eval()
    model.generate(**tokenizer(sources[:1], return_tensors="pt").to(device), max_new_tokens=2)
    if device == "cuda":
        import torch

        torch.cuda.reset_peak_memory_stats()
    started = time.perf_counter()
    metrics = trainer.evaluate()
    synchronize(device)
    seconds = time.perf_counter() - started
    found: dict[str, Any] = {
        "sentences": len(sources),
        "seconds": seconds,
        "sentences_per_s": len(sources) / seconds,
        "target_tokens_per_s": target_tokens / seconds,
        "beams": trainer.args.generation_num_beams or model.generation_config.num_beams,
        "eval_loss": metrics.get("eval_loss"),
        **peak_memory(device),
    }
    if not final:
        return found
    if arm == "reference":
        # The reference scores before/after BLEU with this same evaluate() (4 beams).
        found["final_sentences_per_s"] = found["sentences_per_s"]
    else:
        from workbench.core.decoding import DecodeOptions
        from workbench.core.translate.translator import Translator

        config = workbench_config(workdir)
        options = DecodeOptions(config.num_beams, config.max_new_tokens,
                                config.no_repeat_ngram_size)
        translator = Translator(model, tokenizer, None, config.max_source_length)
        started = time.perf_counter()
        translator.translate_many(sources, options, config.eval_batch_size)
        synchronize(device)
        found["final_sentences_per_s"] = len(sources) / (time.perf_counter() - started)
        found["final_beams"] = options.num_beams
    return found


def child_check(workdir: Path, device: str, batch: int, steps: int) -> dict[str, Any]:
    """Same batches, same order, dropout off: padded to 128 vs padded per batch.

    With labels padded by -100 the loss ignores padding, so the per-step losses must agree
    to float rounding; any larger gap would mean the two recipes train differently. The
    reference takes the model's own loss; the workbench its trainer's ``compute_loss``
    (the vocabulary projection on real target tokens only, ``core/token_loss.py``).
    """
    import torch
    from transformers import DataCollatorForSeq2Seq

    from workbench.core.data.pairs import Pair
    from workbench.core.data.tokenize import tokenize_pairs

    losses: dict[str, list[float]] = {}
    projected: dict[str, dict[str, int]] = {}
    real_tokens = 0
    for arm in ("reference", "workbench"):
        model, tokenizer, data = load_model(workdir, device, dropout=0.0, attention_dropout=0.0,
                                            activation_dropout=0.0)
        pairs = data["train"][: batch * steps]
        if arm == "reference":
            dataset = reference_dataset(pairs, tokenizer)
        else:
            dataset = tokenize_pairs([Pair(s, t) for s, t in pairs], tokenizer, None,
                                     MAX_LEN, MAX_LEN)
        collate = DataCollatorForSeq2Seq(tokenizer, model=model, label_pad_token_id=-100)
        optimizer = torch.optim.AdamW(model.parameters(), lr=2e-5)
        if arm == "workbench":
            from workbench.core.train.run_model import resolve_precision
            from workbench.core.train.trainer import WorkbenchTrainer, training_arguments

            check = workbench_config(workdir / "check")
            trainer = WorkbenchTrainer(  # only its compute_loss is used
                model=model, eval_dataset=dataset, args=training_arguments(
                    check, workdir / "check", resolve_precision(check, device)))
        model.train()
        losses[arm] = []
        projected[arm] = count_projected_rows(model)
        for step in range(steps):
            features = [dataset[i] for i in range(step * batch, (step + 1) * batch)]
            inputs = {k: v.to(device) for k, v in collate(features).items()}
            if arm == "reference":
                loss = model(**inputs).loss
                real_tokens += int(inputs["labels"].ne(-100).sum())
            else:
                loss = trainer.compute_loss(model, inputs,
                                            num_items_in_batch=inputs["labels"].ne(-100).sum())
            loss.backward()
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
            losses[arm].append(float(loss.detach()))
    diffs = [abs(a - b) for a, b in zip(losses["reference"], losses["workbench"], strict=True)]
    return {"batch": batch, "steps": steps, "losses": losses, "max_abs_diff": max(diffs),
            "real_tokens": real_tokens,
            "projected_rows": {arm: found["rows"] for arm, found in projected.items()}}


def child_matmul(device: str) -> dict[str, Any]:
    """The machine's dense matmul rate: fp32 on CPU, bf16 on a GPU (TFLOPS)."""
    import torch

    dtype = torch.bfloat16 if device == "cuda" else torch.float32
    n = 8192 if device == "cuda" else 2048
    a = torch.randn(n, n, device=device, dtype=dtype)
    b = torch.randn(n, n, device=device, dtype=dtype)
    for _ in range(3):
        a @ b
    synchronize(device)
    count, started = 0, time.perf_counter()
    while time.perf_counter() - started < 2.0:
        for _ in range(10):
            a @ b
        synchronize(device)
        count += 10
    seconds = time.perf_counter() - started
    return {"dtype": str(dtype).replace("torch.", ""), "n": n,
            "tflops": 2 * n**3 * count / seconds / 1e12}


# --------------------------------------------------------------------------- orchestration


def run_child(args: list[str], workdir: Path, threads: int) -> dict[str, Any]:
    """Run one phase in a fresh interpreter and return its JSON result."""
    result = workdir / f"result-{time.time_ns()}.json"
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false",
           "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, __file__, "--child", *args, "--workdir", str(workdir),
                           "--result", str(result), "--threads", str(threads)],
                          env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"child {args} failed:\n{done.stderr[-4000:]}")
    return json.loads(result.read_text(encoding="utf-8"))


def machine() -> dict[str, Any]:
    """What the numbers were measured on."""
    import torch
    import transformers

    cpu = "unknown CPU"
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        for line in cpuinfo.read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    found = {"cpu": cpu, "cores": os.cpu_count(), "torch_threads": torch.get_num_threads(),
             "python": platform.python_version(), "torch": torch.__version__,
             "transformers": transformers.__version__, "platform": platform.platform()}
    if torch.cuda.is_available():
        found["gpu"] = torch.cuda.get_device_name(0)
        found["bf16"] = torch.cuda.is_bf16_supported()
    return found


def median_of(runs: list[dict[str, Any]], key: str) -> float:
    return statistics.median(r[key] for r in runs if key in r)


def fmt(value: float) -> str:
    return f"{value:,.3g}" if abs(value) < 100 else f"{value:,.0f}"


def write_report(path: Path, ctx: dict[str, Any]) -> str:
    """RESULTS.md: the command, the machine, medians and ratios, losses, the data model."""
    runs, m, mode = ctx["runs"], ctx["machine"], ctx["mode"]
    ref, wb = runs["reference"], runs["workbench"]

    def row(label: str, phase: str, key: str, target: str = "", unit: str = "",
            lower_is_better: bool = False) -> str:
        a, b = median_of(ref[phase], key), median_of(wb[phase], key)
        ratio = a / b if lower_is_better else b / a
        each = "; ".join(f"{arm}: " + ", ".join(fmt(r[key]) for r in runs[arm][phase]
                                                if key in r)
                         for arm in ("reference", "workbench"))
        return (f"| {label} | {fmt(a)}{unit} | {fmt(b)}{unit} | **{ratio:.2f}×** | {target} "
                f"| {each} |")

    rate = ctx["matmul"]
    fraction = [f"{arm}: {median_of(runs[arm]['train'], 'model_flops_per_s') / 1e12 / tflops:.1%}"
                for arm in ("reference", "workbench") if (tflops := rate["tflops"])]
    check = ctx["check"]
    data = ctx["data"]
    gpu = f"GPU {m['gpu']}" + (" (bf16)" if m.get("bf16") else "") if "gpu" in m else "no GPU"
    lines = [
        "# Speed: the reference recipe vs the workbench recipe",
        "",
        f"Command: `python benchmarks/speed.py{' --quick' if ctx['quick'] else ''}` "
        f"({ctx['mode_name']} mode; {ctx['wall'] / 60:.1f} min wall), measured "
        f"{time.strftime('%Y-%m-%d')}.",
        "",
        f"Machine: {m['cpu']}, {m['cores']} cores, torch threads per process: "
        f"{mode['threads'] or m['torch_threads']}, "
        f"{gpu}, "
        f"Python {m['python']}, torch {m['torch']}, transformers {m['transformers']}, "
        f"{m['platform']}. Device used: **{ctx['device']}**.",
        f"Load average (1/5/15 min) before: {ctx['load_before']}; after: {ctx['load_after']} "
        f"— other sessions share these {m['cores']} cores; arms are interleaved so such load "
        "falls on both.",
        *(["", THREADS_NOTE] if mode["threads"] == 1 else []),
        "",
        f"Model: opus-mt-en-zh's shape, random weights ({data['parameters'] / 1e6:.1f}M "
        f"parameters), attention `{wb['train'][0]['attention']}` in both arms; precision "
        f"reference {ref['train'][0]['precision']}, workbench {wb['train'][0]['precision']}. "
        f"Training: one epoch over {data['train_text']} ({data['train_pairs'] // BATCH} "
        f"steps of {BATCH}). Evaluation: {data['validation_text']}. {mode['reps']} "
        "repetitions per arm, each phase in a fresh process, order A B, then B A. Tensor "
        "widths of the timed training batches (source/target, first repetition): "
        + "; ".join(f"{arm} " + ", ".join(f"{a}/{b}" for a, b in runs[arm]["train"][0]
                                         ["padded_widths"])
                    for arm in ("reference", "workbench")) + ". Decoder positions projected "
        "onto the 65,001-word vocabulary in the timed epoch (`lm_head`, the largest matmul "
        "of a step): " + ", ".join(f"{arm} {runs[arm]['train'][0]['projected_rows']:,}"
                                   for arm in ("reference", "workbench"))
        + f"; real target tokens {data['train_target_tokens']:,}.",
        "",
        "| metric | reference | workbench | workbench / reference | target | per repetition |",
        "| --- | --- | --- | --- | --- | --- |",
        row("training samples/s", "train", "samples_per_s", "≥ 2.5×"),
        row("training target tokens/s", "train", "target_tokens_per_s"),
        row("evaluation during training, sentences/s", "eval", "sentences_per_s", "≥ 3×"),
        row("evaluation during training, target tokens/s", "eval", "target_tokens_per_s"),
        row("final before/after decoding, sentences/s (4 beams both)", "eval",
            "final_sentences_per_s", "same decoding"),
        row("peak memory, training (RSS MiB)", "train", "rss_mib", "", "",
            lower_is_better=True),
        row("peak memory, evaluation (RSS MiB)", "eval", "rss_mib", "", "",
            lower_is_better=True),
    ]
    if ctx["device"] == "cuda":
        lines += [row("peak GPU memory, training (MiB)", "train", "gpu_mib", "", "", True),
                  row("peak GPU memory, evaluation (MiB)", "eval", "gpu_mib", "", "", True)]
    lines += [
        "",
        "For peak memory the ratio is reference / workbench (above 1 = the workbench uses "
        "less). Peak RSS is the whole process (Python, torch, model, optimizer state).",
        "",
        f"Useful model FLOPs/s in training (matmul FLOPs of the real, unpadded tokens; "
        f"`model_flops`) as a share of this machine's measured {rate['dtype']} matmul rate "
        f"({rate['tflops'] * 1000:.0f} GFLOPS, {rate['n']}×{rate['n']} matmuls): "
        f"{', '.join(fraction)}.",
        "",
        "## What each arm does",
        "",
        "| | reference (the assignment's code) | workbench (imported from `workbench/core`) |",
        "| --- | --- | --- |",
        "| tokenizing | `padding=\"max_length\"`, 128, labels pad → -100 | "
        "`preprocess.tokenize_pairs`: truncation only |",
        "| training batches | default `Seq2SeqTrainer`: random order, every batch 128 wide | "
        "`trainer.EpochSeededLengthSampler`: per-epoch seeded sampler grouping pairs of similar "
        "source length, padded per batch by "
        "`DataCollatorForSeq2Seq` |",
        "| training loss | the model's own: every target position projected onto the "
        "vocabulary, padding ignored afterwards | `WorkbenchTrainer.compute_loss` "
        "(`core/token_loss.py`): only the real target tokens projected, the same "
        "cross-entropy |",
        "| precision | fp32 (the assignment's fp16 is only a small-GPU fallback) | "
        "`trainer.training_arguments`: bf16 where the GPU has it, else fp32 |",
        "| evaluation during training | `trainer.evaluate()` with the model's default "
        "decoding: 4 beams, `max_length` 512, inputs 128 wide, dataset order | "
        "`trainer.evaluate()` with `generation_num_beams=1` (`eval_num_beams`), "
        "`generation_max_length` 129, inputs padded per batch, longest first "
        "(`trainer.longest_first`) |",
        "| before/after BLEU decoding | the same `evaluate()` (4 beams) | "
        "`Translator.translate_many`: 4 beams (`num_beams`), length-sorted batches, bound "
        "min(128, 2·source+8) |",
        "",
        "The before/after BLEU decoding uses 4 beams on both sides and in both arms; only "
        "the per-epoch evaluation, which drives best-epoch selection and the charts, is "
        "greedy in the workbench. The ≥ 3× target is about that per-epoch evaluation.",
        "",
        "Sentence ends: random weights never emit </s>, so left alone every arm would "
        "decode to its bound (512 tokens × 4 beams for the reference, 128 for the "
        "workbench) — a gap no trained model shows. Instead, in both arms the model's "
        "`generate` gets one extra logits processor (`EosAtLength`) that bans </s> before "
        "a sentence's reference length and forces it there, so every sentence is exactly "
        "as long as its reference in both arms, and the comparison is padding, batching, "
        "beams and length bounds only. The reference's unbounded 512 therefore costs it "
        "nothing here; with a model that loops it would cost far more.",
        "",
        "## Same loss",
        "",
        f"Identical batches, identical order, dropout off, AdamW lr 2e-5, batch "
        f"{check['batch']}: padded to 128 with the model's own loss (reference) vs padded "
        "per batch with the workbench trainer's `compute_loss` (workbench). "
        f"Largest per-step difference: **{check['max_abs_diff']:.2e}** (float rounding).",
        "",
        "| step | " + " | ".join(str(i + 1) for i in range(check["steps"])) + " |",
        "| --- | " + " | ".join("---" for _ in range(check["steps"])) + " |",
        *(f"| {arm} | " + " | ".join(f"{v:.5f}" for v in check["losses"][arm]) + " |"
          for arm in ("reference", "workbench")),
        "",
        "Each arm's own sampler (the timed epoch, first repetition; random order vs "
        "length-grouped, so the batches differ):",
        "",
        *(f"- {arm}: " + ", ".join(f"{v:.4f}" for v in runs[arm]["train"][0]["losses"])
          + f" (mean {statistics.fmean(runs[arm]['train'][0]['losses']):.4f})"
          for arm in ("reference", "workbench")),
        "",
        "## The data",
        "",
        "WMT19 zh-en's ~26M training rows are mostly the UN Parallel Corpus (its en-zh part: "
        "15,886,041 aligned lines) plus CWMT and News Commentary news sentences and short "
        "Wikipedia titles. The UN corpus's published statistics give its 18.5M Arabic-English "
        "lines 456.6M and 512.1M tokens, ~25 and ~28 per line: these are long sentences, "
        "unlike the HSK demo corpus (5.2 English words on average). Assumed, not "
        "measured here (the real tokenizer is not available offline): subword vocabularies "
        "split such English into ~1.2-1.4 pieces per word, and Chinese into a similar number "
        "of pieces. Modelled (`make_pairs`): source length in tokens (</s> included) ~ "
        f"lognormal(ln {SOURCE_MEDIAN:g}, {SOURCE_SIGMA}), target = source × "
        f"lognormal(0, {RATIO_SIGMA}), both clipped to [3, 128] (the assignment truncates "
        "at 128); token ids uniform over the vocabulary; a word-level fast tokenizer maps "
        "`t123` to id 123, so both recipes tokenize, pad, collate and decode real text.",
        "",
        "| lengths in tokens | mean | median | p90 | p99 | max | > 64 |",
        "| --- | --- | --- | --- | --- | --- | --- |",
        *(f"| {name} | {s['mean']:.1f} | {s['median']:g} | {s['p90']} | {s['p99']} | "
          f"{s['max']} | {s['share_over_64']:.1%} |" for name, s in data["lengths"].items()),
        "",
    ]
    lines += ctx.get("startup_lines", [])
    lines += ctx.get("gpu_lines", [])
    text = "\n".join(lines)
    path.write_text(text, encoding="utf-8")
    return text


def startup_section(repeats: int) -> list[str]:
    """Start-up times from benchmarks/startup.py, as RESULTS.md lines."""

    result = startup.measure(repeats)
    return [
        "## Start-up",
        "",
        "Measured by `python benchmarks/startup.py` (also run here): `workbench --help` in "
        "fresh interpreters; `workbench tui --preset demo` in a 100×30 pseudo-terminal, "
        "timed from spawn to the first frame that holds the tab bar and the Dataset pane, "
        "then to the footer's keys and to the loaded data.",
        "",
        "| what | median | target | note |",
        "| --- | --- | --- | --- |",
        *startup.report_lines(result),
        "",
    ]


THREADS_NOTE = (
    "One torch thread per process (`--threads 1`, the quick default): when another session "
    "keeps the second core busy, two torch threads wait on each other at every operation. "
    "Measured on this machine at load ~5: one training step of 16×33 tokens took 22-29 s "
    "with 2 threads and 7 s with 1 (16×128 tokens: 42-44 s vs 25 s). Both arms run alike."
)

GPU_NONE = [
    "## GPU",
    "",
    "No GPU was lent to the session that produced this file, so only the CPU quick mode "
    "ran. On a CUDA machine, run the full mode (1,600 training pairs = 100 steps of 16 per "
    "arm, 512 validation sentences, 3 repetitions): `python benchmarks/speed.py`. It uses "
    "the GPU automatically; the workbench arm trains in bf16 where the GPU supports it (as "
    "`workbench train` does), the reference in fp32; the report then adds peak GPU memory "
    "and states the GPU's measured bf16 matmul TFLOPS (8192×8192) and the share of it each "
    "arm achieves in useful model FLOPs/s.",
    "",
]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="CPU-sized run (about 9 minutes on 2 cores)")
    parser.add_argument("--device", choices=("cuda", "cpu"), default=None,
                        help="default: cuda when available")
    parser.add_argument("--reps", type=int, default=None, help="repetitions per arm")
    parser.add_argument("--threads", type=int, default=None,
                        help="torch threads per process (quick: 1, full: torch's default)")
    parser.add_argument("--out", default=str(Path(__file__).parent / "RESULTS.md"))
    parser.add_argument("--skip-startup", action="store_true", help="no start-up section")
    parser.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    parser.add_argument("--workdir", help=argparse.SUPPRESS)
    parser.add_argument("--result", help=argparse.SUPPRESS)
    args = parser.parse_args()

    if args.child:
        kind, *rest = args.child
        workdir, device = Path(args.workdir), rest[-1]
        if args.threads:
            import torch

            torch.set_num_threads(args.threads)
        if kind == "train":
            found = child_train(rest[0], workdir, device)
        elif kind == "eval":
            found = child_eval(rest[0], workdir, device, final=rest[1] == "final")
        elif kind == "check":
            found = child_check(workdir, device, int(rest[0]), int(rest[1]))
        else:
            found = child_matmul(device)
        Path(args.result).write_text(json.dumps(found), encoding="utf-8")
        return 0

    import torch

    device = args.device or ("cuda" if torch.cuda.is_available() else "cpu")
    mode_name = "quick" if args.quick else "full"
    mode = dict(MODES[mode_name])
    if args.reps:
        mode["reps"] = args.reps
    if args.threads is not None:
        mode["threads"] = args.threads
    started = time.perf_counter()
    ctx: dict[str, Any] = {"quick": args.quick, "mode_name": mode_name, "mode": mode,
                           "device": device, "machine": machine(),
                           "load_before": startup.load_average()}
    runs: dict[str, dict[str, list]] = {arm: {"train": [], "eval": []}
                                        for arm in ("reference", "workbench")}
    with tempfile.TemporaryDirectory(prefix="wb-speed-") as tmp:
        workdir = Path(tmp)
        ctx["data"] = prepare_workdir(workdir, mode, device)
        print(f"model and data ready ({ctx['data']['parameters'] / 1e6:.1f}M parameters)",
              flush=True)
        for rep in range(mode["reps"]):
            order = ("reference", "workbench") if rep % 2 == 0 else ("workbench", "reference")
            for phase in ("train", "eval"):
                for arm in order:
                    # Quick mode times the final (4-beam) decoding in the first repetition
                    # only: it is the same decoding on both sides, shown for information.
                    final = "final" if rep == 0 or not args.quick else "no-final"
                    extra = [final] if phase == "eval" else []
                    found = run_child([phase, arm, *extra, device], workdir, mode["threads"])
                    runs[arm][phase].append(found)
                    key = "samples_per_s" if phase == "train" else "sentences_per_s"
                    print(f"rep {rep + 1} {phase:5} {arm:9}: {found[key]:.3f}/s "
                          f"in {found['seconds']:.1f} s", flush=True)
        ctx["check"] = run_child(["check", str(mode["check_batch"]), str(mode["check_steps"]),
                                  device], workdir, mode["threads"])
        print(f"identical batches: max loss difference {ctx['check']['max_abs_diff']:.2e}",
              flush=True)
        ctx["matmul"] = run_child(["matmul", device], workdir, mode["threads"])
    ctx["runs"] = runs
    ctx["load_after"] = startup.load_average()
    if not args.skip_startup:
        ctx["startup_lines"] = startup_section(10)
    if device == "cuda":
        ctx["gpu_lines"] = [
            "## GPU", "",
            f"Measured on {ctx['machine'].get('gpu')}: bf16 matmul rate "
            f"{ctx['matmul']['tflops']:.1f} TFLOPS (8192×8192); the training share of it "
            "is in the line under the table.", "",
        ]
    else:
        ctx["gpu_lines"] = GPU_NONE
    ctx["wall"] = time.perf_counter() - started
    print(write_report(Path(args.out), ctx))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
