"""Seconds to the first training step and peak memory, at 50k to 5M pairs, against the
anchor's preprocessing measured in the same run.

Usage:
    python benchmarks/data_scale.py                 # 50k, 200k, 1M and 5M pairs
    python benchmarks/data_scale.py --sizes 1000000 # one size
    python benchmarks/data_scale.py --quick         # 3,000 pairs: the code paths, a minute
    python benchmarks/data_scale.py --smoke         # 1,000 pairs, short decoding: seconds

Per size, three arms, each in fresh processes, one after the other:

- ``anchor``: ``run_translation.py``'s preprocessing: ``datasets`` reads the TSV
  (``quoting=3``: without it the csv reader fails on an unclosed quote) and a batched
  ``map`` tokenizes both sides with truncation in ``num_proc`` processes (the cores), with
  the same tokenizer, into a fresh datasets cache. Timed from the command to the end of
  the map.
- ``cold``: ``workbench train --headless`` with an empty workbench cache, from the command
  to its first training step (``step 1/…``): it reads, cleans, splits and tokenizes, and
  decodes the held-out sets "before".
- ``cached``: the same command again: the prepared data and the "before" translations
  come from the cache.

Peak memory is the largest sum over the arm's process tree (its process group) of each
process's proportional set size (``Pss`` in ``/proc/PID/smaps_rollup``), sampled every
0.2 s: forked workers share pages, which PSS counts once, where adding RSS would count
them once per process (``timed_command.py``).

The corpus is synthetic but made of real sentences (:func:`make_corpus`): each pair
joins 2 to 4 HSK pairs (about WMT19's 25 words a source), with 1% copied targets, 0.5%
empty targets and 0.6% sources that start with a quote, a tenth of them unclosed. The
model is a 1-layer MarianMT built here with SentencePiece vocabularies of 2,000 pieces a
side, a Marian tokenizer like opus-mt-en-zh's. The test set is 300 other pairs
(``--test-data``); validation is 500 pairs of the data.

``--smoke`` (the test suite runs it, so that a broken benchmark shows in CI) measures
1,000 pairs with 50 validation and 30 test pairs, decoded greedily to 16 tokens (a random
model decodes to its length bound), and writes its report to a temporary folder.

The report (DATA_SCALE.md, and the rows as JSON beside it) is written by
``data_scale_report.py`` from the rows measured here.
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from data_scale_report import render_report, write_report
from figures import figure, load_average, report_path
from timed_command import timed

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:  # measure this checkout's workbench, not an installed one
    sys.path.insert(0, str(REPO))

SIZES = (50_000, 200_000, 1_000_000, 5_000_000)
VALIDATION_PAIRS = 500
TEST_PAIRS = 300
#: --smoke: one small size, few held-out pairs, a short greedy "before" decoding.
SMOKE_PAIRS, SMOKE_VALIDATION, SMOKE_TEST = 1_000, 50, 30
SMOKE_DECODING = ("--num-beams", "1", "--max-new-tokens", "16")

ANCHOR = r"""
import sys, tempfile
import datasets
from transformers import AutoTokenizer
datasets.disable_progress_bars()
path, model, procs = sys.argv[1], sys.argv[2], int(sys.argv[3])
tokenizer = AutoTokenizer.from_pretrained(model)
raw = datasets.load_dataset(
    "csv", data_files={"train": path}, delimiter="\t", quoting=3,
    cache_dir=tempfile.mkdtemp(prefix="anchor-cache-"),
)["train"]
def preprocess(batch):
    inputs = tokenizer([s or "" for s in batch["en"]], max_length=128, truncation=True)
    labels = tokenizer(text_target=[t or "" for t in batch["zh"]], max_length=128, truncation=True)
    inputs["labels"] = labels["input_ids"]
    return inputs
done = raw.map(preprocess, batched=True, num_proc=procs, remove_columns=raw.column_names)
print(f"anchor rows {len(done)}", flush=True)
"""


def hsk_pairs() -> list[tuple[str, str]]:
    """The HSK sentences as (en, zh) pairs, placeholders dropped: what every corpus is made of."""
    from hsk_sentences_audio import load_sentences

    pairs = [(r["translation"]["en"].strip(), r["chinese"].strip()) for r in load_sentences()]
    return [(s, t) for s, t in pairs if s and t and s.lower() != "placeholder"]


def make_corpus(n: int, path: Path, seed: int = 0) -> Path:
    """``n`` pairs as a TSV with an ``en<TAB>zh`` header (see the module's docstring)."""
    rng = random.Random(seed)
    pairs = hsk_pairs()
    with path.open("w", encoding="utf-8") as out:
        out.write("en\tzh\n")
        for _ in range(n):
            parts = [rng.choice(pairs) for _ in range(rng.choice((2, 3, 3, 4)))]
            source, target = " ".join(p[0] for p in parts), "".join(p[1] for p in parts)
            draw = rng.random()
            if draw < 0.01:
                target = source
            elif draw < 0.015:
                target = ""
            elif draw < 0.02:
                source = f'"{source}," she said.'
            elif draw < 0.021:
                source = f'"{source}'
            out.write(f"{source}\t{target}\n")
    return path


def build_model(folder: Path) -> Path:
    """The 1-layer MarianMT with 2,000-piece vocabularies, saved in ``folder/model``."""
    from workbench.core.config.build import build_config
    from workbench.core.model.scratch import build_scratch_model

    pairs = hsk_pairs()
    config = build_config(
        "demo",
        overrides={
            "scratch_d_model": 32,
            "scratch_layers": 1,
            "scratch_heads": 2,
            "scratch_ffn_dim": 64,
            "scratch_source_vocab": 2000,
            "scratch_target_vocab": 2000,
        },
    )
    model, tokenizer = build_scratch_model(
        [s for s, _ in pairs], [t for _, t in pairs], folder / "spm", config
    )
    out = folder / "model"
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    return out


def data_stages(lines: list[tuple[float, str]]) -> dict[str, float]:
    """The stages of a cold run's ``data: prepared N pairs in T s: reading 6.0 s · …``."""
    found = next((t.split(" s: ", 1)[1] for _, t in lines if "data: prepared " in t), "")
    pairs = (part.rsplit(" ", 2)[:2] for part in found.split(" · ") if part.endswith(" s"))
    return {name: float(seconds) for name, seconds in pairs}


def phase_seconds(lines: list[tuple[float, str]], start: str, end: str) -> float | None:
    """Seconds between the first line starting with ``start`` and the first with ``end``."""
    begin = next((t for t, text in lines if text.strip().startswith(start)), None)
    finish = next((t for t, text in lines if text.strip().startswith(end)), None)
    return round(finish - begin, 1) if begin is not None and finish is not None else None


def measure(
    n: int,
    work: Path,
    model: Path,
    test: Path,
    procs: int,
    validation_pairs: int = VALIDATION_PAIRS,
    extra: tuple[str, ...] = (),
) -> list[dict[str, Any]]:
    """The three arms at ``n`` pairs (``extra``: more ``workbench train`` arguments)."""
    corpus = make_corpus(n, work / f"pairs-{n}.tsv")
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}
    rows = []
    anchor = timed(
        [sys.executable, "-c", ANCHOR, str(corpus), str(model), str(procs)], env, until=None
    )
    rows.append({"n": n, "arm": "anchor", **anchor})
    cache = Path(tempfile.mkdtemp(prefix="workbench-cache-", dir=work))
    command = [
        sys.executable,
        "-m",
        "workbench",
        "train",
        "--headless",
        "--model",
        str(model),
        "--data",
        str(corpus),
        "--samples",
        "0",
        "--test-data",
        str(test),
        "--validation-fraction",
        f"{validation_pairs / n:.6g}",
        "--output-dir",
        str(work / f"out-{n}"),
        *extra,
    ]
    for arm in ("cold", "cached"):
        run = timed(command, {**env, "WORKBENCH_CACHE": str(cache)}, until="step ")
        rows.append(
            {
                "n": n,
                "arm": arm,
                **run,
                "data_seconds": phase_seconds(run["lines"], "[data]", "[model]"),
                "before_seconds": phase_seconds(run["lines"], "[before]", "[train]") or 0.0,
                "stages": data_stages(run["lines"]),
            }
        )
    for row in rows:
        print(
            f"{n:>9,} {row['arm']:>7}: {figure(row.get('seconds'), '7.1f')} s, peak "
            f"{figure(row.get('peak_mib'), ',')} MiB",
            flush=True,
        )
    corpus.unlink()
    return rows


def main() -> None:
    """Measure the three arms at each size; write DATA_SCALE.md (``--quick``: print only)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=list(SIZES))
    parser.add_argument("--quick", action="store_true", help="3,000 pairs: the code paths")
    parser.add_argument(
        "--smoke",
        action="store_true",
        help="1,000 pairs, few held-out pairs, short decoding: seconds; written to a "
        "temporary folder unless --out says (never into benchmarks/)",
    )
    parser.add_argument("--out", default=None, help="default: benchmarks/DATA_SCALE.md")
    parser.add_argument("--work", default=None, help="a folder for corpora and caches")
    args = parser.parse_args()
    sizes = [SMOKE_PAIRS] if args.smoke else [3_000] if args.quick else args.sizes
    validation, test_pairs = (
        (SMOKE_VALIDATION, SMOKE_TEST) if args.smoke else (VALIDATION_PAIRS, TEST_PAIRS)
    )
    extra = SMOKE_DECODING if args.smoke else ()
    from workbench.core.data.pair_features import default_num_proc

    procs = default_num_proc()
    load_before = load_average()
    with tempfile.TemporaryDirectory(prefix="data-scale-", dir=args.work) as folder:
        work = Path(folder)
        model = build_model(work)
        test = make_corpus(test_pairs, work / "test.tsv", seed=99)
        rows = [
            row for n in sizes for row in measure(n, work, model, test, procs, validation, extra)
        ]
    context = {
        "machine": platform.platform(),
        "cores": os.cpu_count(),
        "procs": procs,
        "date": time.strftime("%Y-%m-%d"),
        "load_before": load_before,
        "load_after": load_average(),
        "validation_pairs": validation,
        "test_pairs": test_pairs,
    }
    if args.quick and not args.smoke:  # the code paths, not figures to keep
        print(render_report(rows, context))
    else:
        out = report_path(args.out, Path(__file__).with_name("DATA_SCALE.md"), args.smoke)
        print(write_report(out, rows, context))
        print(f"wrote {out}")


if __name__ == "__main__":
    main()
