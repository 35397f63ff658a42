"""DATA_SCALE.md, written from benchmarks/data_scale.py's rows: each arm against the anchor
at each size, and where the cold run's data time went. A figure not measured prints as
"n/a"."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from figures import figure, noise_summary, ratio, spread


def render_report(rows: list[dict[str, Any]], context: dict[str, Any]) -> str:
    """DATA_SCALE.md from the measurements; a figure not measured prints as "n/a"."""
    by = {(r["n"], r["arm"]): r for r in rows}
    lines = [
        "# Data at scale: seconds to the first training step, and peak memory",
        "",
        "Measured by `python benchmarks/data_scale.py` (its docstring says how); "
        f"{context['machine']}, {context['cores']} cores, `num_proc` {context['procs']}, "
        f"{context['date']}. Ratios are against the anchor measured in the same run. Load "
        f"average (1/5/15 min) before {figure(context.get('load_before'))}, after "
        f"{figure(context.get('load_after'))}. Each arm runs once at each size.",
        "",
        noise_summary({f"{r['n']:,} {r['arm']}": {"": spread([r.get("seconds")])} for r in rows}),
        "",
        "| pairs | anchor: preprocessing | workbench cold: first step | × anchor | "
        'of which data | of which "before" | workbench cached: first step | × anchor | '
        "peak memory: anchor / cold / cached |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for n in sorted({r["n"] for r in rows}):
        anchor, cold, cached = (by.get((n, arm), {}) for arm in ("anchor", "cold", "cached"))
        first_step = cold.get("seconds"), cached.get("seconds")
        lines.append(
            f"| {n:,} | {figure(anchor.get('seconds'), '.1f', ' s')} | "
            f"{figure(first_step[0], '.1f', ' s')} | "
            f"{figure(ratio(first_step[0], anchor.get('seconds')), '.2f')} | "
            f"{figure(cold.get('data_seconds'), '.1f', ' s')} | "
            f"{figure(cold.get('before_seconds'), '.1f', ' s')} | "
            f"{figure(first_step[1], '.1f', ' s')} | "
            f"{figure(ratio(first_step[1], anchor.get('seconds')), '.2f')} | "
            f"{figure(anchor.get('peak_mib'), ',')} / {figure(cold.get('peak_mib'), ',')} / "
            f"{figure(cached.get('peak_mib'), ',')} MiB "
            f"({figure(ratio(cold.get('peak_mib'), anchor.get('peak_mib')), '.2f', '×')}) |"
        )
    validation = figure(context.get("validation_pairs"))
    test = figure(context.get("test_pairs"))
    lines += [
        "",
        '"of which data" is from the `[data]` line to the `[model]` line (reading, '
        'cleaning, tokenizing, splitting, writing the cache); "before" is the decoding of '
        f"the {validation} validation and {test} test pairs by the model as "
        "loaded, from the `[before]` line to `[train]` (0 when cached). The anchor does "
        "neither cleaning nor decoding: it only reads and tokenizes.",
        "",
    ]
    sizes = sorted({r["n"] for r in rows})
    stages = {n: by.get((n, "cold"), {}).get("stages") or {} for n in sizes}
    names = list(dict.fromkeys(name for found in stages.values() for name in found))
    if names:  # the cold run's own account of its data time (its `data: prepared` line)
        lines += ["Where the cold run's data time went, as its `data: prepared` line says:", ""]
        lines += [f"| pairs | {' | '.join(names)} |", "|---:|" + "---:|" * len(names)]
        lines += [
            f"| {n:,} | " + " | ".join(figure(found.get(k), ".1f", " s") for k in names) + " |"
            for n, found in stages.items()
        ] + [""]
    return "\n".join(lines)


def write_report(path: Path, rows: list[dict[str, Any]], context: dict[str, Any]) -> str:
    """Write DATA_SCALE.md and the rows beside it as JSON; the report's text."""
    text = render_report(rows, context)
    path.write_text(text, encoding="utf-8")
    (path.with_suffix(".json")).write_text(
        json.dumps([{k: v for k, v in r.items() if k != "lines"} for r in rows], indent=1),
        encoding="utf-8",
    )
    return text
