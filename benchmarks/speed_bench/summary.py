"""RESULTS.md's summary: the command, the machine and the set-up, then the table of
medians, ratios, repetitions and spreads of the two arms, and how to read it.

Rendering only, like :mod:`.report`, which puts this summary first: a figure a run did
not measure prints as "n/a" (``figures.figure``).
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from figures import (  # the sibling module: "n/a" for a missing figure, and noise
    NOISY,
    Spread,
    figure,
    median,
    noise_summary,
    noise_warning,
    ratio,
    spread,
    spread_share,
)

from .recipes import BATCH
from .results import ARMS, Measurements

THREADS_NOTE = (
    "One torch thread per process (`--threads 1`, the quick default): when another session "
    "keeps the second core busy, two torch threads wait on each other at every operation. "
    "Measured on this machine at load ~5: one training step of 16×33 tokens took 22-29 s "
    "with 2 threads and 7 s with 1 (16×128 tokens: 42-44 s vs 25 s). Both arms run alike."
)


def median_of(results: Sequence[Mapping[str, Any]], key: str) -> float | None:
    """The median of ``key`` over the repetitions that measured it (``None``: none did)."""
    return median(r.get(key) for r in results)


def measured_values(results: Sequence[Mapping[str, Any]], key: str) -> list[Any]:
    """``key`` of each repetition that measured it, in order."""
    return [r[key] for r in results if key in r]


def short_number(value: float | None) -> str:
    """Three significant figures, or a whole number from 100 up: ``0.673``, ``4,259``."""
    if value is None:
        return figure(value)
    return figure(value, ",.3g" if abs(value) < 100 else ",.0f")


def spread_cell(spreads: dict[str, Spread]) -> str:
    """Each arm's spread ("reference 2%; workbench 11%"), then the flag of a noisy figure;
    once "1 repetition: no spread" where no arm has two."""
    shares = {arm: spread_share(s) for arm, s in spreads.items()}
    if len(set(shares.values())) == 1 and all(s.count < 2 for s in spreads.values()):
        return next(iter(shares.values()))  # "1 repetition: no spread" (or "n/a") once
    cell = "; ".join(f"{arm} {share}" for arm, share in shares.items())
    warning = noise_warning(spreads)
    return f"{cell}: **{warning}**" if warning else cell


def summary_lines(measured: Measurements) -> list[str]:
    """The command, machine and set-up, then the table of medians and ratios."""
    table = _MetricTable(measured)
    rows = table.rows()
    return [
        *_setup_lines(measured, table.noise),
        "| metric | reference | workbench | workbench / reference | target | per repetition "
        "| spread |",
        "| --- | --- | --- | --- | --- | --- | --- |",
        *rows,
        *_reading_lines(measured),
    ]


class _MetricTable:
    """The table's rows, each a figure's medians, ratio, target, repetitions and spread;
    each row's spreads are kept in :attr:`noise` for the summary above the table."""

    def __init__(self, measured: Measurements) -> None:
        self.measured = measured
        self.noise: dict[str, dict[str, Spread]] = {}  # each row's label → each arm's spread

    def rows(self) -> list[str]:
        """Every row of the table, the GPU's memory on a run on CUDA."""
        row = self.row
        rows = [
            row("training samples/s", "train", "samples_per_s", "≥ 2.5×"),
            row("training target tokens/s", "train", "target_tokens_per_s"),
            row("evaluation during training, sentences/s", "eval", "sentences_per_s", "≥ 3×"),
            row("evaluation during training, target tokens/s", "eval", "target_tokens_per_s"),
            row(
                "final before/after decoding, sentences/s (4 beams both)",
                "eval",
                "final_sentences_per_s",
                "same decoding",
            ),
            row(
                "peak memory, training (RSS MiB)", "train", "rss_mib", "", "", lower_is_better=True
            ),
            row(
                "peak memory, evaluation (RSS MiB)", "eval", "rss_mib", "", "", lower_is_better=True
            ),
        ]
        if self.measured.device == "cuda":
            rows += [
                row("peak GPU memory, training (MiB)", "train", "gpu_mib", "", "", True),
                row("peak GPU memory, evaluation (MiB)", "eval", "gpu_mib", "", "", True),
            ]
        return rows

    def row(
        self,
        label: str,
        phase: Literal["train", "eval"],
        key: str,
        target: str = "",
        unit: str = "",
        lower_is_better: bool = False,
    ) -> str:
        """One figure's row (``lower_is_better``: the ratio is reference / workbench)."""
        runs = self.measured.runs
        a, b = median_of(runs["reference"][phase], key), median_of(runs["workbench"][phase], key)
        times = ratio(a, b) if lower_is_better else ratio(b, a)
        each = "; ".join(
            f"{arm}: " + ", ".join(short_number(v) for v in measured_values(runs[arm][phase], key))
            for arm in ARMS
        )
        spreads: dict[str, Spread] = {
            arm: spread(measured_values(runs[arm][phase], key)) for arm in ARMS
        }
        self.noise[label] = spreads
        shown = figure(times, ".2f", "×")  # a noisy figure's ratio is not quoted as a result
        shown = f"({shown}: noisy)" if noise_warning(spreads) else f"**{shown}**"
        return (
            f"| {label} | {short_number(a)}{unit} | {short_number(b)}{unit} "
            f"| {shown} | {target} | {each} | {spread_cell(spreads)} |"
        )


def _setup_lines(measured: Measurements, noise: dict[str, dict[str, Spread]]) -> list[str]:
    """The title, the command, the machine and its load, the noise, the model and data."""
    runs, machine, mode, data = measured.runs, measured.machine, measured.mode, measured.data
    ref, wb = runs["reference"], runs["workbench"]
    gpu = (
        f"GPU {machine['gpu']}" + (" (bf16)" if machine.get("bf16") else "")
        if "gpu" in machine
        else "no GPU"
    )
    return [
        "# Speed: the reference recipe vs the workbench recipe",
        "",
        f"Command: `python benchmarks/speed.py{'' if mode.name == 'full' else f' --{mode.name}'}` "
        f"({mode.name} mode; {measured.wall / 60:.1f} min wall), measured "
        f"{time.strftime('%Y-%m-%d')}.",
        "",
        f"Machine: {machine['cpu']}, {machine['cores']} cores, torch threads per process: "
        f"{mode.threads or machine['torch_threads']}, "
        f"{gpu}, "
        f"Python {machine['python']}, torch {machine['torch']}, "
        f"transformers {machine['transformers']}, "
        f"{machine['platform']}. Device used: **{measured.device}**.",
        f"Load average (1/5/15 min) before: {measured.load_before}; after: {measured.load_after} "
        f"— other sessions share these {machine['cores']} cores; arms are interleaved so such "
        "load falls on both.",
        "",
        noise_summary(noise),
        *(["", THREADS_NOTE] if mode.threads == 1 else []),
        "",
        f"Model: opus-mt-en-zh's shape, random weights ({data['parameters'] / 1e6:.1f}M "
        f"parameters), attention `{wb['train'][0]['attention']}` in both arms; precision "
        f"reference {ref['train'][0]['precision']}, workbench {wb['train'][0]['precision']}. "
        f"Training: one epoch over {data['train_text']} ({data['train_pairs'] // BATCH} "
        f"steps of {BATCH}). Evaluation: {data['validation_text']}. {mode.reps} "
        "repetitions per arm, each phase in a "
        + ("fresh process" if mode.fresh_processes else "single process (the smoke run)")
        + ", order A B, then B A. Tensor "
        "widths of the timed training batches (source/target, first repetition): "
        + "; ".join(
            f"{arm} " + ", ".join(f"{a}/{b}" for a, b in runs[arm]["train"][0]["padded_widths"])
            for arm in ARMS
        )
        + ". Decoder positions projected "
        "onto the 65,001-word vocabulary in the timed epoch (`lm_head`, the largest matmul "
        "of a step): "
        + ", ".join(
            f"{arm} {figure(runs[arm]['train'][0].get('projected_rows'), ',')}" for arm in ARMS
        )
        + f"; real target tokens {data['train_target_tokens']:,}.",
        "",
    ]


def _reading_lines(measured: Measurements) -> list[str]:
    """How to read the memory ratios and the spread, and the useful share of the machine's
    matmul rate each arm reached in training."""
    runs, rate = measured.runs, measured.matmul
    tflops = rate.get("tflops")
    flops_per_s = None if tflops is None else tflops * 1e12
    fraction = [
        f"{arm}: "
        + figure(ratio(median_of(runs[arm]["train"], "model_flops_per_s"), flops_per_s), ".1%")
        for arm in ARMS
    ]
    return [
        "",
        "For peak memory the ratio is reference / workbench (above 1 = the workbench uses "
        "less). Peak RSS is the whole process (Python, torch, model, optimizer state). "
        "Spread: each arm's largest repetition over its smallest, less one; where an arm's "
        f"repetitions differ by more than {NOISY:.0%} the row says so and its ratio is not "
        "a result.",
        "",
        f"Useful model FLOPs/s in training (matmul FLOPs of the real, unpadded tokens; "
        f"`model_flops`) as a share of this machine's measured {rate.get('dtype')} matmul "
        f"rate ({figure(None if tflops is None else tflops * 1000, '.0f')} GFLOPS, "
        f"{rate.get('n')}×{rate.get('n')} matmuls): {', '.join(fraction)}.",
        "",
    ]
