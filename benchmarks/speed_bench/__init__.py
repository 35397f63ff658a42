"""Reference recipe vs workbench recipe: training and evaluation throughput, one run.

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
  ``workbench.core.train.recipe.build_trainer``, the trainer ``workbench train`` runs (no
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

The modules, in the order a run uses them: ``modes`` (how much a run measures),
``model`` and ``pairs`` (what both arms train on), ``recipes`` (the two arms),
``workdir`` (saved once for every child process), ``phases``, ``same_loss`` and
``profile`` (what each child process measures), ``orchestration`` (the run), ``report``
(RESULTS.md) with ``summary`` (its table of medians and ratios); ``results`` names the
shapes passed between them. The command is
``benchmarks/speed.py``, which imports this package from its own folder.
"""

from __future__ import annotations

from .model import EOS, PAD, build_tokenizer, load_model
from .modes import MODES, Mode
from .orchestration import machine, run_benchmark, run_phase
from .pairs import length_stats, length_strata, make_lengths, make_pairs
from .phases import child_eval, child_matmul, child_train, model_flops
from .profile import MEASURES, PARTS, child_profile, profile_lines
from .report import GPU_NONE, write_report
from .results import Measurements
from .same_loss import child_check
from .workdir import plan_training, prepare_workdir

__all__ = [
    "EOS",
    "GPU_NONE",
    "MEASURES",
    "MODES",
    "PAD",
    "PARTS",
    "Measurements",
    "Mode",
    "build_tokenizer",
    "child_check",
    "child_eval",
    "child_matmul",
    "child_profile",
    "child_train",
    "length_stats",
    "length_strata",
    "load_model",
    "machine",
    "make_lengths",
    "make_pairs",
    "model_flops",
    "plan_training",
    "prepare_workdir",
    "profile_lines",
    "run_benchmark",
    "run_phase",
    "write_report",
]
