"""The named starting points of a run: the assignment (opus-en-zh), its en-de alternative
and the offline demo, each as the settings it changes from :class:`RunConfig`'s defaults.

Plain data with the reason next to each number; :func:`workbench.core.config.build.build_config`
turns a preset, a TOML file and flags into one checked ``RunConfig``."""

from __future__ import annotations

from typing import Any

from workbench.errors import WorkbenchError

#: Model value meaning "build a small MarianMT from scratch on the training split".
SCRATCH_MODEL = "scratch"
#: Data value meaning "the HSK 3.0 sentence pairs shipped in hsk-sentences-audio".
HSK_DATA = "hsk"
#: What each preset is for, shown by ``workbench presets NAME``.
PRESET_NOTES: dict[str, str] = {
    "opus-en-zh": "the assignment: opus-mt-en-zh (77M parameters) on 50,000 WMT19 zh-en "
    "pairs, tested on WMT19's validation split",
    "nllb-en-zh": "NLLB-200 distilled (600M parameters) on the same WMT19 sample and test "
    "set as opus-en-zh; en → zh resolve to eng_Latn → zho_Hans. Fitted to a model 8x "
    "larger: batch 8 (not 16), since weights, gradients and AdamW's moments alone take "
    "9.6 GB in fp32; lr 1e-5 (not 2e-5); 2 epochs; the same 128-token lengths",
    "nllb-1.3b-lora-en-zh": "NLLB-200 1.3B with rank-16 LoRA adapters and gradient "
    "checkpointing on the same WMT19 sample and test set: about 16 GB at a step's peak in "
    "bf16 at batch 16, so it fits a 24 GB GPU, where full fine-tuning (about 39 GB) does not",
    "qwen3-0.6b-en-zh": "Qwen3-0.6B, a decoder-only LLM asked through its chat template, fully "
    "fine-tuned with gradient checkpointing on the same WMT19 sample and test set: about "
    "17 GB at a step's peak at batch 8 (prompt, source and target in one 296-token "
    "sequence), so it fits a 24 GB GPU; on a smaller one add --lora (about 7 GB)",
    "hunyuan-mt-7b-lora-en-zh": "Hunyuan-MT-7B (Tencent's WMT25 translation LLM) with "
    "rank-16 LoRA adapters and gradient checkpointing on the same WMT19 sample and test set: "
    "about 22 GB at a step's peak at batch 8, so it fits a 24 GB GPU, where full "
    "fine-tuning (about 180 GB) does not",
    "opus-en-de": "opus-mt-en-de on WMT14 de-en: a single-pair Marian (no label), BLEU 13a",
    "demo": "fully offline: HSK pairs and a small Marian built here (5 to 8 minutes on "
    "a 2-core CPU)",
    "demo-cpo": "the demo's best model (train --preset demo first) tuned further by CPO on "
    "its own candidates: 8 sampled for each training source, ranked by chrF against the "
    "reference (no neural model is offline here), judged by BLEU (chrF ranked) on the "
    "demo's test set",
}
#: The preset a run starts from when none is named.
DEFAULT_PRESET = "opus-en-zh"

PRESETS: dict[str, dict[str, Any]] = {
    # The assignment: opus-mt-en-zh on a 50,000-pair random sample of WMT19 zh-en.
    "opus-en-zh": {},
    # NLLB-200 (600M) on the same WMT19 sample and test set, so its numbers compare with
    # opus-en-zh's. en and zh resolve to its codes eng_Latn and zho_Hans.
    "nllb-en-zh": {
        "model": "facebook/nllb-200-distilled-600M",
        # 8 a step, not 16: 600M parameters against opus-mt-en-zh's 77M. Weights, gradients
        # and AdamW's two moments take 16 bytes a parameter in fp32, 9.6 GB before any
        # activation; half the batch halves the activations next to them.
        "batch_size": 8,
        "eval_batch_size": 16,
        # The assignment's lengths, so both presets see the same text; NLLB's 1,024
        # positions would allow more, at a quadratic attention cost.
        "max_source_length": 128,
        "max_target_length": 128,
        # Half opus-en-zh's step size for a model 8x larger; 2 epochs of 45,000 training
        # pairs are 11,250 steps of 8, against opus-en-zh's 3 x 2,813 of 16.
        "learning_rate": 1e-5,
        "epochs": 2.0,
    },
    # NLLB-200 1.3B (1.37B parameters) on one 24 GB GPU, with the sample and test set of
    # opus-en-zh. The memory plan's arithmetic at batch 16 × 128/128 tokens in bf16
    # (workbench train prints it before loading a weight):
    #   weights    1.37B × (4 fp32 + 2 bf16 copy)                        8.3 GB
    #   full fine-tuning: + gradients 5.5 + AdamW 11.0 + activations 13.5 = 39.2 GB: no
    #   LoRA r16 on q_proj, v_proj: 4.7M trainable: gradients, AdamW      0.06 GB
    #   activations without checkpointing 15.9 GB (25.2 in all: no), with it 6.8 GB,
    #   most of it the 256,206-wide logits (16 × 128 × 256,206 × 4 bytes × 3)
    #   + the CUDA runtime 1.0                                             16.1 GB: fits
    # Batch 32 would need 41 GB without checkpointing; 16 keeps headroom for long batches.
    "nllb-1.3b-lora-en-zh": {
        "model": "facebook/nllb-200-1.3B",
        "lora": True,
        "lora_rank": 16,
        "lora_alpha": 32,
        "gradient_checkpointing": True,
        "batch_size": 16,
        "eval_batch_size": 16,
        "max_source_length": 128,
        "max_target_length": 128,
        # Adapters start at zero and are few: LoRA's usual step size, 10x full fine-tuning's.
        "learning_rate": 2e-4,
        "epochs": 2.0,
    },
    # Qwen3-0.6B (596,049,920 parameters, embeddings tied), a decoder-only LLM: one sequence
    # a pair of the chat prompt (about 30 tokens; the plan allows 40), the source (128) and
    # the target (128), the loss on the target's tokens. Its config.json, as the Hub gives
    # it (https://huggingface.co/Qwen/Qwen3-0.6B/raw/main/config.json, quoted in a public
    # repository found through this project's code search; the same shape is in
    # torchtune's qwen3_0_6b builder): hidden 1024, 28 layers, 16 query heads and 8
    # key-value heads of 128, FFN 3072, 151,936 pieces, 40,960 positions, bfloat16.
    # A run fine-tunes it in fp32 weights (architecture.run_dtype: bf16 weights would round
    # most of AdamW's small updates away) under bf16 autocast, so the memory plan at batch
    # 8 × 296 tokens on a GPU with bf16 (workbench train prints it before loading a weight):
    #   weights 2.4 + their bf16 copy 1.2 + gradients 2.4 + AdamW 4.8
    #     + activations 12.5 (the 151,936-wide logits of every position the largest part)
    #     + the CUDA runtime 1.0                                        = 24.2 GB: not 24
    #   with --gradient-checkpointing (on here): activations 4.9       = 16.6 GB: fits 24
    #   batch 16 with checkpointing: 21.5 GB; --lora (rank 8 on q_proj, v_proj, the frozen
    #   base in bf16): 11.0 GB; --lora --gradient-checkpointing: 6.8 GB, the way on an
    #   8 to 12 GB GPU
    # The same model size as NLLB-200 distilled 600M, hence nllb-en-zh's step: batch 8, lr
    # 1e-5 (full fine-tuning of an LLM: 1e-5 to 2e-5), 2 epochs.
    "qwen3-0.6b-en-zh": {
        "model": "Qwen/Qwen3-0.6B",
        "prompt": "chat",
        "gradient_checkpointing": True,
        "batch_size": 8,
        "eval_batch_size": 16,
        "max_source_length": 128,
        "max_target_length": 128,
        "learning_rate": 1e-5,
        "epochs": 2.0,
    },
    # Hunyuan-MT-7B (model type hunyuan_v1_dense) with rank-16 LoRA adapters on one 24 GB
    # GPU, on the same sample and test set. Its shape, as Tencent's hunyuan_v1_dense 7B
    # configs give it (Hy-MT2-7B's config.json, and Hunyuan-7B's as model-support test
    # fixtures quote it, found through this project's code search): hidden 4096, 32 layers,
    # 32 query heads and 8 key-value heads of 128, FFN 14,336, 128,167 pieces, q/k norms,
    # bfloat16. Hunyuan-MT-7B's own config.json was not found offline: its Hub listing
    # (huggingface.co/tencent/Hunyuan-MT-7B/tree/main) holds 16.06 GB of bf16 weights,
    # 8.03B parameters, which this shape gives with an untied output layer (tied: 7.50B,
    # 15.0 GB, Hunyuan-7B-Instruct's listing); the plan counts the untied 8,029,540,352.
    # The memory plan at batch 8 × 296 tokens (the plan's 40 for a prompt of about 20,
    # + 128 + 128) on a GPU in bf16:
    #   full fine-tuning (fp32 weights to train, 32.1, and their bf16 copy, 16.1),
    #   gradients 32.1, AdamW 64.2, activations 34.8                    = 180.3 GB: no
    #   LoRA's frozen base as its checkpoint stores it: 8.03B × 2 bytes    16.1 GB
    #   LoRA r16 on q_proj, v_proj: 6.8M trainable: gradients, AdamW        0.08 GB
    #   activations without checkpointing 20.8 GB (37.9 in all: no), with it 4.8 GB (3.6
    #   of it the logits, 8 × 296 × 128,167 × 4 bytes × 3), decoding 3.9 GB in its place
    #   at evaluation (16 × 4 beams)
    #   + the CUDA runtime 1.0                                              22.0 GB: fits
    # Batch 16 would need 26.9 GB even with checkpointing. The chat prompt is Hunyuan-MT's
    # own instruction (把下面的文本翻译成中文，不要额外解释。), no system prompt.
    "hunyuan-mt-7b-lora-en-zh": {
        "model": "tencent/Hunyuan-MT-7B",
        "prompt": "chat",
        "lora": True,
        "lora_rank": 16,
        "lora_alpha": 32,
        "gradient_checkpointing": True,
        "bf16": True,
        "batch_size": 8,
        "eval_batch_size": 16,
        "max_source_length": 128,
        "max_target_length": 128,
        # LoRA's usual step size, as nllb-1.3b-lora-en-zh; one epoch, as ALMA's parallel
        # stage: a model already trained on translation needs little.
        "learning_rate": 2e-4,
        "epochs": 1.0,
    },
    "opus-en-de": {
        "model": "Helsinki-NLP/opus-mt-en-de",
        "data": "wmt/wmt14",
        "data_config": "de-en",
        "target_lang": "de",
        "target_label": None,
        "bleu_tokenize": "13a",
    },
    # Fully offline: HSK pairs and a small Marian built here. Measured on this project's
    # 2-core CPU machine (docs/results.md, "The demo recipe"): 28 epochs x 107 steps of batch 32
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
        # 32 gives twice the updates and trained (validation BLEU 11.4; docs/results.md).
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
# The demo's data, split, lengths and decoding, so its test set is the demo's, sentence
# for sentence; the model is the demo's published best model (the run starts from that
# run's own copy: run_start.starting_model).
PRESETS["demo-cpo"] = {
    **{k: v for k, v in PRESETS["demo"].items() if not k.startswith("scratch_")},
    "model": "translation_output/best_model",
    "objective": "cpo",
    "rank_by": "chrf",
    "candidates": 8,
    # A few gentle epochs from a trained model: a tenth of the demo's step size, no
    # warm-up, and no label smoothing (CPO's NLL term is on the chosen translation as is).
    "learning_rate": 7e-5,
    "epochs": 3.0,
    "warmup_ratio": 0.0,
    "label_smoothing": 0.0,
    "logging_steps": 5,
}


def preset_named(name: str) -> dict[str, Any]:
    """The settings preset ``name`` changes from :class:`RunConfig`'s defaults: the one
    lookup of a preset by name, so that every front end says the same of an unknown one."""
    if name not in PRESETS:
        raise WorkbenchError(f"unknown preset '{name}'; choose one of: {', '.join(PRESETS)}")
    return PRESETS[name]
