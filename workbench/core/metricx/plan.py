"""What a MetricX model will take in memory, said before its weights are fetched.

MetricX-24 Large is 1.2B parameters (4.9 GB in fp32), XXL 13B (26 GB in bf16): on the
machine that trains a small model it can be the larger part of the run. Its
``config.json`` is enough to count every parameter on torch's meta device, and its
``torch_dtype`` says what each takes (the weights run in the dtype they were saved in), so
``--metricx`` says what the scorer will take, and refuses one that cannot fit, before
training starts.
"""

from __future__ import annotations

from workbench.core.metricx.files import locate
from workbench.core.metricx.network import build
from workbench.core.metricx.scorer import MetricXSettings
from workbench.core.records.memory import GB, ScorerMemory

#: The framework's own memory beside the scorer (the process with torch loaded).
RUNTIME = 1.0 * GB
#: Bytes a value takes in each dtype a checkpoint may be saved in, and its short name.
DTYPES = {"float32": (4, "fp32"), "bfloat16": (2, "bf16"), "float16": (2, "fp16")}
#: Hidden states a layer holds at once: its input, the attention's q, k, v and output,
#: and the gated feed-forward's two halves (about d_ff / d_model each, counted apart).
WORKING_STATES = 5
#: The words predict.py puts around the texts ("source: ", " candidate: ",
#: " reference: "), in mT5 pieces, with the end-of-sequence id.
LABEL_TOKENS = 12


def input_tokens(source: int, target: int) -> int:
    """The longest input a run's pair makes: its source, and a translation and a reference
    of up to ``target`` tokens each, with the labels (the run's tokens stand for mT5's)."""
    return source + 2 * target + LABEL_TOKENS


def scorer_memory(
    settings: MetricXSettings, tokens: int, budget: tuple[float, str]
) -> ScorerMemory:
    """The memory the MetricX model ``settings`` names will take scoring its batch of
    inputs of up to ``tokens`` tokens (cut at its input length), against ``budget`` (bytes,
    and where that figure comes from). Eager attention holds each layer's scores whole:
    batch × heads × tokens² values."""
    source = locate(settings.model)
    config = source.config
    parameters = sum(p.numel() for p in build(config).parameters())  # on the meta device
    size, dtype = DTYPES.get(str(config.get("torch_dtype", "float32")), DTYPES["float32"])
    length = min(tokens, settings.max_length or source.edition.max_length)
    batch, width, heads = settings.batch_size, int(config["d_model"]), int(config["num_heads"])
    states = batch * length * (WORKING_STATES * width + 2 * int(config["d_ff"])) * size
    scores = 2 * batch * heads * length * length * size  # the scores and their softmax
    return ScorerMemory(
        metric=source.edition.name,
        flag="--metricx",
        name=settings.model,
        encoder="mT5",
        parameters=parameters,
        dtype=dtype,
        bytes=parameters * size + states + scores + RUNTIME,
        budget=budget[0],
        budget_source=budget[1],
    )
