"""``ct2_latency.py --opus-shape``: latency only, of a Marian shaped like opus-mt-en-zh (or
the shape given), with random weights and opus-mt's 65,001-token vocabulary (``<pad>``
last), saved with its two CTranslate2 exports, on one source sentence of token ids.

Random weights never stop, so the arms decode exactly 16 tokens; the ids are fed directly,
as the demo tokenizer (whose SentencePiece files stand in for opus-mt's here) does not fit
that vocabulary: token ``t123`` is id 123.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from interleaved_arms import interleaved, summarize
from speed_bench.model import OPUS_SHAPE as OPUS_CONFIG
from speed_bench.modes import TINY_SHAPE

#: opus-mt-en-zh's shape (the speed benchmark's config), which --opus-shape builds with
#: random weights: the keys TINY_SHAPE sets.
OPUS_SHAPE = {key: OPUS_CONFIG[key] for key in TINY_SHAPE}

#: opus-mt-en-zh's vocabulary: </s> 0, <unk> 1, the pieces, <pad> last.
VOCAB_SIZE = 65001
#: Source tokens before the </s>.
SOURCE_TOKENS = 13


@dataclass(frozen=True)
class OpusShaped:
    """The saved model (its exports ``ct2-int8`` and ``ct2-float32`` beside it), loaded,
    and the source sentence as ids and as the export's tokens."""

    folder: Path
    model: Any
    source_ids: list[int]
    source_tokens: list[str]


def build_opus_shaped(folder: Path, shape: Mapping[str, Any], spm_folder: Path) -> OpusShaped:
    """Build, save and export the model in ``folder`` (made here), with the SentencePiece
    files of the saved model in ``spm_folder``."""
    import torch
    from transformers import MarianConfig, MarianMTModel, MarianTokenizer

    from workbench.core.translate.ct2_export import export_ctranslate2

    folder.mkdir()
    for name in ("source.spm", "target.spm", "tokenizer_config.json"):
        shutil.copy(spm_folder / name, folder / name)
    vocab = {
        "</s>": 0,
        "<unk>": 1,
        **{f"t{i}": i for i in range(2, VOCAB_SIZE - 1)},
        "<pad>": VOCAB_SIZE - 1,
    }
    (folder / "vocab.json").write_text(json.dumps(vocab), encoding="utf-8")
    config = MarianConfig(
        vocab_size=VOCAB_SIZE,
        decoder_vocab_size=VOCAB_SIZE,
        **shape,
        max_position_embeddings=512,
        pad_token_id=VOCAB_SIZE - 1,
        eos_token_id=0,
        decoder_start_token_id=VOCAB_SIZE - 1,
        forced_eos_token_id=0,
        scale_embedding=True,
        activation_function="swish",
        share_encoder_decoder_embeddings=True,
    )
    torch.manual_seed(0)
    model = MarianMTModel(config).eval()
    model.save_pretrained(folder)
    MarianTokenizer.from_pretrained(str(folder)).save_pretrained(folder)
    for quantization in ("int8", "float32"):
        export_ctranslate2(str(folder), quantization)
    rng = random.Random(0)
    source = [rng.randrange(2, VOCAB_SIZE - 1) for _ in range(SOURCE_TOKENS)] + [0]  # + </s>
    tokens = [f"t{i}" for i in source[:-1]] + ["</s>"]
    return OpusShaped(folder, model, source, tokens)


def opus_shape_latency(
    runs: int, gap: float, shape: Mapping[str, Any] = OPUS_SHAPE, warmup: int = 3
) -> dict[str, Any]:
    """A random opus-mt-en-zh-shaped Marian (or ``shape``), with a 65,001-token vocabulary:
    4 beams, exactly 16 output tokens from the same 14 source tokens in every arm."""
    import torch

    from workbench.core.translate.ct2 import import_ctranslate2

    ct2 = import_ctranslate2()
    with tempfile.TemporaryDirectory() as tmp:
        built = build_opus_shaped(Path(tmp) / "opus-shape", shape, _demo_spm_folder())
        model = built.model
        engines = {
            q: ct2.Translator(
                str(built.folder / f"ct2-{q}"),
                device="cpu",
                intra_threads=torch.get_num_threads(),
            )
            for q in ("int8", "float32")
        }
        ids = torch.tensor([built.source_ids])

        def hf() -> None:
            with torch.inference_mode():
                model.generate(
                    input_ids=ids,
                    attention_mask=torch.ones_like(ids),
                    num_beams=4,
                    min_new_tokens=16,
                    max_new_tokens=16,
                )

        def fast(engine: Any) -> None:
            engine.translate_batch(
                [built.source_tokens], beam_size=4, min_decoding_length=16, max_decoding_length=16
            )

        calls = {
            "transformers": hf,
            "ct2 int8": lambda: fast(engines["int8"]),
            "ct2 float32": lambda: fast(engines["float32"]),
        }
        times = interleaved(calls, runs, warmup=warmup, gap=gap)
        return {
            "parameters": sum(p.numel() for p in model.parameters()),
            "source_tokens": len(built.source_ids),
            "output_tokens": 16,
            "beams": 4,
            "rows": summarize(times, "transformers"),
        }


def _demo_spm_folder() -> Path:
    """Any saved demo model: its SentencePiece files stand in for opus-mt's."""
    return Path(os.environ.get("CT2_BENCH_SPM", "translation_output/best_model"))
