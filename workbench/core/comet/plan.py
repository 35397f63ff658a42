"""What a COMET model will take in memory, said before its checkpoint is fetched.

COMET-22's XLM-R large encoder is 560M parameters, about 2.2 GB in fp32: on a laptop that
trains a small model that can be the larger part of the run. Its ``hparams.yaml`` (a few
hundred bytes) and its encoder's ``config.json`` are enough to count every parameter on
torch's meta device, so a run with ``--comet`` says what the scorer will take, and
refuses a scorer that cannot fit, before training starts.
"""

from __future__ import annotations

from workbench.core.comet.files import locate
from workbench.core.records.memory import GB, ScorerMemory

#: Bytes an fp32 value takes.
FP32 = 4
#: The framework's own memory beside the scorer (the process with torch loaded).
RUNTIME = 1.0 * GB
#: Hidden states a segment's encoding keeps at once besides the mix: the layer mix reads
#: every one of them (25 for XLM-R large), plus the attention's working set.
WORKING_STATES = 4


def scorer_memory(
    name: str, batch_size: int, tokens: int, budget: tuple[float, str]
) -> ScorerMemory:
    """The memory COMET model ``name`` will take scoring ``batch_size`` sequences of up to
    ``tokens`` tokens at once, against ``budget`` (bytes, and where that figure comes from)."""
    import torch
    from transformers import XLMRobertaModel

    from workbench.core.comet.network import CometNetwork
    from workbench.core.model.load import load_model_config

    source = locate(name)
    settings = source.declared_settings()
    encoder = source.encoder_folder(settings.pretrained_model)
    config = load_model_config(encoder)
    with torch.device("meta"):
        network = CometNetwork(settings, XLMRobertaModel(config, add_pooling_layer=False), name)
    parameters = sum(p.numel() for p in network.parameters())
    length = min(tokens, int(config.max_position_embeddings) - 2)
    states = int(config.num_hidden_layers) + 1 + WORKING_STATES
    activations = batch_size * length * int(config.hidden_size) * states * FP32
    return ScorerMemory(
        metric="COMET",
        flag="--comet",
        name=name,
        encoder=settings.pretrained_model,
        parameters=parameters,
        dtype="fp32",
        bytes=parameters * FP32 + activations + RUNTIME,
        budget=budget[0],
        budget_source=budget[1],
    )
