"""The timed phases, each run in a fresh child process: training, evaluation, matmul.

A fresh process per (arm, phase, repetition) keeps peak-memory figures and warm caches
from leaking between arms. Each phase returns a JSON-ready dict (``results``): throughput,
peak memory, and what it ran (batch widths, projected rows) so the report can show why.
"""

from __future__ import annotations

import resource
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .model import PAD
from .recipes import build_trainer, workbench_config
from .results import Arm, EvalResult, MatmulRate, PeakGpuMemory, TrainResult

if TYPE_CHECKING:
    from transformers import MarianMTModel


def synchronize(device: str) -> None:
    """Wait for the GPU's queued work, so a clock read after it times the work itself."""
    if device == "cuda":
        import torch

        torch.cuda.synchronize()


def peak_memory(device: str) -> PeakGpuMemory:
    """Peak resident memory of this process (and of the GPU), in MiB."""
    found: PeakGpuMemory = {"rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}
    if device == "cuda":
        import torch

        found["gpu_mib"] = torch.cuda.max_memory_allocated() / 2**20
    return found


def model_flops(model: MarianMTModel, pairs: list[tuple[int, int]]) -> float:
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
        2 * enc * s
        + 2 * dec * t
        + 2 * d * vocab * t
        + n_enc * 4 * s * s * d
        + n_dec * (4 * t * t * d + 4 * t * s * d)
        for s, t in pairs
    )
    return 3.0 * forward


def warm_up(model: MarianMTModel, device: str) -> None:
    """One throw-away forward/backward so neither arm pays first-call set-up in its timing."""
    import torch

    ids = torch.randint(2, PAD, (2, 16), device=device)
    model.train()
    model(input_ids=ids, labels=ids).loss.backward()
    model.zero_grad(set_to_none=True)


def count_projected_rows(model: MarianMTModel) -> dict[str, int]:
    """Count the decoder positions the vocabulary projection (``lm_head``) is applied to.

    The reference projects every padded position; the workbench only the real target
    tokens (``core/train/loss.py``), which this shows for the timed steps themselves.
    """
    counts = {"rows": 0}

    def hook(_module: Any, _args: Any, output: Any) -> None:
        counts["rows"] += output.shape[:-1].numel()

    model.get_output_embeddings().register_forward_hook(hook)
    return counts


def child_train(arm: Arm, workdir: Path, device: str) -> TrainResult:
    """Time one epoch of training (every train pair once) in this arm's recipe."""
    from transformers import TrainerCallback
    from transformers.trainer_utils import IntervalStrategy, SaveStrategy

    trainer, model, tokenizer, data = build_trainer(arm, "train", workdir, device)
    # Evaluation and checkpoints are timed apart from training, in both arms.
    trainer.args.eval_strategy = IntervalStrategy.NO
    trainer.args.save_strategy = SaveStrategy.NO
    trainer.args.load_best_model_at_end = False
    marks: dict[str, list[float]] = {"begin": [], "end": [], "loss": []}

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
        # A method replaced on this one trainer, over its (sized) training set.
        trainer._get_train_sampler = lambda *a, **k: SequentialSampler(  # type: ignore[method-assign]
            trainer.train_dataset  # type: ignore[arg-type]
        )
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
    lengths = [
        (len(tokenizer(s)["input_ids"]), len(tokenizer(text_target=t)["input_ids"]))
        for s, t in data["train"]
    ]
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


def child_eval(arm: Arm, workdir: Path, device: str, final: bool = True) -> EvalResult:
    """Time ``trainer.evaluate()`` (evaluation during training) and the final decoding."""
    from transformers import Seq2SeqTrainingArguments

    trainer, model, tokenizer, data = build_trainer(arm, "eval", workdir, device)
    args = trainer.args
    assert isinstance(args, Seq2SeqTrainingArguments)  # both recipes build one
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
    found: EvalResult = {
        "sentences": len(sources),
        "seconds": seconds,
        "sentences_per_s": len(sources) / seconds,
        "target_tokens_per_s": target_tokens / seconds,
        "beams": args.generation_num_beams or model.generation_config.num_beams,
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
        options = DecodeOptions(
            config.num_beams, config.max_new_tokens, config.no_repeat_ngram_size
        )
        translator = Translator(model, tokenizer, None, config.max_source_length)
        started = time.perf_counter()
        translator.translate_many(sources, options, config.eval_batch_size)
        synchronize(device)
        found["final_sentences_per_s"] = len(sources) / (time.perf_counter() - started)
        found["final_beams"] = options.num_beams
    return found


def child_matmul(device: str) -> MatmulRate:
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
    return {
        "dtype": str(dtype).replace("torch.", ""),
        "n": n,
        "tflops": 2 * n**3 * count / seconds / 1e12,
    }
