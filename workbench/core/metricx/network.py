"""MetricX's ``MT5ForRegression`` rebuilt on transformers 5's mT5 stacks.

google-research/metricx's class (``metricx24/models.py``) is the mT5 encoder and decoder
with the language-model head: the decoder runs one step from id 0 over the encoded input,
and the score is that step's logit of ``<extra_id_10>`` (id 250089), clipped to 0-25
(lower is better: it predicts an MQM error score). The class imports a name transformers
5 removed, so it is rebuilt here from transformers 5's own ``MT5Stack``, with the
checkpoint's tensors under the names the class saves them with.

Two things are read from ``config.json`` as written, not through ``MT5Config``:
transformers 5 forces ``tie_word_embeddings`` to True whatever the file says, and
MetricX's forward rescales the decoder's output by ``d_model ** -0.5`` exactly when that
flag is set (false in every published MetricX-24 checkpoint; absent means true, as
transformers 4 read it). The output layer is always the checkpoint's own ``lm_head``:
MetricX's class has no output embeddings for transformers to tie it to.

Attention runs eager, as transformers 4.30 runs MetricX (the reference): on bf16 weights
SDPA's fused kernel rounds differently and moves scores by tenths (:data:`ATTENTION`).
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbench.core.run_folder.layout import MODEL_CONFIG_FILE
from workbench.errors import WorkbenchError

if TYPE_CHECKING:
    import torch

#: The logit MetricX reads: ``<extra_id_10>`` in mT5's vocabulary.
SCORE_ID = 250089
#: MetricX's scores are clipped to this range (an MQM error score: 0 is perfect).
SCORE_RANGE = (0.0, 25.0)
#: The attention kernel. Eager is what the reference ran. Measured on the fixtures' tiny
#: checkpoints against metricx's predict.py: eager differs by at most 6e-6 (fp32) and 0
#: (bf16); SDPA by 1.1e-5 (fp32) but 0.25 to 0.44 (bf16), where its fused kernel rounds
#: the softmax differently.
ATTENTION = "eager"


def read_config(folder: Path, what: str) -> dict[str, Any]:
    """``config.json`` as written; one line when it is missing, unreadable or not mT5's."""
    path = folder / MODEL_CONFIG_FILE
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise WorkbenchError(
            f"{what} has no config.json in '{folder}'; copy the checkpoint's folder whole "
            "(config.json and its model.safetensors or pytorch_model.bin)"
        ) from None
    except (OSError, ValueError) as err:
        raise WorkbenchError(f"{what}: cannot read '{path}' ({err}); copy it again") from None
    if not isinstance(raw, dict) or raw.get("model_type") not in ("mt5", "t5"):
        kind = raw.get("model_type") if isinstance(raw, dict) else None
        raise WorkbenchError(
            f"{what} is a '{kind}' model, not a MetricX checkpoint (mT5); pass a MetricX "
            "model such as google/metricx-24-hybrid-large-v2p6"
        )
    if int(raw.get("vocab_size", 0)) <= SCORE_ID:
        raise WorkbenchError(
            f"{what} has a vocabulary of {raw.get('vocab_size')} ids, so no <extra_id_10> "
            f"(id {SCORE_ID}) to score with; pass a MetricX checkpoint, which has mT5's 250,112"
        )
    return raw


def mt5_config(raw: dict[str, Any]) -> Any:
    """The ``MT5Config`` of a checkpoint, eager attention set."""
    from transformers import MT5Config

    fields = {k: v for k, v in raw.items() if k not in ("architectures", "torch_dtype", "dtype")}
    config = MT5Config(**fields)
    config._attn_implementation = ATTENTION
    return config


def rescales(raw: dict[str, Any]) -> bool:
    """Whether MetricX's forward scales the decoder's output by ``d_model ** -0.5``."""
    return bool(raw.get("tie_word_embeddings", True))


def build(raw: dict[str, Any]) -> Any:
    """The network (on the meta device: no memory until the weights are assigned)."""
    import torch
    from torch import nn
    from transformers.models.mt5.modeling_mt5 import MT5Stack

    config = mt5_config(raw)

    class MT5Regression(nn.Module):
        """The encoder, one decoder step from id 0, the ``<extra_id_10>`` logit."""

        def __init__(self) -> None:
            super().__init__()
            self.shared = nn.Embedding(config.vocab_size, config.d_model)
            encoder_config = copy.deepcopy(config)
            encoder_config.is_decoder, encoder_config.use_cache = False, False
            self.encoder = MT5Stack(encoder_config)
            decoder_config = copy.deepcopy(config)
            decoder_config.is_decoder, decoder_config.use_cache = True, False
            decoder_config.num_layers = config.num_decoder_layers
            self.decoder = MT5Stack(decoder_config)
            self.encoder.embed_tokens = self.decoder.embed_tokens = self.shared
            self.lm_head = nn.Linear(config.d_model, config.vocab_size, bias=False)
            self.scale = config.d_model**-0.5 if rescales(raw) else None

        def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
            """Each row's score, clipped to 0-25."""
            hidden = self.encoder(input_ids=input_ids, attention_mask=attention_mask)[0]
            start = torch.zeros((input_ids.size(0), 1), dtype=torch.long, device=input_ids.device)
            out = self.decoder(
                input_ids=start,
                encoder_hidden_states=hidden,
                encoder_attention_mask=attention_mask,
                use_cache=False,
            )[0]
            if self.scale is not None:
                out = out * self.scale
            logits = nn.functional.linear(out[:, 0], self.lm_head.weight[SCORE_ID : SCORE_ID + 1])
            return torch.clamp(logits[:, 0], *SCORE_RANGE)

    with torch.device("meta"):
        return MT5Regression()
