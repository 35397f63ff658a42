"""The shapes of what the benchmark measures, from one child process to the report.

Each phase runs in a fresh process and hands its result back as JSON, so the per-phase
results are plain dicts; these TypedDicts name their keys. ``Measurements`` gathers one
whole run, and is all ``write_report`` reads.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypedDict

from .modes import Mode

Arm = Literal["reference", "workbench"]
ARMS: tuple[Arm, ...] = ("reference", "workbench")


class SavedPairs(TypedDict):
    """data.json in the work folder: [source, target] texts every child process loads."""

    train: list[list[str]]
    validation: list[list[str]]


class LengthStats(TypedDict):
    """Mean, median and tail of a list of lengths (``length_stats``)."""

    mean: float
    median: float
    p90: int
    p99: int
    max: int
    share_over_64: float


class DataSummary(TypedDict):
    """What ``prepare_workdir`` saved: the model's size and the pairs, for the report."""

    parameters: int
    train_pairs: int
    train_target_tokens: int  # </s> included
    train_text: str
    validation_pairs: int
    validation_text: str
    lengths: dict[str, LengthStats]


class PeakMemory(TypedDict):
    """Peak resident memory of a child process, in MiB."""

    rss_mib: float


class PeakGpuMemory(PeakMemory, total=False):
    """Peak memory, with the GPU's where the phase ran on one."""

    gpu_mib: float


class TrainResult(PeakGpuMemory):
    """One timed training epoch (``child_train``)."""

    samples: int
    steps: int
    seconds: float
    samples_per_s: float
    target_tokens_per_s: float
    model_flops_per_s: float
    step_seconds: list[float]
    padded_widths: list[list[int]]  # [source, target] tensor width of each batch
    projected_rows: int  # decoder positions projected onto the vocabulary
    losses: list[float]
    precision: str  # "bf16", "fp16" or "fp32"
    attention: str


class EvalTimes(PeakGpuMemory):
    """One timed ``trainer.evaluate()`` (``child_eval``)."""

    sentences: int
    seconds: float
    sentences_per_s: float
    target_tokens_per_s: float
    beams: int
    eval_loss: float | None


class EvalResult(EvalTimes, total=False):
    """The evaluation, and the final before/after decoding where it was timed too."""

    final_sentences_per_s: float
    final_beams: int


class ArmRuns(TypedDict):
    """One arm's results, a list entry per repetition."""

    train: list[TrainResult]
    eval: list[EvalResult]


class CheckResult(TypedDict):
    """Per-step losses of identical batches padded either way (``child_check``)."""

    batch: int
    steps: int
    losses: dict[str, list[float]]  # per arm
    max_abs_diff: float
    real_tokens: int
    projected_rows: dict[str, int]  # per arm


class MatmulRate(TypedDict):
    """The machine's dense matmul rate (``child_matmul``)."""

    dtype: str
    n: int
    tflops: float


PhaseResult = TrainResult | EvalResult | CheckResult | MatmulRate  # what a child writes


class MachineCore(TypedDict):
    """What the numbers were measured on."""

    cpu: str
    cores: int | None
    torch_threads: int
    python: str
    torch: str
    transformers: str
    platform: str


class Machine(MachineCore, total=False):
    """The machine, and its GPU where it has one."""

    gpu: str
    bf16: bool


@dataclass(frozen=True)
class Measurements:
    """Everything one run found and how it ran: all that RESULTS.md is written from."""

    mode: Mode
    device: str  # "cuda" or "cpu"
    machine: Machine
    load_before: str  # the 1/5/15-minute load average, as figures.load_average gives it
    load_after: str
    data: DataSummary
    runs: dict[Arm, ArmRuns]
    check: CheckResult
    matmul: MatmulRate
    profile: dict[str, Any]  # the workbench step's parts (profile.child_profile)
    wall: float  # seconds, the whole run
    startup_lines: Sequence[str] = ()  # the start-up section, unless --skip-startup
    gpu_lines: Sequence[str] = ()  # the GPU section
