"""A run's memory plan as figures: what each part of a training step takes, against what
the device has (worked out by :mod:`workbench.core.train.memory`, worded by
:mod:`workbench.core.views.memory_text`)."""

from __future__ import annotations

from dataclasses import dataclass, field

#: Bytes in the plan's GB: decimal, as a card sold as "24 GB" is counted.
GB = 1e9
#: GPUs in one node, as the usual 8-GPU servers have them: a sharded launch past one node
#: is whole nodes of this many.
GPUS_PER_NODE = 8
#: The most GPUs a plan looks among for a sharded fit: 128 such nodes.
MOST_GPUS = 1024


@dataclass(frozen=True)
class Fix:
    """Flags that would make a run fit, and what the plan says the run needs with them:
    on the budget's one device, or (``world`` above 1) on each of ``world`` such devices
    of a ``--shard`` run, launched with ``arguments`` (the run's own flags and these)."""

    flags: tuple[str, ...]
    total: float  # bytes (a rank's, when sharded)
    world: int = 1
    arguments: tuple[str, ...] = ()


@dataclass(frozen=True)
class Sharding:
    """How a ``--shard`` plan splits a step over its ranks (FSDP2): the weights, gradients
    and AdamW's moments each rank keeps are its 1/``world_size`` of the model's, and each
    rank also holds ``gathered`` bytes of whole units at once (the root and two of the
    largest block, with their gradients; :mod:`workbench.core.train.memory.sharded` says
    why). With ``offload`` the shards live in host memory between uses."""

    world_size: int
    gathered: float  # bytes
    root: int  # parameters of the root unit (what no block holds)
    block: int  # parameters of the largest block
    dtype: str  # what the units are gathered in: "bf16", "fp32"
    offload: bool = False


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

    A ``--shard`` plan (``sharding``) is one rank's: its shard of the weights, gradients
    and moments, the units it gathers, and its own activations (each rank runs the whole
    per-device batch); the budget is one device's.
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
    #: The part of ``weights`` that is autocast's half-precision copies of them.
    copies: float = 0.0
    #: A ``--shard`` plan's split over its ranks (None: one device holds the whole step).
    sharding: Sharding | None = None
    #: For a run that does not fit: the fewest devices of the budget's size that fit it
    #: sharded, with its flags and the fewest others (none: no number up to a bound does).
    scale: Fix | None = None

    @property
    def held(self) -> float:
        """The weights, gradients and AdamW's moments (a rank's shard of them, sharded)."""
        return self.weights + self.gradients + self.optimizer

    @property
    def host(self) -> float:
        """Bytes a rank keeps in host memory instead of on its device: its shards, offloaded."""
        return self.held if self.sharding is not None and self.sharding.offload else 0.0

    @property
    def unshared(self) -> float:
        """Bytes on the device that sharding does not divide: the gathered units, the
        activations or decoding, DPO's reference and the runtime."""
        gathered = self.sharding.gathered if self.sharding is not None else 0.0
        peak = max(self.activations, self.decoding)
        return gathered + peak + self.reference + self.runtime

    @property
    def total(self) -> float:
        """Bytes on the device at the peak of a step (a rank's, sharded)."""
        return self.held - self.host + self.unshared

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
