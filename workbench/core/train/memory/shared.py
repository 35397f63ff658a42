"""What the plans of every model kind count alike: the bytes of a value, the logits'
copies, the framework's own memory, and the plan's figures that do not depend on the
model's kind (its device, budget, batch, lengths, what trains).

Full fine-tuning with AdamW keeps 16 bytes a parameter before any activation (fp32
weights 4, gradients 4, two moments 8): NLLB-200 3.3B needs about 53 GB that way, more than
a 24, 40 or 48 GB card has. Planned from the config alone, such a run is refused in one
line before any weight is loaded, instead of running out of memory minutes into loading.
With LoRA the gradients and moments cover the adapters alone.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from workbench.core.config.run_config import RunConfig
from workbench.core.model.architecture import Shape
from workbench.core.model.meta_model import ParameterCounts
from workbench.core.records.memory import GB, MemoryPlan
from workbench.core.records.run_records import Precision

#: Bytes a parameter takes in fp32, and AdamW's two fp32 moments.
FP32, ADAM_MOMENTS = 4, 8
#: The logits, their log-softmax and its gradient, in fp32 (cross-entropy upcasts).
LOGIT_COPIES = 3
#: The framework's own memory: a CUDA context and cuBLAS' workspaces; on the CPU, the
#: process with torch, transformers and datasets imported (a whole run of a 25k-parameter
#: model peaks at 0.51 GB here) and the scratch memory a first training step takes,
#: checkpointing or not (0.45 GB in a 6+6-layer, 44.8M-parameter NLLB at batch 16 × 64/64:
#: its forward pass took 1.07 GB without checkpointing and 0.49 GB with it, against 0.63
#: and 0.04 GB of activations counted).
RUNTIME = {"cuda": 1.0 * GB, "cpu": 1.0 * GB}


@dataclass(frozen=True)
class PlanRequest:
    """What a model kind's estimate is asked about: the run, its model (config, shape and
    parameters counted on the meta device), the LoRA targets (``None``: full fine-tuning),
    the arithmetic, and the bytes the plan is held against with where that figure comes
    from."""

    config: RunConfig
    model_config: Any
    shape: Shape
    counts: ParameterCounts
    targets: tuple[str, ...] | None
    precision: Precision
    budget: tuple[float, str]

    @property
    def lora(self) -> bool:
        """Whether adapters train in place of the model's own weights."""
        return self.targets is not None

    @property
    def adapters(self) -> int:
        """The parameters LoRA's adapters add (0 when fine-tuning fully)."""
        return self.counts.trainable if self.lora else 0


def plan_of(request: PlanRequest, **kind: Any) -> MemoryPlan:
    """The plan of ``request``: its figures that any model kind has, and ``kind``'s own
    (weights, gradients, optimizer, activations, precision, and what else that kind
    counts)."""
    config, targets = request.config, request.targets
    what = f"LoRA rank {config.lora_rank} on {', '.join(targets)}" if targets else "every weight"
    return MemoryPlan(
        device=request.precision.device,
        what=what,
        parameters=request.counts.total + request.adapters,
        trainable=request.counts.trainable,
        runtime=RUNTIME.get(request.precision.device, RUNTIME["cpu"]),
        budget=request.budget[0],
        budget_source=request.budget[1],
        batch_size=config.batch_size,
        lengths=(config.max_source_length, config.max_target_length),
        checkpointing=config.gradient_checkpointing,
        **kind,
    )
