"""The named starting points of a run: the assignment (opus-en-zh), its en-de alternative
and the offline demo, each as the settings it changes from :class:`RunConfig`'s defaults.

Plain data with the reason next to each number; :func:`workbench.core.config.build_config`
turns a preset, a TOML file and flags into one checked ``RunConfig``."""

from __future__ import annotations

from typing import Any

#: Model value meaning "build a small MarianMT from scratch on the training split".
SCRATCH_MODEL = "scratch"
#: Data value meaning "the HSK 3.0 sentence pairs shipped in hsk-sentences-audio".
HSK_DATA = "hsk"
#: The preset a run starts from when none is named.
DEFAULT_PRESET = "opus-en-zh"

PRESETS: dict[str, dict[str, Any]] = {
    # The assignment: opus-mt-en-zh on a 50,000-pair random sample of WMT19 zh-en.
    "opus-en-zh": {},
    "opus-en-de": {
        "model": "Helsinki-NLP/opus-mt-en-de",
        "data": "wmt/wmt14",
        "data_config": "de-en",
        "target_lang": "de",
        "target_label": None,
        "bleu_tokenize": "13a",
    },
    # Fully offline: HSK pairs and a small Marian built here. Measured on this project's
    # 2-core CPU machine (README, "The demo recipe"): 28 epochs x 107 steps of batch 32
    # = 2,996 steps.
    "demo": {
        "model": SCRATCH_MODEL,
        "data": HSK_DATA,
        "data_config": None,
        "target_label": None,
        "samples": 0,
        # 8:1:1 -- train, validation (charts, best epoch), test (before/after BLEU only).
        "validation_fraction": 0.1,
        "test_fraction": 0.1,
        "max_source_length": 64,
        "max_target_length": 64,
        # Batch 32 at lr 7e-4, not 64 at 1e-3: with the 8:1:1 split (3,398 training pairs)
        # batch 64 fell into the one-output-for-everything collapse (validation BLEU 0.4,
        # chrF 3.9: "他很重要。" for every sentence) and a 10% warm-up did not help; batch
        # 32 gives twice the updates and trained (validation BLEU 11.4; README).
        "batch_size": 32,
        "eval_batch_size": 128,
        "learning_rate": 7e-4,
        "epochs": 28.0,
        "warmup_ratio": 0.05,
        "label_smoothing": 0.1,
        "logging_steps": 20,
        "num_beams": 4,
        "max_new_tokens": 64,
        # 2, not 3: a 3-gram block lets 学学学-style stutters through (7% of outputs).
        "no_repeat_ngram_size": 2,
        # 2,000 pieces a side: 20% faster per epoch than 3,000/2,500.
        "scratch_source_vocab": 2000,
        "scratch_target_vocab": 2000,
    },
}
