"""Shared fixtures: offline mode, a private cache, a tiny Marian model built here, and one
finished tiny run for the tests that read what a run leaves."""

from __future__ import annotations

import asyncio
import os
import shutil
import socket
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from workbench.core.train.run_training import RunResult

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
# One CPU thread for torch, here and in every subprocess (they inherit the environment):
# a 32-wide model gains nothing from more, and on a busy machine OpenMP threads that wait
# for each other made one tiny decode 10-20 times slower (1.8 s against 35 s measured).
# Set before torch is imported: the count is read once, at import.
os.environ.setdefault("OMP_NUM_THREADS", "1")

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def _private_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch):
    """Keep caches (Hub samples, prepared data, "before" translations) out of the user's
    home, one per test: a test's run prepares and decodes its own data, whatever ran
    before it."""
    monkeypatch.setenv("WORKBENCH_CACHE", str(tmp_path_factory.mktemp("cache")))


#: The tiny model every test run trains: a 1-layer, 32-wide Marian, decoding 16 tokens.
TINY_MODEL_SETTINGS = {
    "scratch_d_model": 32,
    "scratch_layers": 1,
    "scratch_heads": 2,
    "scratch_ffn_dim": 64,
    "scratch_source_vocab": 400,
    "scratch_target_vocab": 2000,
    "max_new_tokens": 16,
}
#: Settings for a demo run of a few seconds, as a --config TOML file for subprocess tests.
TINY_RUN_SETTINGS = {
    "samples": 180,
    "learning_rate": 3e-3,
    "batch_size": 16,
    "logging_steps": 1,
    **TINY_MODEL_SETTINGS,
}


def tiny_config(**overrides):
    """The demo preset shrunk to seconds: the model of TINY_RUN_SETTINGS, greedy."""
    from workbench.core.config.build import build_config

    return build_config("demo", overrides={**TINY_MODEL_SETTINGS, "num_beams": 1, **overrides})


def small(tmp_path: Path, name: str = "out", **extra):
    """tiny_config for an in-process 2-epoch run of a few seconds, outputs in tmp_path/name."""
    values = dict(
        samples=180,
        epochs=2.0,
        batch_size=16,
        logging_steps=2,
        learning_rate=3e-3,
        output_dir=str(tmp_path / name),
    )
    values.update(extra)
    return tiny_config(**values)


async def wait_for(pilot, predicate, timeout: float = 60.0, what: str = "") -> None:
    """Let a Textual app run until ``predicate()`` holds (real work happens on threads).

    Tests wait for a state instead of asserting it after a fixed pause: under load (a
    fresh clone, other jobs on the machine) the app can take seconds to get there, and a
    fixed pause then fails a test that is right. ``what`` names the state in the failure.
    """
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not predicate():
        if loop.time() > deadline:
            raise AssertionError(f"not reached in {timeout:g} s: {what or 'condition'}")
        await pilot.pause(0.1)


async def show_pane(pilot, name: str) -> None:
    """Press the pane's F-key (the Lab: its digit); wait until it is shown, mounted, focused.

    The keys a test presses next are handled by the focused widget: the Training keys
    (s, x, r) work only once focus is in that pane and outside a text field, and the
    hidden panes are mounted only after the first frame. Pressing them before that was
    the race behind a Training test that failed only under load.
    """
    from textual.widgets import TabbedContent, TabPane

    from workbench.tui.app import F_KEY_PANES, PANES

    app = pilot.app
    if name in F_KEY_PANES:
        await pilot.press(f"f{PANES.index(name) + 1}")
    else:  # the Lab has only its digit (F6 is Screenshot); Escape leaves a text field first
        await pilot.press("escape", str(PANES.index(name) + 1))

    def shown() -> bool:
        tab = app.query_one(f"TabPane#{name}", TabPane)
        focused = app.focused
        return (
            app.query_one("#panes", TabbedContent).active == name
            and bool(tab.children)
            and focused is not None
            and tab in focused.ancestors
        )

    await wait_for(pilot, shown, what=f"the {name} pane shown with the focus in it")


def hold_training(monkeypatch: pytest.MonkeyPatch, after_steps: int) -> threading.Event:
    """Hold each training step after the first ``after_steps`` until the returned Event is
    set. A test that acts while a run trains (switches panes, presses stop) then has all
    the time it needs: a tiny run warm in memory can finish within one key press."""
    from transformers import Seq2SeqTrainer

    real_step = Seq2SeqTrainer.training_step
    go_on = threading.Event()

    def held_step(self, *args, **kwargs):
        if self.state.global_step >= after_steps and not go_on.wait(120):
            raise RuntimeError("training held for 120 s: the test never let it go on")
        return real_step(self, *args, **kwargs)

    monkeypatch.setattr(Seq2SeqTrainer, "training_step", held_step)
    return go_on


async def start_training(pilot):
    """Open the Training pane, press Start, and wait for two logged losses: a run that is
    really under way. Returns the pane."""
    from workbench.tui.widgets.charts import SeriesChart
    from workbench.tui.widgets.training_pane import TrainingPane

    await show_pane(pilot, "training")
    training = pilot.app.query_one(TrainingPane)
    await pilot.press("s")
    await wait_for(pilot, lambda: training.running, what="the run started")
    chart = pilot.app.query_one("#loss-chart", SeriesChart)
    await wait_for(pilot, lambda: chart.point_count("loss") >= 2, what="two logged losses")
    return training


#: Console lines that have broken translation consoles: each must give a row, not a crash.
ODD_INPUT = [
    "🍵 I like tea 🍵",  # emoji
    "a\x00b\x1bc\x07",  # control characters
    "bad \ud800 surrogate",  # a lone surrogate
    "我喜欢喝茶。",  # Chinese
    "[/bold] [red]not markup[/red]",  # looks like Rich markup
    "I like tea. " * 900,  # 10,800 characters, far over 512 positions
    "word " * 2000,  # one "sentence" over the limit: truncated
]


def scores_block(
    role: str,
    bleu: tuple[float, float],
    chrf: tuple[float, float],
    size: int = 425,
    name: str = "10% held out, seed 42",
) -> dict:
    """A summary.json score block with fixed numbers, for apps opened on a hand-made run."""
    return {
        "role": role,
        "name": name,
        "size": size,
        "bleu_before": bleu[0],
        "bleu_after": bleu[1],
        "chrf_before": chrf[0],
        "chrf_after": chrf[1],
        "bleu_before_ci": [0.0, bleu[0] + 0.1],
        "bleu_after_ci": [bleu[1] - 1.2, bleu[1] + 1.2],
        "chrf_before_ci": [0.0, chrf[0] + 0.2],
        "chrf_after_ci": [chrf[1] - 1.0, chrf[1] + 1.0],
        "bleu_delta": round(bleu[1] - bleu[0], 2),
        "bleu_delta_ci": [round(bleu[1] - bleu[0] - 1.3, 2), round(bleu[1] - bleu[0] + 1.3, 2)],
        "bleu_p": 0.000999,
        "chrf_delta": round(chrf[1] - chrf[0], 2),
        "chrf_delta_ci": [round(chrf[1] - chrf[0] - 1.1, 2), round(chrf[1] - chrf[0] + 1.1, 2)],
        "chrf_p": 0.000999,
        "n_bootstrap": 1000,
        "bleu_signature": "nrefs:1|bs:1000|tok:zh",
    }


#: ``workbench`` arguments of the tiny demo run (``tiny.toml`` in the working folder).
TINY_DEMO_ARGS = (
    "train", "--headless", "--preset", "demo", "--config", "tiny.toml", "--no-interact",
)  # fmt: skip


def tiny_toml(**values) -> str:
    """TINY_RUN_SETTINGS with ``values`` on top, written as TOML."""
    merged = {**TINY_RUN_SETTINGS, **values}
    return "".join(f"{key} = {value!r}\n" for key, value in merged.items())


def copy_output(source: Path, target: Path) -> None:
    """The output folder ``source`` copied to ``target`` as if its runs had been trained
    there: the paths its JSON files hold (summaries, configs, workbench.json, metrics,
    checkpoint states) name the copy."""
    shutil.copytree(source, target)
    for path in target.rglob("*.json*"):  # .json and .jsonl
        text = path.read_text(encoding="utf-8")
        path.write_text(text.replace(str(source), str(target)), encoding="utf-8")


@dataclass
class FinishedRun:
    """The shared finished run: what run_training returned, every event it sent, and the
    pairs the Trainer was handed to train and validate on."""

    result: RunResult
    events: list[Any]
    handed: dict[str, list[Any]]

    def copy_to(self, output: Path) -> Path:
        """Its output folder copied to ``output`` (see :func:`copy_output`); the copy's run
        folder."""
        copy_output(Path(self.result.run_dir).parents[1], output)
        return output / "runs" / Path(self.result.run_dir).name


@pytest.fixture(scope="session")
def finished_run(tmp_path_factory: pytest.TempPathFactory) -> FinishedRun:
    """One in-process ``small`` run (2 epochs), trained once for every test that reads what
    a finished run leaves instead of one training each. Nothing may write into it: a test
    that writes (a report, a second run, a resume) works on ``finished_run.copy_to(...)``."""
    from workbench.core.train import trainer
    from workbench.core.train.run_training import run_training

    handed: dict[str, list[Any]] = {}
    real_build = trainer.build_trainer

    def recording_build(config, model, tokenizer, train, validation, *args, **kwargs):
        handed.update(train=train, validation=validation)  # what the Trainer will see
        return real_build(config, model, tokenizer, train, validation, *args, **kwargs)

    events: list[Any] = []
    with pytest.MonkeyPatch.context() as patch:
        # A cache of its own: a session fixture is set up before the autouse one.
        patch.setenv("WORKBENCH_CACHE", str(tmp_path_factory.mktemp("finished_run_cache")))
        patch.setattr(trainer, "build_trainer", recording_build)
        result = run_training(small(tmp_path_factory.mktemp("finished_run")), events.append)
    assert result.status == "finished"
    return FinishedRun(result, events, handed)


def cleaned_hsk_pairs() -> list:
    """The HSK pairs as the demo cleans them, in the corpus's order."""
    from workbench.core.config.build import build_config
    from workbench.core.data.cleaning import CleaningSettings
    from workbench.core.data.cleaning_pass import clean_pairs
    from workbench.core.data.sources import load_hsk_pairs

    pairs, _ = clean_pairs(load_hsk_pairs(), CleaningSettings.of(build_config("demo")))
    return pairs


#: What write_planted_tsv plants among clean pairs, by the rule that should drop it.
PLANTED = {"copy": 10, "script": 8, "empty": 6, "ratio": 5, "duplicate": 7}


def write_planted_tsv(path: Path, clean: int = 300) -> Path:
    """``clean`` HSK pairs and, shuffled in, the noise of PLANTED: copied targets, English
    "Chinese" references, empty targets, one-word sources of whole paragraphs and pairs
    repeated."""
    import random

    pairs = cleaned_hsk_pairs()
    rows = [(p.source, p.target) for p in pairs[:clean]]
    extra = pairs[clean : clean + 100]
    planted = [(p.source, p.source) for p in extra[:10]]
    planted += [(p.source, "This reference is not Chinese at all.") for p in extra[10:18]]
    planted += [(p.source, "") for p in extra[18:24]]
    planted += [("Yes.", "".join(q.target for q in extra[24 + i : 30 + i])) for i in range(5)]
    planted += rows[:7]
    assert len(planted) == sum(PLANTED.values())
    mixed = rows + planted
    random.Random(1).shuffle(mixed)
    path.write_text("en\tzh\n" + "".join(f"{s}\t{t}\n" for s, t in mixed), encoding="utf-8")
    return path


@pytest.fixture(scope="session")
def hsk_pairs():
    """The first 300 cleaned HSK pairs."""
    return cleaned_hsk_pairs()[:300]


@pytest.fixture(scope="session")
def pairs_file(tmp_path_factory: pytest.TempPathFactory, hsk_pairs) -> Path:
    """The first 100 cleaned HSK pairs as a TSV file with an ``en``/``zh`` header, as a
    user's local data looks (pairs 100 on are never trained on); nothing writes to it."""
    path = tmp_path_factory.mktemp("pairs") / "pairs.tsv"
    rows = "".join(f"{p.source}\t{p.target}\n" for p in hsk_pairs[:100])
    path.write_text("en\tzh\n" + rows, encoding="utf-8")
    return path


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory: pytest.TempPathFactory, hsk_pairs) -> Path:
    """A randomly initialised tiny MarianMT saved like a workbench best_model."""
    import json

    from workbench.core.decoding import SETTINGS_FILE
    from workbench.core.model.scratch import build_scratch_model

    folder = tmp_path_factory.mktemp("tiny_model")
    model, tokenizer = build_scratch_model(
        [p.source for p in hsk_pairs],
        [p.target for p in hsk_pairs],
        folder / "spm",
        tiny_config(),
    )
    out = folder / "model"
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    (out / SETTINGS_FILE).write_text(json.dumps({"target_label": None}), encoding="utf-8")
    return out


def run_cli(
    *args: str,
    cwd: Path | None = None,
    input: str | bytes | None = None,
    env: dict[str, str] | None = None,
    timeout: float = 600,
    fake_training: bool = False,
):
    """Run ``python -m workbench`` in a subprocess and return the CompletedProcess; with
    ``fake_training``, ``python -m tests.fake_training`` (the CLI as it is, the stand-in
    trainer in place of run_training) for a test of the CLI's contract, not of training."""
    import subprocess

    full_env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONUNBUFFERED": "1", **(env or {})}
    if fake_training:
        full_env["PYTHONPATH"] = str(Path(__file__).resolve().parent.parent)
    return subprocess.run(
        [sys.executable, "-m", "tests.fake_training" if fake_training else "workbench", *args],
        cwd=cwd,
        input=input,
        env=full_env,
        capture_output=True,
        text=not isinstance(input, bytes),
        timeout=timeout,
    )


@pytest.fixture(scope="session")
def hub_server(tmp_path_factory: pytest.TempPathFactory, hsk_pairs, family_models):
    """A Hub look-alike on 127.0.0.1 (tests/hub_server.py) serving a tiny model shaped like
    Helsinki-NLP/opus-mt-en-zh, a WMT19-shaped wmt/wmt19, the opus-en-de preset's pair
    (opus-mt-en-de, wmt/wmt14) and each family model under the id it imitates
    (tests/family_models.py HUB_IDS); tests reset its faults."""
    from tests.family_models import HUB_IDS
    from tests.hub_server import (
        OPUS_DE_MODEL,
        OPUS_MODEL,
        WMT14_DATASET,
        WMT_DATASET,
        HubServer,
        build_opus_like_model,
        build_wmt_like_dataset,
    )

    folder = tmp_path_factory.mktemp("hub")
    model = build_opus_like_model(
        folder / "model", [p.source for p in hsk_pairs], [p.target for p in hsk_pairs]
    )
    data = build_wmt_like_dataset(folder / "wmt19", [(p.source, p.target) for p in hsk_pairs])
    # The opus-en-de preset's pair, for its path (no label, WMT14's de-en layout, 13a):
    # there is no German text offline, so its "de" side holds the HSK Chinese sentences.
    de_model = build_opus_like_model(
        folder / "model-de",
        [p.source for p in hsk_pairs],
        [p.target for p in hsk_pairs],
        labels=(),
    )
    wmt14 = build_wmt_like_dataset(
        folder / "wmt14", [(p.source, p.target) for p in hsk_pairs], config="de-en"
    )
    server = HubServer()
    server.add_repo("model", OPUS_MODEL, model)
    server.add_repo("dataset", WMT_DATASET, data)
    server.add_repo("model", OPUS_DE_MODEL, de_model)
    server.add_repo("dataset", WMT14_DATASET, wmt14)
    for family, folder in family_models.items():
        server.add_repo("model", HUB_IDS[family], folder)
    server.start()
    yield server
    server.stop()


#: Proxy variables, cleared for Hub subprocesses unless a test sets them.
PROXY_VARIABLES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY")


#: A port on 127.0.0.1 where nothing listens (discard): the safety-net proxy.
DEAD_PROXY = "http://127.0.0.1:9"


def hub_env(server, home: Path, **extra: str) -> dict[str, str]:
    """Environment for a CLI subprocess whose Hub is ``server``: online (HF_HUB_OFFLINE
    unset), its own Hugging Face cache and sample cache under ``home``.

    As a safety net every proxy variable names a dead port on 127.0.0.1 and only 127.0.0.1
    bypasses it (NO_PROXY), so a request meant for any other host fails instead of leaving
    the machine. ``extra`` proxy variables are set in both cases (urllib and httpx let an
    empty lower-case one cancel the upper-case one).
    """
    env = {
        "HF_ENDPOINT": server.url,
        "HF_HUB_OFFLINE": "",
        "TRANSFORMERS_OFFLINE": "",
        "HF_HOME": str(home / "hf"),
        "WORKBENCH_CACHE": str(home / "sample-cache"),
        "HF_HUB_DISABLE_TELEMETRY": "1",
        "OMP_NUM_THREADS": "1",
        # Retries (workbench/core/data/hub_requests.py) 10 ms apart, not 1 s: a test of a
        # failing server fails in a second. A test of the delays sets its own.
        "WORKBENCH_HUB_RETRY_DELAY": "0.01",
    }
    proxies = {name: DEAD_PROXY for name in PROXY_VARIABLES[:-1]}
    proxies["NO_PROXY"] = "127.0.0.1"
    proxies.update({k: v for k, v in extra.items() if k in PROXY_VARIABLES})
    for name, value in proxies.items():
        env[name] = env[name.lower()] = value
    env.update({k: v for k, v in extra.items() if k not in PROXY_VARIABLES})
    return env


@pytest.fixture
def served_hub(hub_server, monkeypatch: pytest.MonkeyPatch):
    """huggingface_hub in this process online and pointed at ``hub_server``, faults off.

    The suite runs with HF_HUB_OFFLINE=1 and huggingface_hub read its endpoint at import,
    so both are patched. As a safety net every proxy variable names a dead port on
    127.0.0.1 and only 127.0.0.1 bypasses it: a request meant for any other host fails
    here instead of leaving the machine.
    """
    from huggingface_hub import HfFileSystem, constants
    from huggingface_hub.utils import close_session

    monkeypatch.setenv("HF_ENDPOINT", hub_server.url)
    monkeypatch.setenv("WORKBENCH_HUB_RETRY_DELAY", "0.01")  # as hub_env
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setattr(constants, "ENDPOINT", hub_server.url)
    monkeypatch.setattr(
        constants,
        "HUGGINGFACE_CO_URL_TEMPLATE",
        hub_server.url + "/{repo_id}/resolve/{revision}/{filename}",
    )
    for name in PROXY_VARIABLES[:-1]:
        monkeypatch.setenv(name, DEAD_PROXY)
        monkeypatch.delenv(name.lower(), raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    monkeypatch.delenv("no_proxy", raising=False)
    close_session()  # the next request builds a client that reads these variables
    HfFileSystem.clear_instance_cache()
    hub_server.reset()
    yield hub_server
    hub_server.reset()
    close_session()
    HfFileSystem.clear_instance_cache()


def closed_port() -> int:
    """A port on 127.0.0.1 that nothing listens on."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="session")
def family_models(tmp_path_factory: pytest.TempPathFactory, hsk_pairs) -> dict[str, Path]:
    """A tiny random model of each family in tests/family_models.py (NLLB, M2M100,
    mBART-50, T5), saved as its Hub repo is laid out; family -> folder. Built once (about
    a second for all four); nothing may write into them."""
    from tests.family_models import FAMILIES, build_family_model

    pairs = hsk_pairs[:200]
    sources, targets = [p.source for p in pairs], [p.target for p in pairs]
    base = tmp_path_factory.mktemp("families")
    return {f: build_family_model(f, base / f, sources, targets) for f in FAMILIES}


@pytest.fixture(scope="session")
def causal_models(tmp_path_factory: pytest.TempPathFactory, hsk_pairs) -> dict[str, Path]:
    """A tiny random decoder-only model of each family in tests/causal_models.py (Qwen3,
    ALMA's Llama, Gemma 3, Seed-X's Mistral), saved as its Hub repo is laid out; family ->
    folder. Built once (well under a second for all four); nothing may write into them."""
    from tests.causal_models import CAUSAL_FAMILIES, build_causal_model

    pairs = hsk_pairs[:200]
    sources, targets = [p.source for p in pairs], [p.target for p in pairs]
    base = tmp_path_factory.mktemp("causal")
    return {f: build_causal_model(f, base / f, sources, targets) for f in CAUSAL_FAMILIES}
