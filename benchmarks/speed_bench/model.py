"""The model both arms fine-tune: opus-mt-en-zh's shape, random weights, a test tokenizer.

Random weights never emit </s>, so generation would always run to its length bound. The
model class built here (``length_forced_model_class``) bans </s> until each sentence's
reference length and forces it there, identically in both arms, so every sentence gets
the length a trained model would roughly give it.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .results import SavedPairs

if TYPE_CHECKING:
    from transformers import MarianMTModel, PreTrainedTokenizerBase, PreTrainedTokenizerFast

# opus-mt-en-zh's config.json / generation_config.json (the parts that cost time).
OPUS_SHAPE: dict[str, Any] = {
    "vocab_size": 65001,
    "d_model": 512,
    "encoder_layers": 6,
    "decoder_layers": 6,
    "encoder_attention_heads": 8,
    "decoder_attention_heads": 8,
    "encoder_ffn_dim": 2048,
    "decoder_ffn_dim": 2048,
    "max_position_embeddings": 512,
    "activation_function": "swish",
    "scale_embedding": True,
    "share_encoder_decoder_embeddings": True,
    "tie_word_embeddings": True,
    "pad_token_id": 65000,
    "eos_token_id": 0,
    "decoder_start_token_id": 65000,
    "forced_eos_token_id": 0,
}
OPUS_GENERATION = {"num_beams": 4, "max_length": 512, "bad_words_ids": [[65000]]}
PAD, EOS, UNK = 65000, 0, 1


def build_tokenizer() -> PreTrainedTokenizerFast:
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
        single="$A </s>", special_tokens=[("</s>", EOS)]
    )
    return PreTrainedTokenizerFast(
        tokenizer_object=core,
        eos_token="</s>",
        unk_token="<unk>",
        pad_token="<pad>",
        model_max_length=512,
        model_input_names=["input_ids", "attention_mask"],
    )


def length_forced_model_class() -> type[MarianMTModel]:
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
            lengths = [
                self.forced_lengths[tuple(row[keep].tolist())]
                for row, keep in zip(input_ids.cpu(), mask.cpu().bool(), strict=True)
            ]
            processors = LogitsProcessorList(kwargs.pop("logits_processor", None) or [])
            processors.append(EosAtLength(torch.tensor(lengths), EOS))
            return super().generate(
                input_ids=input_ids,
                attention_mask=attention_mask,
                logits_processor=processors,
                **kwargs,
            )

    return LengthForcedMarian


def load_model(
    workdir: Path, device: str, **overrides: Any
) -> tuple[MarianMTModel, PreTrainedTokenizerBase, SavedPairs]:
    """The saved random model (length-forced generation), its tokenizer and the data."""
    from transformers import AutoTokenizer

    from workbench.core.model.load import quiet_libraries

    quiet_libraries()
    tokenizer = AutoTokenizer.from_pretrained(str(workdir / "model"))
    model = length_forced_model_class().from_pretrained(str(workdir / "model"), **overrides)
    data = json.loads((workdir / "data.json").read_text(encoding="utf-8"))
    # LengthForcedMarian's own attribute: the class is local, so mypy sees a MarianMTModel.
    model.forced_lengths = {  # type: ignore[assignment]
        tuple(tokenizer(src)["input_ids"]): len(tokenizer(text_target=tgt)["input_ids"])
        for src, tgt in data["train"] + data["validation"]
    }
    # transformers wraps Module.to with functools.wraps, which hides the bound self from mypy.
    model.to(device)  # type: ignore[arg-type]
    return model, tokenizer, data
