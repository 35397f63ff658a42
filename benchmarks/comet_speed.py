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

Method: every measurement is a fresh process of its arm's venv (this script's
:func:`child`, run with ``python -c``), so both pay the same for their imports and
neither holds the other's memory. It sets torch's thread count (``--threads``, default 1:
the machine is shared; ``OMP_NUM_THREADS`` too), imports, loads the model (timed on its
own), warms up on the first ``B`` segments, then times one scoring call of all segments
(wall and process CPU time) and writes the segment scores. The workbench's scorer keeps
each sequence's vector, so its cache is cleared after the warm-up: the timed call encodes
everything. The arms alternate, ``workbench, library`` then ``library, workbench``, over
``--reps`` repetitions; the report gives medians, segments per second and the ratio
workbench/library (above 1: the workbench is faster), and the largest difference between
the two arms' segment scores, which must stay below 1e-4 (the run fails otherwise).

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
import platform
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from figures import BENCHMARKS, figure, median, ratio, report_path

REPO = BENCHMARKS.parent
FIXTURES = REPO / "tests" / "fixtures" / "comet"
SMOKE_MODEL = FIXTURES / "regression-mix-sparsemax"
SMOKE_SEGMENTS = FIXTURES / "segments.json"
REFERENCE_PYTHON = "/tmp/comet-reference-venv/bin/python"
MODEL_DIR = "/tmp/comet-speed-model"
ARMS = ("workbench", "library")
ARM_NAMES = {"workbench": "workbench", "library": "unbabel-comet 2.2.7"}
#: The issue's bar for the two arms' segment scores.
TOLERANCE = 1e-4
SEED = 20240601

#: The encoders --shape builds: xlm-roberta-large's (COMET-22's) and xlm-roberta-base's.
SHAPES: dict[str, dict[str, Any]] = {
    "large": dict(
        hidden_size=1024, num_hidden_layers=24, num_attention_heads=16, intermediate_size=4096
    ),
    "base": dict(
        hidden_size=768, num_hidden_layers=12, num_attention_heads=12, intermediate_size=3072
    ),
}
#: What every shape shares with xlm-roberta-large's config.json.
ENCODER_CONFIG: dict[str, Any] = dict(
    vocab_size=250002,
    max_position_embeddings=514,
    type_vocab_size=1,
    pad_token_id=1,
    bos_token_id=0,
    eos_token_id=2,
    layer_norm_eps=1e-5,
    hidden_act="gelu",
)
#: Unbabel/wmt22-comet-da's hparams.yaml, with the encoder a local folder of random weights.
COMET22_HPARAMS = dict(
    nr_frozen_epochs=0.3,
    keep_embeddings_frozen=True,
    optimizer="AdamW",
    encoder_learning_rate=1e-06,
    learning_rate=1.5e-05,
    layerwise_decay=0.95,
    encoder_model="XLM-RoBERTa",
    pretrained_model="../encoder",  # relative to the model folder, as in the fixtures
    pool="avg",
    layer="mix",
    layer_transformation="sparsemax",
    layer_norm=False,
    loss="mse",
    dropout=0.1,
    batch_size=16,
    hidden_sizes=[3072, 1024],
    activations="Tanh",
    final_activation=None,
    load_pretrained_weights=False,
    local_files_only=True,
)
#: The fixtures' tokenizer files, reused for the built encoder.
TOKENIZER_FILES = (
    "sentencepiece.bpe.model",
    "tokenizer.json",
    "tokenizer_config.json",
    "special_tokens_map.json",
)


# ---------------------------------------------------------------------------
# In the child processes (either venv): build, or measure one arm once
# ---------------------------------------------------------------------------
def child(arm: str, spec_path: str) -> int:
    """One fresh process's job, read from the JSON at ``spec_path``; its result is written
    to ``spec["result"]``. Runs in the arm's own venv: imports nothing of the other's."""
    spec = json.loads(Path(spec_path).read_text(encoding="utf-8"))
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    jobs = {"workbench": measure_workbench, "library": measure_library, "build": build_model}
    result = jobs[arm](spec)
    Path(spec["result"]).write_text(json.dumps(result), encoding="utf-8")
    return 0


def read_segments(path: str) -> tuple[list[str], list[str], list[str]]:
    """Sources, translations and references from a segments JSON (a list of triples)."""
    segments = json.loads(Path(path).read_text(encoding="utf-8"))
    return (
        [s["src"] for s in segments],
        [s["mt"] for s in segments],
        [s["ref"] for s in segments],
    )


def versions(*names: str) -> dict[str, str]:
    """Installed versions of ``names`` in this venv, and Python's."""
    from importlib.metadata import PackageNotFoundError, version

    found = {"python": platform.python_version()}
    for name in names:
        try:
            found[name] = version(name)
        except PackageNotFoundError:
            found[name] = "not installed"
    return found


def timed_scoring(
    started: float,
    imported: float,
    loaded: float,
    warm_up: Callable[[], object],
    score_all: Callable[[], Sequence[float]],
) -> dict[str, Any]:
    """One arm's phases: import and load (timed by the caller), a warm-up call, then one
    timed call scoring every segment (wall clock, and process CPU time beside it)."""
    warm_up()
    warmed = time.perf_counter()
    wall, cpu = time.perf_counter(), time.process_time()
    scores = score_all()
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    return {
        "import_s": imported - started,
        "load_s": loaded - imported,
        "warmup_s": warmed - loaded,
        "seconds": wall,
        "cpu_seconds": cpu,
        "scores": [float(x) for x in scores],
    }


def measure_workbench(spec: dict[str, Any]) -> dict[str, Any]:
    """The workbench arm: load_scorer, a warm-up, one timed ``scorer.score``."""
    started = time.perf_counter()
    import torch

    torch.set_num_threads(spec["threads"])
    sys.path.insert(0, str(REPO))  # this checkout's workbench, not an installed one
    # What `import comet` imports in the other arm: transformers' XLM-R classes (the
    # workbench imports them lazily, which would otherwise count as loading).
    # (transformers 5 makes XLMRobertaTokenizerFast at run time, an alias of
    # XLMRobertaTokenizer that its type information does not name.)
    from transformers import (  # type: ignore[attr-defined]  # noqa: F401
        XLMRobertaModel,
        XLMRobertaTokenizerFast,
    )

    import workbench.core.comet.network
    import workbench.core.model.load  # noqa: F401
    from workbench.core.comet.scorer import load_scorer

    imported = time.perf_counter()
    scorer = load_scorer(spec["model"], device="cpu", batch_size=spec["batch_size"])
    loaded = time.perf_counter()
    sources, translations, references = read_segments(spec["segments"])
    warm = spec["batch_size"]

    def warm_up() -> None:
        scorer.score(sources[:warm], translations[:warm], references[:warm])
        scorer.forget()  # the timed call encodes every sequence itself

    network = scorer.network
    config = network.encoder.held.config
    return {
        **timed_scoring(
            started,
            imported,
            loaded,
            warm_up,
            lambda: scorer.score(sources, translations, references),
        ),
        "threads": torch.get_num_threads(),
        "parameters": sum(p.numel() for p in network.parameters()),
        "attention": config._attn_implementation,
        "versions": {**versions("torch", "transformers", "tokenizers", "entmax")},
        "workbench": _workbench_version(),
        "shape": {
            key: int(getattr(config, key))
            for key in (*SHAPES["large"], "max_position_embeddings", "vocab_size")
        },
        "tokens": token_counts(scorer, sources, translations, references, spec["batch_size"]),
    }


def _workbench_version() -> str:
    from workbench.core import __version__

    return str(__version__)


def token_counts(
    scorer: Any, sources: list[str], translations: list[str], references: list[str], batch: int
) -> dict[str, Any]:
    """Each side's token lengths, and the tokens each arm's batching makes the encoder run,
    padding included (the library: batches of segments in source-length order, each side
    padded to its longest; the workbench: distinct sequences, longest first)."""
    import numpy as np

    from workbench.core.comet.inputs import length_batches

    sides = {
        name: [len(ids) for ids in scorer.encode(texts)]
        for name, texts in (("src", sources), ("mt", translations), ("ref", references))
    }
    order = np.argsort([len(s) for s in sources])  # as predict() sorts its samples
    library = 0
    for start in range(0, len(order), batch):
        chosen = order[start : start + batch]
        library += sum(len(chosen) * max(lengths[i] for i in chosen) for lengths in sides.values())
    texts = [*sources, *references, *translations]
    distinct = list(dict.fromkeys(map(tuple, scorer.encode(texts))))
    workbench = sum(
        len(chosen) * max(len(distinct[i]) for i in chosen)
        for chosen in length_batches(distinct, batch)
    )
    return {
        "sides": {
            name: {
                "min": min(lengths),
                "median": float(np.median(lengths)),
                "mean": float(np.mean(lengths)),
                "max": max(lengths),
                "total": sum(lengths),
            }
            for name, lengths in sides.items()
        },
        "sequences": len(texts),
        "distinct_sequences": len(distinct),
        "distinct_tokens": sum(map(len, distinct)),
        "padded_library": library,
        "padded_workbench": workbench,
    }


def measure_library(spec: dict[str, Any]) -> dict[str, Any]:
    """The unbabel-comet arm: load_from_checkpoint, a warm-up, one timed ``predict``."""
    import logging
    import warnings

    started = time.perf_counter()
    import torch

    torch.set_num_threads(spec["threads"])
    import comet

    imported = time.perf_counter()
    logging.getLogger("pytorch_lightning").setLevel(logging.ERROR)
    logging.getLogger("lightning.pytorch").setLevel(logging.ERROR)
    warnings.filterwarnings("ignore")
    model_dir = Path(spec["model"])
    os.chdir(model_dir)  # a relative pretrained_model is resolved against the cwd
    model = comet.load_from_checkpoint(str(model_dir / "checkpoints" / "model.ckpt"))
    model.eval()
    loaded = time.perf_counter()
    sources, translations, references = read_segments(spec["segments"])
    samples = [
        {"src": s, "mt": t, "ref": r}
        for s, t, r in zip(sources, translations, references, strict=True)
    ]
    batch = spec["batch_size"]

    def predict(chosen: list[dict[str, str]]) -> Sequence[float]:
        return model.predict(chosen, batch_size=batch, gpus=0, progress_bar=False).scores

    return {
        **timed_scoring(
            started, imported, loaded, lambda: predict(samples[:batch]), lambda: predict(samples)
        ),
        "threads": torch.get_num_threads(),
        "parameters": sum(p.numel() for p in model.parameters()),
        "attention": model.encoder.model.config._attn_implementation,
        "versions": versions(
            "unbabel-comet", "torch", "transformers", "tokenizers", "pytorch-lightning"
        ),
    }


def build_model(spec: dict[str, Any]) -> dict[str, Any]:
    """A COMET-22-shaped model built by unbabel-comet's own ``RegressionMetric`` (reference
    venv), saved as the fixtures are: ``encoder/`` and ``model/`` under ``spec["root"]``."""
    import shutil

    import torch
    from comet.models import RegressionMetric
    from transformers import XLMRobertaConfig

    torch.set_num_threads(spec["threads"])
    root = Path(spec["root"])
    encoder, model_dir = root / "encoder", root / "model"
    for folder in (encoder, model_dir):
        if folder.exists():
            shutil.rmtree(folder)
    encoder.mkdir(parents=True)
    for name in TOKENIZER_FILES:
        shutil.copy(FIXTURES / "encoder" / name, encoder / name)
    # The fixtures' tokenizer stops at 40 tokens (its encoder has 42 positions); this
    # encoder has xlm-roberta-large's 514, so 512 as there.
    settings_path = encoder / "tokenizer_config.json"
    settings = json.loads(settings_path.read_text(encoding="utf-8"))
    settings["model_max_length"] = ENCODER_CONFIG["max_position_embeddings"] - 2
    settings_path.write_text(json.dumps(settings, indent=2) + "\n", encoding="utf-8")
    XLMRobertaConfig(**ENCODER_CONFIG, **SHAPES[spec["shape"]]).save_pretrained(encoder)

    model_dir.mkdir()
    previous = os.getcwd()
    os.chdir(model_dir)  # unbabel-comet resolves ../encoder against the cwd
    try:
        torch.manual_seed(SEED)
        model = RegressionMetric(**COMET22_HPARAMS)
        with torch.no_grad():  # a layer mix that sparsemax does not flatten to uniform
            generator = torch.Generator().manual_seed(SEED)
            for p in model.layerwise_attention.scalar_parameters:
                p.copy_(torch.randn(p.shape, generator=generator) * 0.5)
        parameters = sum(p.numel() for p in model.parameters())
        # As the fixtures are saved: a Lightning checkpoint, the encoder's position_ids
        # buffer in it as in real Unbabel files, hparams.yaml beside it.
        sys.path.insert(0, str(FIXTURES))
        # tests/fixtures/comet, put on sys.path just above; run in the reference venv only.
        from build_fixtures import save_comet_checkpoint  # type: ignore[import-not-found]

        save_comet_checkpoint(model, model_dir, ENCODER_CONFIG["max_position_embeddings"])
        del model
    finally:
        os.chdir(previous)
    return {
        "shape": spec["shape"],
        "parameters": parameters,
        "bytes": (model_dir / "checkpoints" / "model.ckpt").stat().st_size,
    }


# ---------------------------------------------------------------------------
# In the parent (the project's venv): workload, runs, report
# ---------------------------------------------------------------------------
def run_child(python: str, arm: str, spec: dict[str, Any], work: Path, threads: int) -> Any:
    """Run :func:`child` for ``arm`` with ``python`` in a fresh process; its result."""
    spec_path = work / f"{arm}-spec.json"
    spec = {**spec, "result": str(work / f"{arm}-result.json")}
    spec_path.write_text(json.dumps(spec), encoding="utf-8")
    call = (
        f"import sys; sys.path.insert(0, {str(BENCHMARKS)!r}); import comet_speed; "
        "raise SystemExit(comet_speed.child(sys.argv[1], sys.argv[2]))"
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


def load_average() -> str:
    """The 1-, 5- and 15-minute load averages."""
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


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
    segments = context["segments"]
    rows: dict[str, dict[str, Any]] = {}
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
    speedup = ratio(rows["workbench"]["per_second"], rows["library"]["per_second"])
    worst = context["difference"]
    wb, lib = rows["workbench"]["first"], rows["library"]["first"]
    smoke = context["smoke"]
    title = "COMET scoring speed: the workbench against unbabel-comet 2.2.7"
    lines = [
        f"# {title}{' (smoke run)' if smoke else ''}",
        "",
        f"Command: `{context['command']}` ({figure(context['wall'] / 60, '.1f')} min wall, "
        f"measured {context['date']}).",
        "",
        "## Result",
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
    lines += [
        "",
        f"**Ratio workbench / library (segments per second): {figure(speedup, '.2f', '×')}** "
        "(above 1: the workbench scores faster).",
        "",
        f"Largest |workbench − library| over the {segments} segment scores (every pair of "
        f"runs): **{figure(worst, '.2e')}** (bar: {TOLERANCE:.0e}).",
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
    lines += ["", "## Workload", ""]
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
    lines += ["", f"Segments: {segments}, {context['segments_what']}"]
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
    lines += [
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
    text = "\n".join(lines)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return text


def _versions_line(result: dict[str, Any]) -> str:
    found = dict(result.get("versions") or {})
    if "workbench" in result:
        found = {"workbench": result["workbench"], **found}
    return ", ".join(f"{k} {v}" for k, v in found.items()) or figure(None)


def main() -> int:
    """Build (or reuse) the model, run the arms interleaved, write the report."""
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
    args = parser.parse_args()
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
        if args.smoke:
            model, segments_file = SMOKE_MODEL, SMOKE_SEGMENTS
            context["model"] = {
                "path": str(model.relative_to(REPO)),
                "what": "The tiny fixture model (random weights, like wmt22-comet-da's "
                "settings), as `build_fixtures.py` made it.",
            }
            context["segments_what"] = "the fixtures' `segments.json`."
        else:
            model, built = ensure_model(
                Path(args.model_dir), args.shape, args.reference_python, args.threads
            )
            how = (
                "reused from an earlier run"
                if built["reused"]
                else f"built by this run in {built['build_s']:.0f} s"
            )
            context["model"] = {
                "path": str(model),
                "what": f"Shaped like Unbabel/wmt22-comet-da on an xlm-roberta-{args.shape} "
                "encoder, random weights, built with unbabel-comet's own `RegressionMetric` "
                "in the reference venv and saved with Lightning as the fixtures are "
                f"({how}; checkpoint {built['bytes'] / 1e9:.2f} GB): layer mix with "
                "sparsemax, no layer norm, average pooling, estimator 3072-1024 with Tanh. "
                "Tokenizer: the fixtures' SentencePiece (2,000 ids, trained on the HSK "
                "sentences) with the config's vocabulary at 250,002, so the ids stay below "
                "2,000 while the embedding matrix has the real size.",
            }
            segments_file = work / "segments.json"
            segments_file.write_text(
                json.dumps(hsk_segments(args.segments), ensure_ascii=False), encoding="utf-8"
            )
            context["segments_what"] = (
                f"HSK sentence pairs (`hsk_sentences_audio`) in a seeded random order (seed "
                f"{SEED}): source the English, reference the Chinese, translation the "
                "reference with about one character in eight dropped and two neighbours "
                "swapped."
            )
        context["segments"] = len(json.loads(segments_file.read_text(encoding="utf-8")))
        spec = {
            "model": str(model),
            "segments": str(segments_file),
            "batch_size": args.batch_size,
            "threads": args.threads,
        }
        pythons = {"workbench": sys.executable, "library": args.reference_python}
        arms = [arm for arm in ARMS if arm == "workbench" or has_library]
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


if __name__ == "__main__":
    raise SystemExit(main())
