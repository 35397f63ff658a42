"""RESULTS.md: the command, the machine, medians and ratios, losses, the data model.

Rendering only: everything here reads a finished run (``Measurements``) and measures
nothing, so the report can be rendered from toy results in a test. A figure a run did
not measure prints as "n/a" (``figures.figure``): it must never cost the whole report.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

import startup  # the sibling script: start-up timing
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

from .pairs import RATIO_SIGMA, SOURCE_MEDIAN, SOURCE_SIGMA
from .profile import profile_section
from .recipes import BATCH
from .results import ARMS, DataSummary, Machine, MatmulRate, Measurements

THREADS_NOTE = (
    "One torch thread per process (`--threads 1`, the quick default): when another session "
    "keeps the second core busy, two torch threads wait on each other at every operation. "
    "Measured on this machine at load ~5: one training step of 16×33 tokens took 22-29 s "
    "with 2 threads and 7 s with 1 (16×128 tokens: 42-44 s vs 25 s). Both arms run alike."
)

GPU_NONE = [
    "## GPU",
    "",
    "No GPU was lent to the session that produced this file, so only the CPU quick mode "
    "ran. On a CUDA machine, run the full mode (1,600 training pairs = 100 steps of 16 per "
    "arm, 512 validation sentences, 3 repetitions): `python benchmarks/speed.py`. It uses "
    "the GPU automatically; the workbench arm trains in bf16 where the GPU supports it (as "
    "`workbench train` does), the reference in fp32; the report then adds peak GPU memory "
    "and states the GPU's measured bf16 matmul TFLOPS (8192×8192) and the share of it each "
    "arm achieves in useful model FLOPs/s.",
    "",
]

METHOD_LINES = [
    "## What each arm does",
    "",
    "| | reference (the assignment's code) | workbench (imported from `workbench/core`) |",
    "| --- | --- | --- |",
    '| tokenizing | `padding="max_length"`, 128, labels pad → -100 | '
    "`data.tokenize.tokenize_pairs`: truncation only |",
    "| training batches | default `Seq2SeqTrainer`: random order, every batch 128 wide | "
    "`trainer.EpochSeededLengthSampler`: per-epoch seeded sampler grouping pairs of similar "
    "source length, padded per batch by "
    "`DataCollatorForSeq2Seq` |",
    "| training loss | the model's own: every target position projected onto the "
    "vocabulary, padding ignored afterwards | `WorkbenchTrainer.compute_loss` "
    "(`core/train/loss.py`): only the real target tokens projected, the same "
    "cross-entropy |",
    "| precision | fp32 (the assignment's fp16 is only a small-GPU fallback) | "
    "`recipe.training_arguments`: bf16 where the GPU has it, else fp32 |",
    "| evaluation during training | `trainer.evaluate()` with the model's default "
    "decoding: 4 beams, `max_length` 512, inputs 128 wide, dataset order | "
    "`trainer.evaluate()` with `generation_num_beams=1` (`eval_num_beams`), "
    "`generation_max_length` 129, inputs padded per batch, longest first "
    "(`recipe.longest_first`) |",
    "| before/after BLEU decoding | the same `evaluate()` (4 beams) | "
    "`Translator.translate_many`: 4 beams (`num_beams`), length-sorted batches, bound "
    "min(128, 2·source+8) |",
    "",
    "The before/after BLEU decoding uses 4 beams on both sides and in both arms; only "
    "the per-epoch evaluation, which drives best-epoch selection and the charts, is "
    "greedy in the workbench. The ≥ 3× target is about that per-epoch evaluation.",
    "",
    "Sentence ends: random weights never emit </s>, so left alone every arm would "
    "decode to its bound (512 tokens × 4 beams for the reference, 128 for the "
    "workbench) — a gap no trained model shows. Instead, in both arms the model's "
    "`generate` gets one extra logits processor (`EosAtLength`) that bans </s> before "
    "a sentence's reference length and forces it there, so every sentence is exactly "
    "as long as its reference in both arms, and the comparison is padding, batching, "
    "beams and length bounds only. The reference's unbounded 512 therefore costs it "
    "nothing here; with a model that loops it would cost far more.",
    "",
]


def median_of(results: Sequence[Mapping[str, Any]], key: str) -> float | None:
    """The median of ``key`` over the repetitions that measured it (``None``: none did)."""
    return median(r.get(key) for r in results)


def measured_values(results: Sequence[Mapping[str, Any]], key: str) -> list[Any]:
    """``key`` of each repetition that measured it, in order."""
    return [r[key] for r in results if key in r]


def mean_of(values: Sequence[float]) -> float | None:
    """The mean, or ``None`` for no values."""
    return statistics.fmean(values) if values else None


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


def write_report(path: Path, measured: Measurements) -> str:
    """Write RESULTS.md for one run to ``path`` and return its text."""
    lines = [
        *summary_lines(measured),
        *METHOD_LINES,
        *same_loss_lines(measured),
        *profile_section(measured.profile),
        *data_lines(measured.data),
        *measured.startup_lines,
        *measured.gpu_lines,
    ]
    text = "\n".join(lines)
    path.write_text(text, encoding="utf-8")
    return text


def summary_lines(measured: Measurements) -> list[str]:
    """The command, machine and set-up, then the table of medians and ratios."""
    runs, machine, mode, data = measured.runs, measured.machine, measured.mode, measured.data
    ref, wb = runs["reference"], runs["workbench"]
    noise: dict[str, dict[str, Spread]] = {}  # each row's label → each arm's spread

    def metric_row(
        label: str,
        phase: Literal["train", "eval"],
        key: str,
        target: str = "",
        unit: str = "",
        lower_is_better: bool = False,
    ) -> str:
        a, b = median_of(ref[phase], key), median_of(wb[phase], key)
        times = ratio(a, b) if lower_is_better else ratio(b, a)
        each = "; ".join(
            f"{arm}: " + ", ".join(short_number(v) for v in measured_values(runs[arm][phase], key))
            for arm in ARMS
        )
        spreads: dict[str, Spread] = {
            arm: spread(measured_values(runs[arm][phase], key)) for arm in ARMS
        }
        noise[label] = spreads
        shown = figure(times, ".2f", "×")  # a noisy figure's ratio is not quoted as a result
        shown = f"({shown}: noisy)" if noise_warning(spreads) else f"**{shown}**"
        return (
            f"| {label} | {short_number(a)}{unit} | {short_number(b)}{unit} "
            f"| {shown} | {target} | {each} | {spread_cell(spreads)} |"
        )

    rows = [
        metric_row("training samples/s", "train", "samples_per_s", "≥ 2.5×"),
        metric_row("training target tokens/s", "train", "target_tokens_per_s"),
        metric_row("evaluation during training, sentences/s", "eval", "sentences_per_s", "≥ 3×"),
        metric_row("evaluation during training, target tokens/s", "eval", "target_tokens_per_s"),
        metric_row(
            "final before/after decoding, sentences/s (4 beams both)",
            "eval",
            "final_sentences_per_s",
            "same decoding",
        ),
        metric_row(
            "peak memory, training (RSS MiB)", "train", "rss_mib", "", "", lower_is_better=True
        ),
        metric_row(
            "peak memory, evaluation (RSS MiB)", "eval", "rss_mib", "", "", lower_is_better=True
        ),
    ]
    if measured.device == "cuda":
        rows += [
            metric_row("peak GPU memory, training (MiB)", "train", "gpu_mib", "", "", True),
            metric_row("peak GPU memory, evaluation (MiB)", "eval", "gpu_mib", "", "", True),
        ]

    rate = measured.matmul
    tflops = rate.get("tflops")
    flops_per_s = None if tflops is None else tflops * 1e12
    fraction = [
        f"{arm}: "
        + figure(ratio(median_of(runs[arm]["train"], "model_flops_per_s"), flops_per_s), ".1%")
        for arm in ARMS
    ]
    gpu = (
        f"GPU {machine['gpu']}" + (" (bf16)" if machine.get("bf16") else "")
        if "gpu" in machine
        else "no GPU"
    )
    lines = [
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
        "| metric | reference | workbench | workbench / reference | target | per repetition "
        "| spread |",
        "| --- | --- | --- | --- | --- | --- | --- |",
        *rows,
    ]
    return [
        *lines,
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


def same_loss_lines(measured: Measurements) -> list[str]:
    """The same-loss check's per-step losses, then each arm's own timed-epoch losses."""
    check, runs = measured.check, measured.runs
    return [
        "## Same loss",
        "",
        f"Identical batches, identical order, dropout off, AdamW lr 2e-5, batch "
        f"{check['batch']}: padded to 128 with the model's own loss (reference) vs padded "
        "per batch with the workbench trainer's `compute_loss` (workbench). "
        f"Largest per-step difference: **{figure(check.get('max_abs_diff'), '.2e')}** (float "
        "rounding).",
        "",
        "| step | " + " | ".join(str(i + 1) for i in range(check["steps"])) + " |",
        "| --- | " + " | ".join("---" for _ in range(check["steps"])) + " |",
        *(
            f"| {arm} | " + " | ".join(figure(v, ".5f") for v in check["losses"][arm]) + " |"
            for arm in ARMS
        ),
        "",
        "Each arm's own sampler (the timed epoch, first repetition; random order vs "
        "length-grouped, so the batches differ):",
        "",
        *(
            f"- {arm}: "
            + ", ".join(figure(v, ".4f") for v in runs[arm]["train"][0]["losses"])
            + f" (mean {figure(mean_of(runs[arm]['train'][0]['losses']), '.4f')})"
            for arm in ARMS
        ),
        "",
    ]


def data_lines(data: DataSummary) -> list[str]:
    """Where the modelled sentence lengths come from, and the lengths this run used."""
    return [
        "## The data",
        "",
        "WMT19 zh-en's ~26M training rows are mostly the UN Parallel Corpus (its en-zh part: "
        "15,886,041 aligned lines) plus CWMT and News Commentary news sentences and short "
        "Wikipedia titles. The UN corpus's published statistics give its 18.5M Arabic-English "
        "lines 456.6M and 512.1M tokens, ~25 and ~28 per line: these are long sentences, "
        "unlike the HSK demo corpus (5.2 English words on average). Assumed, not "
        "measured here (the real tokenizer is not available offline): subword vocabularies "
        "split such English into ~1.2-1.4 pieces per word, and Chinese into a similar number "
        "of pieces. Modelled (`make_pairs`): source length in tokens (</s> included) ~ "
        f"lognormal(ln {SOURCE_MEDIAN:g}, {SOURCE_SIGMA}), target = source × "
        f"lognormal(0, {RATIO_SIGMA}), both clipped to [3, 128] (the assignment truncates "
        "at 128); token ids uniform over the vocabulary; a word-level fast tokenizer maps "
        "`t123` to id 123, so both recipes tokenize, pad, collate and decode real text.",
        "",
        "| lengths in tokens | mean | median | p90 | p99 | max | > 64 |",
        "| --- | --- | --- | --- | --- | --- | --- |",
        *(
            f"| {name} | {s['mean']:.1f} | {s['median']:g} | {s['p90']} | {s['p99']} | "
            f"{s['max']} | {s['share_over_64']:.1%} |"
            for name, s in data["lengths"].items()
        ),
        "",
    ]


def startup_section(result: dict[str, Any]) -> list[str]:
    """Start-up times measured by benchmarks/startup.py (``startup.measure``), as lines."""
    return [
        "## Start-up",
        "",
        "Measured by `python benchmarks/startup.py` (also run here): `workbench --help` in "
        "fresh interpreters; `workbench tui --preset demo` in a 100×30 pseudo-terminal, "
        "timed from spawn to the first frame that holds the tab bar and the Dataset pane, "
        "then to the footer's keys and to the loaded data.",
        "",
        "| what | median | target | note |",
        "| --- | --- | --- | --- |",
        *startup.report_lines(result),
        "",
    ]


def gpu_section(machine: Machine, matmul: MatmulRate) -> list[str]:
    """The GPU section of a run on CUDA: the GPU's measured bf16 matmul rate."""
    return [
        "## GPU",
        "",
        f"Measured on {machine.get('gpu')}: bf16 matmul rate "
        f"{figure(matmul.get('tflops'), '.1f')} TFLOPS (8192×8192); the training share of it "
        "is in the line under the table.",
        "",
    ]
