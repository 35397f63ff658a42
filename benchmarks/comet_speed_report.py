"""COMET_SPEED.md, written from benchmarks/comet_speed.py's runs; a figure not measured
prints as "n/a"."""

from __future__ import annotations

import platform
from pathlib import Path
from typing import Any

from figures import (
    Spread,
    figure,
    median,
    noise_summary,
    noise_warning,
    ratio,
    spread,
    spread_share,
)

ARMS = ("workbench", "library")
ARM_NAMES = {"workbench": "workbench", "library": "unbabel-comet 2.2.7"}
#: The issue's bar for the two arms' segment scores.
TOLERANCE = 1e-4


def cpu_name() -> str:
    """The CPU's model name."""
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.machine()


def largest_difference(runs: dict[str, list[dict[str, Any]]]) -> float | None:
    """The largest |workbench − library| over every segment of every pair of runs."""
    if not runs["workbench"] or not runs["library"]:
        return None
    return max(
        abs(a - b)
        for w in runs["workbench"]
        for lib in runs["library"]
        for a, b in zip(w["scores"], lib["scores"], strict=True)
    )


def write_report(path: Path, runs: dict[str, list[dict[str, Any]]], context: dict) -> str:
    """COMET_SPEED.md from the runs; a figure not measured prints as "n/a"."""
    rows, noise = _arm_rows(runs, context["segments"])
    wb = rows["workbench"]["first"]
    title = "COMET scoring speed: the workbench against unbabel-comet 2.2.7"
    lines = [
        f"# {title}{' (smoke run)' if context['smoke'] else ''}",
        "",
        f"Command: `{context['command']}` ({figure(context['wall'] / 60, '.1f')} min wall, "
        f"measured {context['date']}).",
        "",
        *_result_lines(rows, noise, context),
        *_workload_lines(rows, context),
        *_method_lines(wb, rows["library"]["first"], context),
    ]
    text = "\n".join(lines)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return text


def _arm_rows(
    runs: dict[str, list[dict[str, Any]]], segments: int
) -> tuple[dict[str, dict[str, Any]], dict[str, dict[str, Spread]]]:
    """Each arm's medians, its repetitions with their spread, and its first run; and each
    timed figure's spread by arm, for the noise summary."""
    rows: dict[str, dict[str, Any]] = {}
    noise: dict[str, dict[str, Spread]] = {"scoring": {}, "model load": {}}  # figure → arm → spread
    for arm in ARMS:
        found = runs[arm]
        seconds = median(r["seconds"] for r in found)
        rows[arm] = {
            "seconds": seconds,
            "per_second": ratio(segments, seconds),
            "load": median(r["load_s"] for r in found),
            "import": median(r["import_s"] for r in found),
            "warmup": median(r["warmup_s"] for r in found),
            "cpu": median(r["cpu_seconds"] for r in found),
            "each": ", ".join(f"{r['seconds']:.2f}" for r in found) or figure(None),
            "loads": ", ".join(f"{r['load_s']:.2f}" for r in found) or figure(None),
            "first": found[0] if found else {},
        }
        for name, key in (("scoring", "seconds"), ("model load", "load_s")):
            noise[name][arm] = spread(r[key] for r in found)
            cell = "each" if key == "seconds" else "loads"
            if found:  # the values, then "(5%)" or "(1 repetition: no spread)"
                share = spread_share(noise[name][arm])
                warning = noise_warning({arm: noise[name][arm]})
                rows[arm][cell] += f" ({share})" + (f": **{warning}**" if warning else "")
    return rows, noise


def _result_lines(
    rows: dict[str, dict[str, Any]], noise: dict[str, dict[str, Spread]], context: dict
) -> list[str]:
    """The result: the table of the arms, the ratio (unless noisy), the largest difference
    of the two arms' scores, and the time per 1,000 tokens the encoder runs."""
    segments, wb = context["segments"], rows["workbench"]["first"]
    lines = [
        "## Result",
        "",
        noise_summary(noise),
        "",
        "| arm | scoring (s), median | segments/s | CPU (s), median | import (s), median "
        "| load (s), median | warm-up (s), median | scoring, each repetition (s) "
        "| load, each repetition (s) |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for arm in ARMS:
        r = rows[arm]
        lines.append(
            f"| {ARM_NAMES[arm]} | {figure(r['seconds'], '.2f')} | "
            f"{figure(r['per_second'], '.2f')} | {figure(r['cpu'], '.2f')} | "
            f"{figure(r['import'], '.2f')} | {figure(r['load'], '.2f')} | "
            f"{figure(r['warmup'], '.2f')} | {r['each']} | {r['loads']} |"
        )
    speedup = ratio(rows["workbench"]["per_second"], rows["library"]["per_second"])
    result = f"Ratio workbench / library (segments per second): {figure(speedup, '.2f', '×')}"
    warning = noise_warning(noise["scoring"])
    lines += [
        "",
        (f"{result}, {warning}" if warning else f"**{result}**")
        + " (above 1: the workbench scores faster; spread: largest repetition / smallest − 1).",
        "",
        f"Largest |workbench − library| over the {segments} segment scores (every pair of "
        f"runs): **{figure(context['difference'], '.2e')}** (bar: {TOLERANCE:.0e}).",
    ]
    if wb.get("scores"):
        scores = wb["scores"]
        lines += [
            f"The scores themselves span {min(scores):.4f} to {max(scores):.4f} "
            f"(mean {sum(scores) / len(scores):.4f})."
        ]
    tokens = wb.get("tokens")
    if tokens:
        padded = {"workbench": tokens["padded_workbench"], "library": tokens["padded_library"]}
        per_k = {arm: ratio(rows[arm]["seconds"], padded[arm] / 1000) for arm in ARMS}
        lines += [
            "",
            "Seconds per 1,000 tokens the encoder runs, padding included (the median scoring "
            "time over the token count of the Workload section, which is computed, not "
            f"measured): workbench {figure(per_k['workbench'], '.2f')}, library "
            f"{figure(per_k['library'], '.2f')}; the library's batching runs "
            f"{figure(ratio(padded['library'], padded['workbench']), '.2f', '×')} the "
            "workbench's tokens.",
        ]
    return lines


def _workload_lines(rows: dict[str, dict[str, Any]], context: dict) -> list[str]:
    """The model, its encoder's shape, the segments and their token lengths."""
    wb, lib = rows["workbench"]["first"], rows["library"]["first"]
    tokens = wb.get("tokens")
    lines = ["", "## Workload", ""]
    model = context["model"]
    shape = wb.get("shape") or {}
    lines += [f"Model: `{model['path']}`. {model['what']}"]
    if shape:
        lines += [
            "",
            f"Encoder: {shape['hidden_size']} wide, {shape['num_hidden_layers']} layers, "
            f"{shape['num_attention_heads']} heads, FFN {shape['intermediate_size']}, "
            f"{shape['max_position_embeddings']} positions, vocabulary "
            f"{shape['vocab_size']:,}. Parameters: {wb['parameters']:,} as the workbench "
            f"loads it, {figure(lib.get('parameters'), ',')} as unbabel-comet loads it. "
            f"Attention: `{wb['attention']}` (workbench), `{figure(lib.get('attention'))}` "
            "(library).",
        ]
    lines += ["", f"Segments: {context['segments']}, {context['segments_what']}"]
    if tokens:
        lines += [
            "",
            "Token lengths (the encoder's tokenizer, `<s>` and `</s>` included):",
            "",
            "| side | min | median | mean | max | total |",
            "| --- | --- | --- | --- | --- | --- |",
        ]
        for side, s in tokens["sides"].items():
            lines.append(
                f"| {side} | {s['min']} | {s['median']:g} | {s['mean']:.1f} | {s['max']} | "
                f"{s['total']:,} |"
            )
        lines += [
            "",
            f"Tokens the encoder runs, padding included, batch size {context['batch_size']}: "
            f"unbabel-comet {tokens['padded_library']:,} ({tokens['sequences']:,} sequences: "
            "batches of segments in source-length order, each side padded to its longest); "
            f"the workbench {tokens['padded_workbench']:,} ({tokens['distinct_sequences']:,} "
            f"distinct sequences, {tokens['distinct_tokens']:,} tokens, longest first). "
            "Computed from the token lengths, not measured.",
        ]
    return lines


def _method_lines(wb: dict[str, Any], lib: dict[str, Any], context: dict) -> list[str]:
    """How each arm was run and timed, and the machine with both venvs' versions."""
    return [
        "",
        "## Method",
        "",
        "Every measurement is a fresh process of its arm's venv: import, load the model "
        "(timed apart), warm up on the first batch of segments, then one timed scoring call "
        "of all the segments (wall clock; process CPU time beside it). The workbench arm: "
        f'`load_scorer(folder, device="cpu", batch_size={context["batch_size"]})` and '
        "`scorer.score(sources, translations, references)`, its vector cache cleared after "
        "the warm-up. The library arm: `comet.load_from_checkpoint` (in the model's folder) "
        f"and `model.predict(samples, batch_size={context['batch_size']}, gpus=0, "
        "progress_bar=False)`, its default length batching. Both on the CPU in fp32 with "
        f"`torch.set_num_threads({context['threads']})` (and `OMP_NUM_THREADS`); threads "
        f"seen in the children: workbench {figure(wb.get('threads'))}, library "
        f"{figure(lib.get('threads'))}. Order of the runs: {context['order']}.",
        "",
        "Only the scoring call is in the segments/s. Import: torch, transformers' XLM-R "
        "classes and the arm's own package (`import comet`; the workbench's scorer, network "
        "and model loader). Load: `load_scorer` / `load_from_checkpoint`. The workbench "
        "memory-maps the checkpoint (`torch.load(mmap=True)`) and assigns its tensors to a "
        "network built on the meta device, so its weights are read as they are first "
        "touched, in the warm-up; the library builds the model with random initialisation, "
        "then reads the checkpoint and copies its weights in. Warm-up: one scoring call on "
        "the first batch of segments (so load + warm-up is the time to the first scores). "
        "The runs follow one another, so the checkpoint file can stay in the OS page cache "
        "for every one of them.",
        "",
        "## Machine",
        "",
        f"{context['cpu']}, {context['cores']} cores shared with another engineer's jobs; "
        f"load average {context['load_before']} before, {context['load_after']} after.",
        "",
        f"- workbench venv: {_versions_line(wb)}",
        f"- reference venv ({context['reference_python']}): {_versions_line(lib)}",
        "",
    ]


def _versions_line(result: dict[str, Any]) -> str:
    found = dict(result.get("versions") or {})
    if "workbench" in result:
        found = {"workbench": result["workbench"], **found}
    return ", ".join(f"{k} {v}" for k, v in found.items()) or figure(None)
