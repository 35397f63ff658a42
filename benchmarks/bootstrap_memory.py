"""sacreBLEU's paired bootstrap against the workbench's bounded one: time and peak memory.

Usage:
    python benchmarks/bootstrap_memory.py            # 1k, 10k, 20k and 100k sentences
    python benchmarks/bootstrap_memory.py --quick    # toy size: a few seconds, written to a
                                                     # temporary folder (the tests run it)

Every measurement runs in a fresh process (``--child``, not for users). It builds the
text, imports what it needs, resets the process's peak RSS (``/proc/self/clear_refs``),
runs one scoring call and reports its wall time and its peak RSS above the RSS it started
from: the memory the call itself needed. Arms, each on the same text:

- ``sacrebleu``: ``PairedTest(before/after, BLEU zh + chrF, "bs", 1,000)()`` as
  ``sacrebleu --paired-bs`` runs it;
- ``bounded``: ``resampling.paired_bootstrap``, the same test in bounded memory;
- ``old workbench``: ``score_before_after``'s numbers over sacreBLEU's resampling,
  PairedTest and then the same draws again for the interval of the change
  (:func:`bootstrap_arms.old_score_before_after`);
- ``workbench``: ``score_before_after`` as a run calls it;
- ``corpus_score`` / ``bounded corpus_score``: one system's BLEU and chrF with a bootstrap
  interval, ``metric.corpus_score(..., n_bootstrap=1000)`` against
  ``resampling.corpus_score_with_interval``.

The text is synthetic but made of real sentences: the 4,354 Chinese HSK sentences in a
seeded random order, repeated to the size, as references; "before" drops or replaces
many of each reference's characters and "after" few. The text and the arms' calls are in
``bootstrap_arms.py``; this module measures them. Each arm's numbers are compared with its
counterpart's at every size where both run.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from bootstrap_arms import make_systems, run_arm
from figures import figure, report_path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:  # measure this checkout's workbench, not an installed one
    sys.path.insert(0, str(REPO))

#: (bounded arm, the arm that holds every resample): the two must give the same numbers.
PAIRS = (
    ("bounded", "sacrebleu"),
    ("workbench", "old workbench"),
    ("bounded corpus_score", "corpus_score"),
)
#: Sentences per arm. The arms that hold every resample stop short of 100,000, which would
#: need about 8 GiB on a machine that other jobs share (sacreBLEU's own at 50,000: 4 GiB).
SIZES = {
    "sacrebleu": (1000, 10000, 20000, 50000),
    "bounded": (1000, 10000, 20000, 50000, 100000),
    "old workbench": (1000, 10000),
    "workbench": (1000, 10000, 100000),
    "corpus_score": (10000,),
    "bounded corpus_score": (10000, 100000),
}
QUICK_SIZES = {arm: (120,) for arm in SIZES}
TEXT_NOTE = (
    "Text (`make_systems`): the 4,354 Chinese HSK sentences in a seeded order, repeated to "
    'the size, as references; "before" drops or replaces 40% of each reference\'s '
    'characters, "after" 12%. The arms: `sacrebleu` is `PairedTest(..., "bs")()`, '
    "`bounded` `resampling.paired_bootstrap`, `old workbench` / `workbench` the workbench's "
    "`score_before_after` before and after the bounded bootstrap (the old one is PairedTest "
    "and the same draws again for the interval of the change), `corpus_score` / `bounded "
    "corpus_score` one system's BLEU and chrF with their interval. The bounded arms hold "
    "the statistics of every sentence (float32, and float64 for the sums: 64 MiB for two "
    "systems at 100,000), one block of draws (four arrays of 2**21 entries, 64 MiB) and "
    "one block's reference n-grams (2,048 sentences), whatever the number of resamples."
)


def rss_mib(field: str) -> float:
    """``VmRSS`` (now) or ``VmHWM`` (the peak since the last reset) of this process, MiB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"{field} not in /proc/self/status")


def child(arm: str, n: int, n_bootstrap: int) -> dict[str, Any]:
    """One measurement, in this (fresh) process."""
    import numpy  # noqa: F401  (imported before the baseline, as every arm needs it)
    import sacrebleu.significance  # noqa: F401

    import workbench.core.evaluate.resampling
    import workbench.core.evaluate.significance  # noqa: F401

    references, before, after = make_systems(n)
    Path("/proc/self/clear_refs").write_text("5")  # the peak RSS starts again from now
    start_mib = rss_mib("VmRSS")
    started = time.perf_counter()
    numbers = run_arm(arm, references, before, after, n_bootstrap)
    seconds = time.perf_counter() - started
    peak_mib = rss_mib("VmHWM")
    return {
        "arm": arm,
        "n": n,
        "n_bootstrap": n_bootstrap,
        "seconds": round(seconds, 2),
        "start_mib": round(start_mib, 1),
        "extra_mib": round(peak_mib - start_mib, 1),
        "numbers": numbers,
    }


def measure(arm: str, n: int, n_bootstrap: int) -> dict[str, Any]:
    """Run one measurement in a fresh process and read its JSON line."""
    done = subprocess.run(
        [sys.executable, __file__, "--child", arm, str(n), str(n_bootstrap)],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def summarise(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """One arm's repetitions at one size as one row: medians, every run, and the numbers
    (``None`` if two repetitions disagreed, which a seeded bootstrap must never do)."""
    first = runs[0]
    return {
        "arm": first["arm"],
        "n": first["n"],
        "n_bootstrap": first["n_bootstrap"],
        "seconds": statistics.median(r["seconds"] for r in runs),
        "extra_mib": statistics.median(r["extra_mib"] for r in runs),
        "runs": [(r["seconds"], r["extra_mib"]) for r in runs],  # (s, MiB)
        "numbers": first["numbers"]
        if all(r["numbers"] == first["numbers"] for r in runs)
        else None,
    }


def compare(rows: list[dict[str, Any]]) -> list[str]:
    """A line for each size where both arms of a pair ran: same numbers or not."""
    found = {(r["arm"], r["n"]): r["numbers"] for r in rows}
    lines = []
    for bounded, full in PAIRS:
        for n in sorted({n for arm, n in found if arm == bounded}):
            if (full, n) in found:
                same = found[(bounded, n)] is not None and found[(bounded, n)] == found[(full, n)]
                lines.append(
                    f"{bounded} = {full} at {n:,} sentences: {'identical' if same else 'DIFFERENT'}"
                )
    return lines


def scaling(rows: list[dict[str, Any]], arm: str, n: int) -> str | None:
    """``arm``'s memory at ``n`` sentences, extrapolated from its two largest sizes (the
    resamples' arrays grow linearly with the sentences)."""
    known = sorted((r["n"], r["extra_mib"]) for r in rows if r["arm"] == arm)
    if len(known) < 2 or known[-1][0] >= n:
        return None
    (n1, m1), (n2, m2) = known[-2:]
    per_sentence = (m2 - m1) / (n2 - n1)
    return (
        f"{arm}: {per_sentence * 1000:,.0f} MiB more per 1,000 sentences between {n1:,} and "
        f"{n2:,}; at {n:,}, extrapolated (not run): about {m2 + per_sentence * (n - n2):,.0f} MiB"
    )


def write_report(path: Path, rows: list[dict[str, Any]], context: dict[str, Any]) -> str:
    """BOOTSTRAP.md from the measurements; a figure not measured prints as "n/a"."""
    largest = max(r["n"] for r in rows)
    lines = [
        "# Bootstrap memory: sacreBLEU's resampling against the bounded one",
        "",
        f"Command: `python benchmarks/bootstrap_memory.py{' --quick' if context['quick'] else ''}` "
        f"({figure(context['wall'] / 60, '.1f')} min wall), measured {context['date']}: "
        f'{rows[0]["n_bootstrap"]:,} resamples, BLEU (`tokenize="zh"`) and chrF, seed 12345.',
        "",
        f"Machine: {context['cpu']}, {context['cores']} cores shared with other jobs (load "
        f"{context['load_before']} before, {context['load_after']} after), one thread "
        f"(`OMP_NUM_THREADS=1`); Python {platform.python_version()}, numpy "
        f"{_version('numpy')}, sacrebleu {_version('sacrebleu')}.",
        "",
        f"Each run is one fresh process ({context['reps']} runs of each row, interleaved with "
        "the other arms of its size): the wall time of the one scoring call, and its peak "
        "RSS (`VmHWM`) above the RSS it started from, once the text was built, the libraries "
        "imported and the peak reset through `/proc/self/clear_refs`: what the call needed.",
        "",
        TEXT_NOTE,
        "",
        "| arm | sentences | time (s), median | extra peak memory (MiB), median | each run |",
        "| --- | --- | --- | --- | --- |",
    ]
    order = list(SIZES)
    for r in sorted(rows, key=lambda r: (order.index(r["arm"]), r["n"])):
        each = "; ".join(
            f"{figure(t, '.1f', ' s')}, {figure(m, ',.0f', ' MiB')}" for t, m in r["runs"]
        )
        lines.append(
            f"| {r['arm']} | {r['n']:,} | {figure(r['seconds'], '.1f')} | "
            f"{figure(r['extra_mib'], ',.0f')} | {each} |"
        )
    lines += ["", "Same numbers (score, p-value, bootstrap mean and half-width; bit for bit):", ""]
    lines += [f"- {line}" for line in compare(rows)]
    extrapolated = [scaling(rows, full, largest) for _, full in PAIRS]
    if any(extrapolated):
        lines += ["", "Scaling of the arms that hold every resample:", ""]
        lines += [f"- {line}" for line in extrapolated if line]
    text = "\n".join(lines) + "\n"
    path.write_text(text, encoding="utf-8")
    return text


def machine_context() -> dict[str, Any]:
    """The CPU's name, the core count and the load average, for the report."""
    cpu = platform.machine()
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            cpu = line.split(":", 1)[1].strip()
            break
    load = " ".join(Path("/proc/loadavg").read_text().split()[:3])
    return {"cpu": cpu, "cores": os.cpu_count(), "load_before": load}


def _version(name: str) -> str:
    from importlib.metadata import version

    return version(name)


def main() -> int:
    """Run every arm at its sizes (or, with --child, one measurement) and write the report."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--quick",
        action="store_true",
        help="toy size, a few seconds; written to a temporary folder unless --out says "
        "(never into benchmarks/)",
    )
    parser.add_argument("--samples", type=int, default=None, help="resamples (default 1000)")
    parser.add_argument("--reps", type=int, default=3, help="repetitions of each measurement")
    parser.add_argument("--out", default=None, help="default: benchmarks/BOOTSTRAP.md")
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        arm, n, samples = args.child
        print(json.dumps(child(arm, int(n), int(samples))))
        return 0
    samples = args.samples or (50 if args.quick else 1000)
    sizes = QUICK_SIZES if args.quick else SIZES
    context = {**machine_context(), "quick": args.quick, "date": time.strftime("%Y-%m-%d")}
    started = time.perf_counter()
    runs: dict[tuple[str, int], list[dict[str, Any]]] = {}
    # Size by size, every arm at that size in turn, then again: the load of other jobs
    # falls on all of them.
    for n in sorted({n for arm_sizes in sizes.values() for n in arm_sizes}):
        for _ in range(args.reps):
            for arm in [arm for arm, arm_sizes in sizes.items() if n in arm_sizes]:
                found = measure(arm, n, samples)
                runs.setdefault((arm, n), []).append(found)
                print(f"{arm} {n}: {found['seconds']} s, {found['extra_mib']} MiB", flush=True)
    rows = [summarise(found) for found in runs.values()]
    context["reps"] = args.reps
    context["wall"] = time.perf_counter() - started
    context["load_after"] = machine_context()["load_before"]
    out = report_path(args.out, Path(__file__).with_name("BOOTSTRAP.md"), smoke=args.quick)
    print(write_report(out, rows, context))
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
