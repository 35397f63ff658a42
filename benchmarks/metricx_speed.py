"""MetricX scoring speed: the workbench's own inference against google-research/metricx's.

Usage:
  python benchmarks/metricx_speed.py [--segments 2048] [--reps 5] [--batch-size 8]
      [--threads 1] [--reference-python PATH] [--out FILE]
  python benchmarks/metricx_speed.py --quick     # 16 segments, 1 repetition, seconds (the
                                                 # tests run it; report in a temporary folder)

Arms, on the same checkpoint, segments and batch size, each in a fresh process of its
own venv (``metricx_speed_child.py`` says what each runs and times):

- ``workbench``: ``load_metricx`` then ``score`` (transformers 5, eager attention);
- ``metricx``: google-research/metricx's ``metricx24`` code at the commit the parity
  fixtures name, as ``predict.py`` runs it (``get_dataset`` then ``Trainer.predict``), in
  the isolated venv ``tests/fixtures/metricx/reference_venv.sh`` makes
  (``/tmp/metricx-reference-venv``, transformers 4.30.2). Without it the arm is "n/a".

Each measurement loads the model (timed on its own), warms up on one batch, then times
one scoring call of every segment (wall and process CPU). The arms alternate over the
repetitions; the report gives each figure's median and spread, segments per second, the
ratio workbench / metricx (above 1: the workbench is faster), and the largest difference
between the two arms' scores (the run fails above 1e-4).

Workload: the tiny MetricX-24-shaped checkpoint of the parity fixtures (``tiny-fp32``:
width 16, 2 + 2 layers, mT5's 250,112-row vocabulary; rebuilt by
``tests/helpers/metricx_checkpoints.py``) with the fixtures' tiny mT5-style tokenizer.
Segments: HSK sentence pairs in a seeded random order, source = English, reference =
Chinese, translation = the reference with about one character in eight dropped (seeded),
scored against the references. A model this small measures each code's overhead per
batch and per segment (tokenizing, batching, the Trainer), not mT5's arithmetic.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parent
REPO = BENCHMARKS.parent
sys.path[:0] = [str(BENCHMARKS), str(REPO)]  # figures.py; the checkpoint recipe in tests/

from figures import (  # noqa: E402
    figure,
    load_average,
    median,
    noise_summary,
    noise_warning,
    ratio,
    report_path,
    spread,
    spread_text,
)

REPORT = BENCHMARKS / "METRICX_SPEED.md"
REFERENCE_PYTHON = Path("/tmp/metricx-reference-venv/bin/python")
TOKENIZER = REPO / "tests" / "fixtures" / "metricx" / "tokenizer"
VARIANT = "tiny-fp32"
ARMS = {"workbench": "workbench", "metricx": "reference"}
#: The most two arms' scores of one segment may differ (the parity tests' bound).
TOLERANCE = 1e-4


def segments(count: int, seed: int = 0) -> list[dict[str, str]]:
    """HSK pairs in a seeded order; the translation a reference with characters dropped."""
    import hsk_sentences_audio

    pairs = [(r["translation"]["en"], r["chinese"]) for r in hsk_sentences_audio.load_sentences()]
    rng = random.Random(seed)
    rng.shuffle(pairs)
    out = []
    for source, reference in pairs[:count]:
        kept = "".join(c for c in reference if rng.random() >= 1 / 8) or reference
        out.append({"source": source, "hypothesis": kept, "reference": reference})
    return out


def measure(arm: str, python: Path, job: dict, folder: Path) -> dict | None:
    """One measurement of ``arm`` in a fresh process; None when its venv is missing."""
    if not python.is_file():
        return None
    job = {**job, "result": str(folder / f"{arm}.json")}
    (folder / "job.json").write_text(json.dumps(job, ensure_ascii=False), encoding="utf-8")
    env = {**os.environ, "OMP_NUM_THREADS": str(job["threads"]), "HF_HUB_OFFLINE": "1"}
    env["PYTHONPATH"] = str(REPO) if arm == "workbench" else ""
    script = BENCHMARKS / "metricx_speed_child.py"
    done = subprocess.run(
        [str(python), str(script), ARMS[arm], str(folder / "job.json")],
        env=env, capture_output=True, text=True, timeout=1800,
    )  # fmt: skip
    if done.returncode != 0:
        raise SystemExit(f"the {arm} arm failed:\n{done.stderr[-3000:]}")
    return json.loads(Path(job["result"]).read_text(encoding="utf-8"))


def report(runs: dict[str, list[dict | None]], context: dict) -> str:
    """The report's Markdown."""
    n = context["segments"]
    seconds = {arm: [r["seconds"] if r else None for r in found] for arm, found in runs.items()}
    loads = {arm: [r["load_s"] if r else None for r in found] for arm, found in runs.items()}
    rate = {arm: ratio(n, median(values)) for arm, values in seconds.items()}
    lines = [
        "# MetricX scoring speed: workbench vs google-research/metricx",
        "",
        f"Written by `{context['command']}` on {context['date']} ({context['wall']:.0f} s). "
        "Method and workload: the module docstring of `benchmarks/metricx_speed.py`.",
        "",
        f"- Checkpoint: `{VARIANT}` (the parity fixtures' tiny MetricX-24 shape), "
        f"{n} segments, batch {context['batch_size']}, {context['threads']} thread(s), CPU "
        f"{context['cpu']}; load average before {context['load_before']}, after "
        f"{context['load_after']}.",
        "",
        "| arm | scoring s (median) | spread | segments/s | load s (median) | load spread |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for arm in runs:
        lines.append(
            f"| {arm} | {figure(median(seconds[arm]), '.3f')} | "
            f"{spread_text(spread(seconds[arm]), '.3f')} | {figure(rate[arm], '.1f')} | "
            f"{figure(median(loads[arm]), '.2f')} | {spread_text(spread(loads[arm]), '.2f')} |"
        )
    speedup = ratio(rate["workbench"], rate["metricx"])
    noisy = noise_warning({a: spread(s) for a, s in seconds.items()})
    said = f"{figure(speedup, '.2f', '×')}, {noisy}" if noisy else figure(speedup, ".2f", "×")
    line = f"Ratio workbench / metricx (segments per second): {said}"
    lines += [
        "",
        (line if noisy else f"**{line}**") + " (above 1: the workbench is faster).",
        "",
        f"Largest |workbench − metricx| over the segments: {figure(context['difference'], '.1e')}.",
        "",
        noise_summary({"scoring": {a: spread(s) for a, s in seconds.items()}}),
        "",
    ]
    return "\n".join(lines)


def main() -> int:
    """Measure both arms, alternating, and write the report."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--segments", type=int, default=2048)
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--reference-python", type=Path, default=REFERENCE_PYTHON)
    parser.add_argument("--out")
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    count, reps = (16, 1) if args.quick else (args.segments, args.reps)
    out = report_path(args.out, REPORT, smoke=args.quick)
    from tests.helpers.metricx_checkpoints import write_checkpoint

    started, load_before = time.time(), load_average()
    with tempfile.TemporaryDirectory(prefix="metricx-speed-") as tmp:
        folder = Path(tmp)
        model = write_checkpoint(folder / VARIANT, VARIANT)
        job = {
            "model": str(model), "tokenizer": str(TOKENIZER), "segments": segments(count),
            "batch_size": args.batch_size, "threads": args.threads,
        }  # fmt: skip
        pythons = {"workbench": Path(sys.executable), "metricx": args.reference_python}
        runs: dict[str, list[dict | None]] = {arm: [] for arm in ARMS}
        for rep in range(reps):  # alternate: workbench first, then metricx first
            for arm in ARMS if rep % 2 == 0 else reversed(ARMS):
                runs[arm].append(measure(arm, pythons[arm], job, folder))
    found = [r for r in runs["metricx"] if r]
    difference = None
    if found:
        pairs = zip(runs["workbench"][0]["scores"], found[0]["scores"], strict=True)  # type: ignore[index]
        difference = max(abs(a - b) for a, b in pairs)
    context = {
        "segments": count, "batch_size": args.batch_size, "threads": args.threads,
        "cpu": platform.processor() or platform.machine(), "load_before": load_before,
        "load_after": load_average(), "date": time.strftime("%Y-%m-%d %H:%M"),
        "wall": time.time() - started, "difference": difference,
        "command": "python benchmarks/metricx_speed.py" + (" --quick" if args.quick else ""),
    }  # fmt: skip
    out.write_text(report(runs, context), encoding="utf-8")
    print(f"report: {out}")
    if difference is not None and difference > TOLERANCE:
        print(f"the arms' scores differ by {difference:.1e} (> {TOLERANCE})", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
