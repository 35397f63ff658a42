"""What a MetricX model will take in memory, said before its weights are fetched.

MetricX-24 Large is 1.2B parameters (4.9 GB in fp32), XXL 13B (26 GB in bf16): on the
machine that trains a small model it can be the larger part of the run. Its
``config.json`` is enough to count every parameter on torch's meta device, and its
``torch_dtype`` says what each takes, so ``--metricx`` says what the scorer will take, and
refuses one that cannot fit, before training starts.
"""

from __future__ import annotations

from workbench.core.metricx.files import locate
from workbench.core.metricx.network import build
from workbench.core.records.memory import GB, ScorerMemory

#: The framework's own memory beside the scorer (the process with torch loaded).
RUNTIME = 1.0 * GB
#: Bytes a value takes in each dtype a checkpoint may be saved in.
DTYPE_BYTES = {"float32": 4, "bfloat16": 2, "float16": 2}
#: Hidden states a layer holds at once: its input, the attention's q, k, v and output,
#: and the gated feed-forward's two halves (about d_ff / d_model each, counted apart).
WORKING_STATES = 5


def scorer_memory(
    name: str, batch_size: int, tokens: int, budget: tuple[float, str]
) -> ScorerMemory:
    """The memory MetricX model ``name`` will take scoring ``batch_size`` inputs of up to
    ``tokens`` tokens at once, against ``budget`` (bytes, and where that figure comes from).
    Eager attention holds each layer's scores whole: batch × heads × tokens² values."""
    source = locate(name)
    config = source.config
    network = build(config)
    parameters = sum(p.numel() for p in network.parameters())
    size = DTYPE_BYTES.get(str(config.get("torch_dtype", "float32")), 4)
    width, heads = int(config["d_model"]), int(config["num_heads"])
    states = batch_size * tokens * (WORKING_STATES * width + 2 * int(config["d_ff"])) * size
    scores = 2 * batch_size * heads * tokens * tokens * size  # the scores and their softmax
    return ScorerMemory(
        name=name,
        encoder=f"{source.edition.name}, {parameters / 1e9:.2f}B parameters",
        parameters=parameters,
        bytes=parameters * size + states + scores + RUNTIME,
        budget=budget[0],
        budget_source=budget[1],
    )
