"""A run's memory plan as figures: what each part of a training step takes, against what
the device has (worked out by :mod:`workbench.core.train.memory`, worded by
:mod:`workbench.core.views.memory_text`)."""

from __future__ import annotations

from dataclasses import dataclass, field

#: Bytes in the plan's GB: decimal, as a card sold as "24 GB" is counted.
GB = 1e9


@dataclass(frozen=True)
class Fix:
    """Flags that would make a run fit, and what the plan says the run needs with them."""

    flags: tuple[str, ...]
    total: float  # bytes


@dataclass(frozen=True)
class MemoryPlan:
    """The bytes one training step needs at its peak, part by part.

    ``weights`` holds the model (fp32, as the Trainer keeps it; with mixed precision also
    the half-precision copies autocast makes of them), ``gradients`` and ``optimizer``
    (AdamW's two moments) cover the trainable parameters only, ``activations`` what the
    forward pass keeps for the backward one at the run's batch and lengths, ``runtime``
    the framework's own (a CUDA context, or the process's libraries on the CPU).

    A decoder-only model's step is one sequence of ``prompt`` + source + target tokens;
    its ``decoding`` (the key-value cache and one layer's prefill while an evaluation or
    "before"/"after" generates) takes the activations' place, never both at once: the
    larger of the two counts.
    """

    device: str
    what: str  # "full fine-tuning" or "LoRA rank 8 on q_proj, v_proj"
    parameters: int
    trainable: int
    weights: float
    gradients: float
    optimizer: float
    activations: float
    runtime: float
    #: What the plan is held against, in bytes, and where that figure comes from.
    budget: float
    budget_source: str
    batch_size: int
    lengths: tuple[int, int]
    precision: str
    checkpointing: bool
    #: The cheapest flags that would make a run that does not fit fit (none: fits, or
    #: nothing the workbench can change would).
    fix: Fix | None = field(default=None)
    #: A decoder-only model's plan, and the tokens it allows for the prompt around the
    #: source.
    causal: bool = False
    prompt: int = 0
    #: What generating takes beside the weights (0 where the plan does not count it).
    decoding: float = 0.0
    #: DPO's frozen copy of the starting model (0 for any other run, and under LoRA,
    #: whose adapters switched off are the starting model).
    reference: float = 0.0

    @property
    def total(self) -> float:
        """Bytes at the peak of a step."""
        peak = max(self.activations, self.decoding)
        return self.weights + self.reference + self.gradients + self.optimizer + peak + self.runtime

    @property
    def fits(self) -> bool:
        """Whether the peak stays within the budget."""
        return self.total <= self.budget

    @property
    def share(self) -> float:
        """The trainable share of the parameters."""
        return self.trainable / self.parameters if self.parameters else 0.0


@dataclass(frozen=True)
class ScorerMemory:
    """What a neural metric (COMET, MetricX) will take once loaded, worked out from its
    config before its weights are fetched. Scoring the held-out sets, it is loaded only
    after training has let go of the model it trained (and after any other scorer has been
    let go of), so it is held against the budget alone; choosing the best epoch
    (``--select-on comet``), it is loaded beside the training step, whose bytes ``beside``
    holds."""

    metric: str  # "COMET", "MetricX-24"
    flag: str  # the run flag that asks for it: "--comet", "--metricx"
    name: str  # the model as the user named it
    encoder: str  # the encoder it reads its config from ("mT5" for MetricX)
    parameters: int
    dtype: str  # what its weights are held in: "fp32", "bf16"
    bytes: float  # its weights in their dtype, its activations, and the runtime beside them
    budget: float
    budget_source: str
    beside: float = 0.0  # the training step it is loaded beside (its runtime not again)

    @property
    def fits(self) -> bool:
        """Whether the scorer fits the budget (beside the training step, where it is)."""
        return self.bytes + self.beside <= self.budget
