"""COMET scoring speed: the workbench's own inference against unbabel-comet 2.2.7.

Usage:
  python benchmarks/comet_speed.py                    # COMET-22-shaped model, 256 segments
      [--segments N] [--reps 3] [--batch-size 16] [--threads 1] [--shape large|base]
      [--model-dir /tmp/comet-speed-model] [--reference-python PATH] [--out FILE]
  python benchmarks/comet_speed.py --smoke            # the tiny fixture model, seconds
                                                      # (the tests run it; report in a
                                                      # temporary folder)

Arms, each on the same checkpoint, the same segments and the same batch size:

- ``workbench``: ``load_scorer(folder, device="cpu", batch_size=B)``, then
  ``scorer.score(sources, translations, references)``, in the project's venv
  (transformers 5);
- ``unbabel-comet``: ``comet.load_from_checkpoint``, then ``model.predict(samples,
  batch_size=B, gpus=0, progress_bar=False)`` with its default length batching, in the
  isolated reference venv that ``tests/fixtures/comet/reference_venv.sh`` makes
  (``/tmp/comet-reference-venv``: unbabel-comet 2.2.7 on transformers 4.57).

Method: every measurement is a fresh process of its arm's venv (``comet_speed_child.py``'s
:func:`child`, run with ``python -c``; ``comet_speed_report.py`` writes the report), so
both pay the same for their imports and neither holds the other's memory. It sets
torch's thread count (``--threads``, default 1: the machine is shared; ``OMP_NUM_THREADS``
too), imports, loads the model (timed on its own), warms up on the first ``B`` segments,
then times one scoring call of all segments (wall and process CPU time) and writes the
segment scores. The workbench's scorer keeps each sequence's vector, so its cache is
cleared after the warm-up: the timed call encodes everything. The arms alternate,
``workbench, library`` then ``library, workbench``, over ``--reps`` repetitions; the
report gives medians, segments per second and the ratio workbench/library (above 1: the
workbench is faster), and the largest difference between the two arms' segment scores,
which must stay below 1e-4 (the run fails otherwise).

Workload: a model shaped like Unbabel/wmt22-comet-da (which cannot be downloaded here),
built once with the LIBRARY's own ``RegressionMetric`` in the reference venv (random
weights cost the compute real ones do) and saved with Lightning as
``tests/fixtures/comet/build_fixtures.py`` saves the fixtures: layer mix with sparsemax,
no layer norm, average pooling, estimator 3072-1024 with Tanh, on an encoder of
xlm-roberta-large's shape (1024 wide, 24 layers, 16 heads, FFN 4096, 514 positions,
vocabulary 250,002; ``--shape base``: 768 wide, 12 layers, 12 heads, FFN 3072). Its
tokenizer is the fixtures' SentencePiece (2,000 ids, trained on the HSK sentences), so
the ids stay below 2,000 while the embedding matrix has the real size. It is cached in
``--model-dir`` (about 2.3 GB for the large shape) and reused. Segments: HSK sentence
pairs in a seeded random order, source = English, reference = Chinese, translation = the
reference with about one character in eight dropped and two neighbours swapped (seeded).

--smoke: the fixture model ``tests/fixtures/comet/regression-mix-sparsemax`` and its
``segments.json``, one repetition; without the reference venv the library arm is "n/a"
and only the workbench arm runs.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from comet_speed_child import REPO, SEED, SHAPES
from comet_speed_report import (
    ARM_NAMES,
    ARMS,
    TOLERANCE,
    cpu_name,
    largest_difference,
    write_report,
)
from figures import BENCHMARKS, load_average, report_path

FIXTURES = REPO / "tests" / "fixtures" / "comet"
SMOKE_MODEL = FIXTURES / "regression-mix-sparsemax"
SMOKE_SEGMENTS = FIXTURES / "segments.json"
REFERENCE_PYTHON = "/tmp/comet-reference-venv/bin/python"
MODEL_DIR = "/tmp/comet-speed-model"


def run_child(python: str, arm: str, spec: dict[str, Any], work: Path, threads: int) -> Any:
    """Run ``comet_speed_child.child`` for ``arm`` with ``python`` in a fresh process; its
    result."""
    spec_path = work / f"{arm}-spec.json"
    spec = {**spec, "result": str(work / f"{arm}-result.json")}
    spec_path.write_text(json.dumps(spec), encoding="utf-8")
    call = (
        f"import sys; sys.path.insert(0, {str(BENCHMARKS)!r}); import comet_speed_child; "
        "raise SystemExit(comet_speed_child.child(sys.argv[1], sys.argv[2]))"
    )
    env = {
        **os.environ,
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "TOKENIZERS_PARALLELISM": "false",
        "OMP_NUM_THREADS": str(threads),
        "MKL_NUM_THREADS": str(threads),
        "PYTHONWARNINGS": "ignore",
    }
    done = subprocess.run(
        [python, "-c", call, arm, str(spec_path)],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        raise SystemExit(f"the {arm} child failed ({python}):\n{done.stderr[-4000:]}")
    return json.loads(Path(spec["result"]).read_text(encoding="utf-8"))


def perturb(text: str, rng: random.Random) -> str:
    """A worse translation: about one character in eight dropped, two neighbours swapped."""
    chars = [ch for ch in text if rng.random() >= 0.125]
    if len(chars) > 2:
        i = rng.randrange(len(chars) - 1)
        chars[i], chars[i + 1] = chars[i + 1], chars[i]
    out = "".join(chars)
    return out if out and out != text else text[1:] or "。"


def hsk_segments(n: int) -> list[dict[str, str]]:
    """``n`` HSK pairs in a seeded random order: English source, Chinese reference, and a
    perturbed reference as the translation."""
    import hsk_sentences_audio

    records = hsk_sentences_audio.load_sentences()
    rng = random.Random(SEED)
    chosen = rng.sample(range(len(records)), min(n, len(records)))
    return [
        {
            "src": records[i]["translation"]["en"],
            "mt": perturb(records[i]["chinese"], rng),
            "ref": records[i]["chinese"],
        }
        for i in chosen
    ]


def ensure_model(root: Path, shape: str, python: str, threads: int) -> tuple[Path, dict]:
    """The COMET-22-shaped model of ``shape`` under ``root``: reused when a finished build
    of the same shape is there, else built in the reference venv."""
    folder = root / shape
    marker = folder / "built.json"
    if marker.is_file():
        built = json.loads(marker.read_text(encoding="utf-8"))
        if (
            built.get("shape") == shape
            and (folder / "model" / "checkpoints" / "model.ckpt").is_file()
        ):
            return folder / "model", {**built, "reused": True}
    if not Path(python).is_file():
        raise SystemExit(
            f"building the model needs unbabel-comet's venv at {python}: run "
            "bash tests/fixtures/comet/reference_venv.sh, or give --reference-python"
        )
    folder.mkdir(parents=True, exist_ok=True)
    print(f"building the {shape}-shaped COMET-22 model in {folder} ...", flush=True)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        built = run_child(
            python,
            "build",
            {"root": str(folder), "shape": shape, "threads": threads},
            Path(tmp),
            threads,
        )
    built["build_s"] = time.perf_counter() - started
    marker.write_text(json.dumps(built), encoding="utf-8")
    return folder / "model", {**built, "reused": False}


def main() -> int:
    """Build (or reuse) the model, run the arms interleaved, write the report."""
    args = _arguments()
    reps = args.reps or (1 if args.smoke else 3)
    out = report_path(args.out, BENCHMARKS / "COMET_SPEED.md", smoke=args.smoke)
    has_library = Path(args.reference_python).is_file()
    if not has_library and not args.smoke:
        raise SystemExit(
            f"no reference venv at {args.reference_python}: run "
            "bash tests/fixtures/comet/reference_venv.sh, or give --reference-python"
        )
    started = time.perf_counter()
    context: dict[str, Any] = {
        "smoke": args.smoke,
        "command": "python benchmarks/comet_speed.py " + " ".join(sys.argv[1:]),
        "date": time.strftime("%Y-%m-%d"),
        "cpu": cpu_name(),
        "cores": os.cpu_count(),
        "load_before": load_average(),
        "threads": args.threads,
        "batch_size": args.batch_size,
        "reference_python": args.reference_python,
    }
    with tempfile.TemporaryDirectory(prefix="comet-speed-") as tmp:
        work = Path(tmp)
        model, segments_file, described = _workload(args, work)
        context.update(described)
        context["segments"] = len(json.loads(segments_file.read_text(encoding="utf-8")))
        spec = {
            "model": str(model),
            "segments": str(segments_file),
            "batch_size": args.batch_size,
            "threads": args.threads,
        }
        arms = [arm for arm in ARMS if arm == "workbench" or has_library]
        runs, order = _run_arms(args, arms, spec, work, reps)
    context["order"] = ", ".join(order)
    context["difference"] = largest_difference(runs)
    context["wall"] = time.perf_counter() - started
    context["load_after"] = load_average()
    print(write_report(out, runs, context))
    print(f"wrote {out}")
    worst = context["difference"]
    if worst is not None and worst >= TOLERANCE:
        raise SystemExit(
            f"the arms' segment scores differ by up to {worst:.2e} (bar {TOLERANCE:.0e})"
        )
    return 0


def _arguments() -> argparse.Namespace:
    """The command's flags (see the module's docstring)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="the tiny fixture model, 1 rep")
    parser.add_argument("--segments", type=int, default=256, help="HSK segments (full mode)")
    parser.add_argument("--reps", type=int, default=None, help="repetitions (default 3)")
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--threads", type=int, default=1, help="torch threads in both arms")
    parser.add_argument("--shape", choices=sorted(SHAPES), default="large")
    parser.add_argument("--model-dir", default=MODEL_DIR, help="where the built model is cached")
    parser.add_argument("--reference-python", default=REFERENCE_PYTHON)
    parser.add_argument("--out", default=None, help="default: benchmarks/COMET_SPEED.md")
    return parser.parse_args()


def _workload(args: argparse.Namespace, work: Path) -> tuple[Path, Path, dict[str, Any]]:
    """The model and the segments file both arms score, and how the report describes them:
    the fixtures' with ``--smoke``, else the COMET-22-shaped model and HSK segments."""
    if args.smoke:
        return (
            SMOKE_MODEL,
            SMOKE_SEGMENTS,
            {
                "model": {
                    "path": str(SMOKE_MODEL.relative_to(REPO)),
                    "what": "The tiny fixture model (random weights, like wmt22-comet-da's "
                    "settings), as `build_fixtures.py` made it.",
                },
                "segments_what": "the fixtures' `segments.json`.",
            },
        )
    model, built = ensure_model(
        Path(args.model_dir), args.shape, args.reference_python, args.threads
    )
    how = (
        "reused from an earlier run"
        if built["reused"]
        else f"built by this run in {built['build_s']:.0f} s"
    )
    described = {
        "model": {
            "path": str(model),
            "what": f"Shaped like Unbabel/wmt22-comet-da on an xlm-roberta-{args.shape} "
            "encoder, random weights, built with unbabel-comet's own `RegressionMetric` "
            "in the reference venv and saved with Lightning as the fixtures are "
            f"({how}; checkpoint {built['bytes'] / 1e9:.2f} GB): layer mix with "
            "sparsemax, no layer norm, average pooling, estimator 3072-1024 with Tanh. "
            "Tokenizer: the fixtures' SentencePiece (2,000 ids, trained on the HSK "
            "sentences) with the config's vocabulary at 250,002, so the ids stay below "
            "2,000 while the embedding matrix has the real size.",
        },
        "segments_what": (
            f"HSK sentence pairs (`hsk_sentences_audio`) in a seeded random order (seed "
            f"{SEED}): source the English, reference the Chinese, translation the "
            "reference with about one character in eight dropped and two neighbours "
            "swapped."
        ),
    }
    segments_file = work / "segments.json"
    segments_file.write_text(
        json.dumps(hsk_segments(args.segments), ensure_ascii=False), encoding="utf-8"
    )
    return model, segments_file, described


def _run_arms(
    args: argparse.Namespace, arms: list[str], spec: dict[str, Any], work: Path, reps: int
) -> tuple[dict[str, list[dict[str, Any]]], list[str]]:
    """Each arm's runs, alternating (``workbench, library`` then ``library, workbench``),
    and the order they ran in."""
    pythons = {"workbench": sys.executable, "library": args.reference_python}
    runs: dict[str, list[dict[str, Any]]] = {arm: [] for arm in ARMS}
    order = []
    for rep in range(reps):
        for arm in arms if rep % 2 == 0 else arms[::-1]:
            found = run_child(pythons[arm], arm, spec, work, args.threads)
            runs[arm].append(found)
            order.append(ARM_NAMES[arm])
            print(
                f"rep {rep + 1} {ARM_NAMES[arm]}: scoring {found['seconds']:.2f} s "
                f"(cpu {found['cpu_seconds']:.2f} s), load {found['load_s']:.2f} s",
                flush=True,
            )
    return runs, order


if __name__ == "__main__":
    raise SystemExit(main())
