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
- ``old workbench``: ``score_before_after`` as it was, PairedTest and then the same
  draws again for the interval of the change (kept below as :func:`old_score_before_after`);
- ``workbench``: ``score_before_after`` now;
- ``corpus_score`` / ``bounded corpus_score``: one system's BLEU and chrF with a bootstrap
  interval, ``metric.corpus_score(..., n_bootstrap=1000)`` against
  ``resampling.corpus_score_with_interval``.

The text is synthetic but made of real sentences: the 4,354 Chinese HSK sentences in a
seeded random order, repeated to the size, as references; "before" drops or replaces
many of each reference's characters and "after" few (:func:`make_systems`). Each arm's
numbers are compared with its counterpart's at every size where both run.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

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
#: Characters a perturbed sentence may take instead of its own: frequent in the HSK text.
FILLER = "的一是不了人我在有他这中大来上个们到说"


def make_systems(
    n: int, seed: int = 0, rates: tuple[float, ...] = (0.4, 0.12)
) -> tuple[list[str], ...]:
    """References and a system's output for each rate, ``n`` sentences each: by default
    ``(references, before, after)``, "before" a weak system (40% of its characters dropped
    or replaced) and "after" a better one (12%)."""
    from workbench.core.data.sources import load_hsk_pairs

    sentences = [p.target for p in load_hsk_pairs()]
    rng = random.Random(seed)
    rng.shuffle(sentences)
    references = [sentences[i % len(sentences)] for i in range(n)]

    def perturb(text: str, rate: float) -> str:
        out = []
        for ch in text:
            roll = rng.random()
            if roll < rate / 2:
                continue  # dropped
            out.append(rng.choice(FILLER) if roll < rate else ch)
        return "".join(out) or rng.choice(FILLER)

    return (references, *([perturb(r, rate) for r in references] for rate in rates))


def old_score_before_after(
    before: list[str], after: list[str], references: list[str], n_bootstrap: int
) -> dict[str, Any]:
    """The workbench's ``score_before_after`` before the bounded bootstrap: sacreBLEU's
    PairedTest, then the same draws once more for the interval of the change."""
    import numpy as np
    from sacrebleu.metrics import BLEU, CHRF
    from sacrebleu.significance import PairedTest

    from workbench.core.evaluate import significance as s

    refs = [references]
    test = PairedTest(
        [("before", before), ("after", after)],
        {"BLEU": BLEU(tokenize="zh"), "chrF": CHRF()},
        refs,
        test_type="bs",
        n_samples=n_bootstrap,
    )
    signatures, table = test()
    seed = test._seed if test._seed else None
    n = len(references)
    draws = np.random.default_rng(seed).choice(n, size=(n_bootstrap, n), replace=True)
    out: dict[str, Any] = {"size": n, "bleu_signature": str(signatures["BLEU"].format())}
    for key, metric in test.metrics.items():
        short = "bleu" if key == "BLEU" else "chrf"
        base, system = s._results(table, key)
        stats_before = np.array(metric._extract_corpus_statistics(before, refs), dtype="float32")
        stats_after = np.array(metric._extract_corpus_statistics(after, refs), dtype="float32")
        differences = [
            metric._compute_score_from_stats(stats_after[idx].sum(0)).score
            - metric._compute_score_from_stats(stats_before[idx].sum(0)).score
            for idx in draws
        ]
        out.update(
            {
                f"{short}_before": round(base.score, 2),
                f"{short}_after": round(system.score, 2),
                f"{short}_before_ci": s._interval(base),
                f"{short}_after_ci": s._interval(system),
                f"{short}_delta": round(system.score - base.score, 2) + 0.0,
                f"{short}_delta_ci": s.percentile_interval(differences),
                f"{short}_p": 1.0 if system.score == base.score else s._p_value(system),
            }
        )
    return out


def table_numbers(table: dict[str, list[Any]]) -> dict[str, list[list[float | None]]]:
    """A PairedTest-shaped table as plain numbers: [score, p, mean, ci] per system."""
    return {
        key: [[_plain(r.score), _plain(r.p_value), _plain(r.mean), _plain(r.ci)] for r in column]
        for key, column in table.items()
        if key != "System"
    }


def _plain(value: Any) -> float | None:
    # float() of a numpy float32 is exact: the JSON holds the very number sacreBLEU made.
    return None if value is None else float(value)


def score_numbers(score: Any) -> list[float]:
    """A corpus score with its interval: [score, bootstrap mean, 95% half-width]."""
    return [float(score.score), float(score._mean), float(score._ci)]


def run_arm(
    arm: str, references: list[str], before: list[str], after: list[str], n_bootstrap: int
) -> Any:
    """One arm's scoring call; its numbers, as JSON-ready values."""
    from sacrebleu.metrics import BLEU, CHRF

    def metrics() -> dict[str, Any]:
        return {"BLEU": BLEU(tokenize="zh"), "chrF": CHRF()}

    systems = [("before", before), ("after", after)]
    if arm == "sacrebleu":
        from sacrebleu.significance import PairedTest

        _, table = PairedTest(systems, metrics(), [references], "bs", n_bootstrap)()
        return table_numbers(table)
    if arm == "bounded":
        from workbench.core.evaluate.resampling import paired_bootstrap

        return table_numbers(paired_bootstrap(systems, metrics(), [references], n_bootstrap).table)
    if arm == "old workbench":
        return old_score_before_after(before, after, references, n_bootstrap)
    if arm == "workbench":
        from workbench.core.evaluate.significance import score_before_after

        scores = score_before_after(
            before, after, references, "zh", "test", "synthetic", n_bootstrap
        )
        found = scores.to_dict()
        # BLEU and chrF, as the old one scored them (chrF++ and TER came later)
        left_out = ("role", "name", "n_bootstrap", "chrfpp", "ter", "comet")
        return {k: v for k, v in found.items() if k not in left_out}
    if arm == "corpus_score":
        return [
            score_numbers(m.corpus_score(after, [references], n_bootstrap))
            for m in metrics().values()
        ]
    if arm == "bounded corpus_score":
        from workbench.core.evaluate.resampling import corpus_score_with_interval

        return [
            score_numbers(corpus_score_with_interval(m, after, [references], n_bootstrap))
            for m in metrics().values()
        ]
    raise ValueError(f"unknown arm {arm!r}")


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
