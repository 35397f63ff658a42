"""What N candidates a line cost in memory while they are generated, held against what
the device has free, before any is generated.

Each candidate is a sequence the decoder carries to the end: its key-value cache (every
decoder layer's keys and values over the source, or a decoder-only model's prompt, and
the output), a seq2seq model's cross-attention cache over the source, and a row of
logits. Beam search carries ``num_beams`` sequences however few it returns; sampling
carries one per sample. So N candidates of one line take about N times (or beams times)
what one beam-1 translation does beside the weights, and a batch of lines that many
times more. The batch is cut to what fits; a single line's candidates that cannot fit are
refused with one line, as a run's memory plan refuses a step that cannot fit. A
CTranslate2 export keeps its own allocator and is not counted.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from workbench.core.decoding import DecodeOptions
from workbench.core.records.memory import GB
from workbench.errors import WorkbenchError

if TYPE_CHECKING:
    from workbench.core.translate.translator import Translator

#: The share of the free memory candidates may take (the rest: the framework's own
#: working buffers while it decodes).
USABLE_SHARE = 0.9
#: Bytes per logit: generate keeps the scores and their processed copy in fp32.
LOGIT_BYTES = 2 * 4


def sequence_bytes(config: Any, value_bytes: int, source_tokens: int, new_tokens: int) -> int:
    """Bytes one decoded sequence holds at its longest: its key-value cache (and a seq2seq
    model's cross-attention cache) and one row of logits."""
    text = config.get_text_config(decoder=True) if hasattr(config, "get_text_config") else config
    layers = _first(text, "decoder_layers", "num_decoder_layers", "num_hidden_layers", "num_layers")
    width = _first(text, "d_model", "hidden_size", "n_embd")
    heads = _first(text, "num_key_value_heads") or 0
    head_dim = _first(text, "head_dim", "d_kv") or (
        width // max(1, _first(text, "num_attention_heads", "decoder_attention_heads", "num_heads"))
    )
    kv_width = heads * head_dim if heads else width
    positions = source_tokens + new_tokens if not config.is_encoder_decoder else new_tokens
    cache = 2 * layers * kv_width * positions * value_bytes
    cross = 2 * layers * width * source_tokens * value_bytes if config.is_encoder_decoder else 0
    return cache + cross + int(_first(text, "vocab_size")) * LOGIT_BYTES


def free_bytes(device: Any) -> tuple[float, str]:
    """Memory free on ``device``, and where that figure comes from."""
    if getattr(device, "type", str(device)) == "cuda":
        import torch

        return float(torch.cuda.mem_get_info(device)[0]), "free on the GPU"
    import psutil

    return float(psutil.virtual_memory().available), "of RAM available"


def sources_per_batch(translator: Translator, options: DecodeOptions, batch_size: int) -> int:
    """Lines decoded at once under ``options`` so that their candidates fit the memory
    free now (at most ``batch_size`` sequences' worth); one line that cannot fit is
    refused with what it needs and what to lower."""
    rows = decoded_rows(options)
    most = max(1, batch_size // rows)
    model = translator.model
    if model is None:  # a CTranslate2 export: its own allocator, not counted here
        return most
    parameter = next(model.parameters())
    source = translator.max_source_length
    each = sequence_bytes(model.config, parameter.element_size(), source, options.max_new_tokens)
    free, where = free_bytes(parameter.device)
    fitting = int(free * USABLE_SHARE // (rows * each))
    if fitting < 1:
        raise WorkbenchError(refusal(options, rows * each, source, free, where))
    return min(most, fitting)


def decoded_rows(options: DecodeOptions) -> int:
    """Sequences one line carries while decoded: its samples, or its beams."""
    return options.num_return_sequences if options.do_sample else options.num_beams


def refusal(options: DecodeOptions, needed: float, source: int, free: float, where: str) -> str:
    """The one line that refuses a line's candidates: what they need, what is free, and
    what to lower."""
    kind = (
        f"{options.num_return_sequences} samples"
        if options.do_sample
        else f"{options.num_beams} beams"
    )
    return (
        f"the candidates of one line need about {needed / GB:.1f} GB while they are "
        f"decoded ({kind} of up to {source} + {options.max_new_tokens} tokens), and "
        f"{free / GB:.1f} GB is {where}; ask for fewer --candidates or --num-beams, or "
        "a lower --max-new-tokens"
    )


def _first(config: Any, *names: str) -> int:
    """The first of ``names`` the config sets, as an int (0 when it sets none)."""
    for name in names:
        value = getattr(config, name, None)
        if isinstance(value, int) and value > 0:
            return value
    return 0
