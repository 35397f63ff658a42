"""The fixtures more than one test folder uses (tests/conftest.py imports them): the HSK
pairs, a pairs file, a tiny Marian model, the Hub look-alike, the tiny models of each
family and the tiny MetricX checkpoints, session fixtures built once per test process that
nothing may write into (the finished tiny run is e2e/'s); and ``fake_training``, the
stand-in trainer for one test."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.data import cleaned_hsk_pairs
from tests.helpers.hub import DEAD_PROXY, PROXY_VARIABLES
from tests.helpers.runs import tiny_config


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

    from workbench.core.model.scratch import build_scratch_model
    from workbench.core.records.model_settings import SETTINGS_FILE

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


@pytest.fixture(scope="session")
def metricx_models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The tiny MetricX-24 checkpoints of tests/fixtures/metricx, written from their
    recipe (tests/helpers/metricx_checkpoints.py), by variant; no tokenizer inside."""
    from tests.helpers.metricx_checkpoints import VARIANTS, write_checkpoint

    folder = tmp_path_factory.mktemp("metricx")
    return {name: write_checkpoint(folder / name, name) for name in VARIANTS}


@pytest.fixture(scope="session")
def hub_server(tmp_path_factory: pytest.TempPathFactory, hsk_pairs, family_models):
    """A Hub look-alike on 127.0.0.1 (tests/helpers/hub_server.py) serving a tiny model shaped like
    Helsinki-NLP/opus-mt-en-zh, a WMT19-shaped wmt/wmt19, the opus-en-de preset's pair
    (opus-mt-en-de, wmt/wmt14) and each family model under the id it imitates
    (tests/helpers/family_models.py HUB_IDS); tests reset its faults."""
    from tests.helpers.family_models import HUB_IDS
    from tests.helpers.hub_repos import (
        OPUS_DE_MODEL,
        OPUS_MODEL,
        WMT14_DATASET,
        WMT_DATASET,
        build_opus_like_model,
        build_wmt_like_dataset,
    )
    from tests.helpers.hub_server import HubServer

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


@pytest.fixture(scope="session")
def family_models(tmp_path_factory: pytest.TempPathFactory, hsk_pairs) -> dict[str, Path]:
    """A tiny random model of each family in tests/helpers/family_models.py (NLLB, M2M100,
    mBART-50, T5), saved as its Hub repo is laid out; family -> folder. Built once (about
    a second for all four); nothing may write into them."""
    from tests.helpers.family_models import FAMILIES, build_family_model

    pairs = hsk_pairs[:200]
    sources, targets = [p.source for p in pairs], [p.target for p in pairs]
    base = tmp_path_factory.mktemp("families")
    return {f: build_family_model(f, base / f, sources, targets) for f in FAMILIES}


@pytest.fixture(scope="session")
def causal_models(tmp_path_factory: pytest.TempPathFactory, hsk_pairs) -> dict[str, Path]:
    """A tiny random decoder-only model of each family in tests/helpers/causal_models.py (Qwen3,
    ALMA's Llama, Gemma 3, Seed-X's Mistral), saved as its Hub repo is laid out; family ->
    folder. Built once (well under a second for all four); nothing may write into them."""
    from tests.helpers.causal_models import CAUSAL_FAMILIES, build_causal_model

    pairs = hsk_pairs[:200]
    sources, targets = [p.source for p in pairs], [p.target for p in pairs]
    base = tmp_path_factory.mktemp("causal")
    return {f: build_causal_model(f, base / f, sources, targets) for f in CAUSAL_FAMILIES}


@pytest.fixture
def fake_training(monkeypatch: pytest.MonkeyPatch) -> None:
    """Runs trained in this process run tests/helpers/fake_training.py's stand-in (the CLI
    and the sweep import run_training from its module when a run starts, so patching the
    module's attribute reaches them)."""
    from tests.helpers.fake_training import fake_run_training
    from workbench.core.train import run_training as training_module

    monkeypatch.setattr(training_module, "run_training", fake_run_training)
