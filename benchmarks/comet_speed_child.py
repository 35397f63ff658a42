"""The child side of benchmarks/comet_speed.py: one fresh process, in either arm's venv.

``comet_speed.py`` runs :func:`child` with the workbench's venv or with unbabel-comet's
isolated reference venv (``tests/fixtures/comet/reference_venv.sh``), so this module
imports only the standard library at its top: each job imports its own arm's packages,
and nothing of the other's. The jobs: measure the workbench's scorer, measure the
library's ``predict``, or build the COMET-22-shaped model with the library's own classes.
"""

from __future__ import annotations

import json
import os
import platform
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "tests" / "fixtures" / "comet"
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
