"""One run: the work folder, then every (arm, phase, repetition) in a fresh process.

Arms are interleaved (A B, then B A) so that load from other sessions on a shared
machine falls on both; each phase's process is ``benchmarks/speed.py --child ...``,
which calls ``run_phase`` and writes its result as JSON for the parent to read back.
The smoke run calls ``run_phase`` in its own process instead, for all but one phase.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, cast

import startup  # the sibling script: start-up timing
from figures import figure, load_average  # the sibling module: "n/a", the load

from .modes import Mode
from .phases import child_eval, child_matmul, child_train
from .profile import child_profile
from .report import GPU_NONE, gpu_section, startup_section
from .results import (
    ARMS,
    Arm,
    ArmRuns,
    CheckResult,
    EvalResult,
    Machine,
    MatmulRate,
    Measurements,
    PhaseResult,
    TrainResult,
)
from .same_loss import child_check
from .workdir import prepare_workdir

REPO = Path(__file__).resolve().parents[2]
ENTRY_POINT = REPO / "benchmarks" / "speed.py"  # what each child process runs
PROFILED_STEPS = 4  # timed steps of the profile, after one untimed


def run_child(args: list[str], workdir: Path, threads: int, fresh: bool = True) -> dict[str, Any]:
    """Run one phase in a fresh interpreter (or, not ``fresh``, in this one: the smoke
    run) and return its JSON result."""
    result = workdir / f"result-{time.time_ns()}.json"
    if not fresh:
        run_phase(args, workdir, result, threads)
        return json.loads(result.read_text(encoding="utf-8"))
    env = {
        **os.environ,
        "HF_HUB_OFFLINE": "1",
        "TOKENIZERS_PARALLELISM": "false",
        "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]),
    }
    done = subprocess.run(
        [
            sys.executable,
            str(ENTRY_POINT),
            "--child",
            *args,
            "--workdir",
            str(workdir),
            "--result",
            str(result),
            "--threads",
            str(threads),
        ],
        env=env,
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        raise SystemExit(f"child {args} failed:\n{done.stderr[-4000:]}")
    return json.loads(result.read_text(encoding="utf-8"))


def run_phase(child: list[str], workdir: Path, result: Path, threads: int | None) -> None:
    """In a child process: run the phase ``run_child`` asked for, write its result."""
    kind, *rest = child
    device = rest[-1]
    if threads:
        import torch

        torch.set_num_threads(threads)
    found: PhaseResult
    if kind == "train":
        found = child_train(arm_named(rest[0]), workdir, device)
    elif kind == "eval":
        found = child_eval(arm_named(rest[0]), workdir, device, final=rest[1] == "final")
    elif kind == "check":
        found = child_check(workdir, device, int(rest[0]), int(rest[1]))
    elif kind == "profile":
        found = cast(PhaseResult, child_profile(workdir, device, rest[0], int(rest[1])))
    else:
        found = child_matmul(device)
    result.write_text(json.dumps(found), encoding="utf-8")


def arm_named(name: str) -> Arm:
    """The arm a child's command line names (the parent passes one of ``ARMS``)."""
    for arm in ARMS:
        if arm == name:
            return arm
    raise ValueError(f"unknown arm {name!r}; one of {', '.join(ARMS)}")


def machine() -> Machine:
    """What the numbers were measured on."""
    import torch
    import transformers

    cpu = "unknown CPU"
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        for line in cpuinfo.read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    found: Machine = {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "torch_threads": torch.get_num_threads(),
        "python": platform.python_version(),
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "platform": platform.platform(),
    }
    if torch.cuda.is_available():
        found["gpu"] = torch.cuda.get_device_name(0)
        found["bf16"] = torch.cuda.is_bf16_supported()
    return found


def run_benchmark(mode: Mode, device: str, with_startup: bool = True) -> Measurements:
    """Prepare the work folder, time every phase in its own process, gather the results."""
    started = time.perf_counter()
    measured_on = machine()
    load_before = load_average()
    runs: dict[Arm, ArmRuns] = {arm: {"train": [], "eval": []} for arm in ARMS}
    with tempfile.TemporaryDirectory(prefix="wb-speed-") as tmp:
        workdir = Path(tmp)
        data = prepare_workdir(workdir, mode, device, shape=mode.shape)
        print(f"model and data ready ({data['parameters'] / 1e6:.1f}M parameters)", flush=True)
        for rep in range(mode.reps):
            order = ARMS if rep % 2 == 0 else ARMS[::-1]
            for phase in ("train", "eval"):
                for arm in order:
                    # Quick mode times the final (4-beam) decoding in the first repetition
                    # only: it is the same decoding on both sides, shown for information.
                    final = "final" if rep == 0 or mode.name != "quick" else "no-final"
                    extra = [final] if phase == "eval" else []
                    found = run_child(
                        [phase, arm, *extra, device], workdir, mode.threads, mode.fresh_processes
                    )
                    # The child wrote the phase's result type as JSON (run_phase).
                    if phase == "train":
                        runs[arm]["train"].append(cast(TrainResult, found))
                    else:
                        runs[arm]["eval"].append(cast(EvalResult, found))
                    key = "samples_per_s" if phase == "train" else "sentences_per_s"
                    print(
                        f"rep {rep + 1} {phase:5} {arm:9}: {figure(found.get(key), '.3f')}/s "
                        f"in {figure(found.get('seconds'), '.1f', ' s')}",
                        flush=True,
                    )
        check = cast(
            CheckResult,
            run_child(
                ["check", str(mode.check_batch), str(mode.check_steps), device],
                workdir,
                mode.threads,
                mode.fresh_processes,
            ),
        )
        difference = figure(check.get("max_abs_diff"), ".2e")
        print(f"identical batches: max loss difference {difference}", flush=True)
        profile = run_child(
            ["profile", "as shipped", str(PROFILED_STEPS), device],
            workdir,
            mode.threads,
            mode.fresh_processes,
        )
        # Always a fresh process, so that even the smoke run goes through the child's
        # command line once (the cheapest phase: it imports torch only).
        matmul = cast(MatmulRate, run_child(["matmul", device], workdir, mode.threads))
    load_after = load_average()
    startup_lines = startup_section(startup.measure(10)) if with_startup else []
    gpu_lines = gpu_section(measured_on, matmul) if device == "cuda" else GPU_NONE
    return Measurements(
        mode=mode,
        device=device,
        machine=measured_on,
        load_before=load_before,
        load_after=load_after,
        data=data,
        runs=runs,
        check=check,
        matmul=matmul,
        profile=profile,
        wall=time.perf_counter() - started,
        startup_lines=startup_lines,
        gpu_lines=gpu_lines,
    )
