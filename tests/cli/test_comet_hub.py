"""COMET models come through the same Hub code as every model: the tests' Hub look-alike
(tests/helpers/hub_server.py) serves the fixture models under Unbabel's ids, with ``hparams.yaml``
naming an encoder repo by its Hub id, as the real ones name ``xlm-roberta-large``. Only
the COMET files and the encoder's config and tokenizer are fetched; a model fetched once
scores offline; a gated model is one line naming its licence page and ``HF_TOKEN``."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import torch
import yaml

from tests.helpers.cli import run_cli
from tests.helpers.hub import hub_env
from tests.helpers.paths import FIXTURES
from workbench.core.comet.scorer import load_scorer
from workbench.core.config.settings import DEFAULT_COMET, DEFAULT_QE
from workbench.errors import WorkbenchError

COMET_FIXTURES = FIXTURES / "comet"
SEGMENTS = json.loads((COMET_FIXTURES / "segments.json").read_text(encoding="utf-8"))
#: The encoder repo the served COMET models name, as COMET-22 names xlm-roberta-large.
ENCODER_ID = "FacebookAI/xlm-roberta-large"


def as_hub_repo(fixture: str, folder: Path) -> Path:
    """A fixture model copied, naming its encoder by Hub id in hparams.yaml and in the
    checkpoint's hyper_parameters (which unbabel-comet, and so the workbench, reads)."""
    shutil.copytree(COMET_FIXTURES / fixture, folder)
    hparams_path = folder / "hparams.yaml"
    hparams = yaml.safe_load(hparams_path.read_text(encoding="utf-8"))
    hparams["pretrained_model"] = ENCODER_ID
    hparams_path.write_text(yaml.safe_dump(hparams), encoding="utf-8")
    ckpt = folder / "checkpoints" / "model.ckpt"
    data = torch.load(ckpt, map_location="cpu", weights_only=False)
    data["hyper_parameters"] = {**dict(data["hyper_parameters"]), "pretrained_model": ENCODER_ID}
    torch.save(data, ckpt)
    return folder


@pytest.fixture(scope="module")
def comet_hub(hub_server, tmp_path_factory: pytest.TempPathFactory):
    """The shared Hub look-alike, serving COMET-22 and CometKiwi shaped fixtures and
    their encoder."""
    folder = tmp_path_factory.mktemp("comet_hub")
    hub_server.add_repo("model", ENCODER_ID, COMET_FIXTURES / "encoder")
    hub_server.add_repo(
        "model", DEFAULT_COMET, as_hub_repo("regression-mix-sparsemax", folder / "comet")
    )
    hub_server.add_repo("model", DEFAULT_QE, as_hub_repo("unified-kiwi", folder / "kiwi"))
    return hub_server


def test_comet_22_comes_from_the_hub_as_the_local_model_scores(
    comet_hub, served_hub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hub"))
    sources = [s["src"] for s in SEGMENTS]
    translations = [s["mt"] for s in SEGMENTS]
    references = [s["ref"] for s in SEGMENTS]
    served = load_scorer(DEFAULT_COMET, device="cpu").score(sources, translations, references)
    local = load_scorer(str(COMET_FIXTURES / "regression-mix-sparsemax"), device="cpu")
    assert served == pytest.approx(local.score(sources, translations, references), abs=1e-6)
    fetched = {  # each file's path in its repo, whichever revision it was asked at
        r.path.split("/resolve/", 1)[1].split("/", 1)[1]
        for r in comet_hub.requests()
        if r.status == 200 and "/resolve/" in r.path
    }
    assert {"hparams.yaml", "checkpoints/model.ckpt", "config.json", "tokenizer.json"} <= fetched
    weights = [p for p in fetched if p.endswith((".safetensors", ".bin"))]
    assert weights == []  # the encoder's own weights are never fetched: COMET holds them


def test_a_fetched_model_scores_offline_and_a_gated_one_names_its_licence(
    comet_hub, tmp_path: Path
):
    """Through the CLI: once online into a fresh cache, then offline from that cache; then
    CometKiwi gated, which is one line naming its page and HF_TOKEN. A new interpreter
    each: the Hub's libraries read the endpoint, offline mode and cache at import."""
    (tmp_path / "hyp.zh").write_text("我喜欢喝茶。\n", encoding="utf-8")
    (tmp_path / "ref.zh").write_text("我爱喝茶。\n", encoding="utf-8")
    (tmp_path / "src.en").write_text("I like tea.\n", encoding="utf-8")
    files = ["--hyp", str(tmp_path / "hyp.zh"), "--src", str(tmp_path / "src.en")]
    args = ["score", *files, "--ref", str(tmp_path / "ref.zh"), "--comet", "--json"]
    env = hub_env(comet_hub, tmp_path)
    comet_hub.reset()
    online = run_cli(*args, env=env, timeout=300)
    assert online.returncode == 0, online.stderr
    offline = run_cli(*args, env={**env, "HF_HUB_OFFLINE": "1"}, timeout=300)
    assert offline.returncode == 0, offline.stderr
    assert json.loads(offline.stdout)["systems"] == json.loads(online.stdout)["systems"]

    comet_hub.faults.gated = {DEFAULT_QE}
    gated = run_cli("score", *files, "--qe", env={**env, "HF_TOKEN": "hf_secret123"}, timeout=300)
    comet_hub.reset()
    assert gated.returncode == 2, gated.stderr
    line = gated.stderr.strip().splitlines()[-1]
    assert line.startswith(f"workbench: error: COMET model '{DEFAULT_QE}' is gated")
    assert f"accept its licence at {comet_hub.url}/{DEFAULT_QE}" in line
    assert "set HF_TOKEN" in line
    assert "hf_secret123" not in gated.stderr + gated.stdout  # the token is never printed


def test_an_unknown_comet_id_is_one_line(comet_hub, served_hub, tmp_path, monkeypatch):
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hub"))
    with pytest.raises(WorkbenchError) as info:
        load_scorer("Unbabel/wmt22-comet-xx", device="cpu")
    message = str(info.value)
    assert "COMET model 'Unbabel/wmt22-comet-xx' was not found on the Hub" in message
    assert "\n" not in message
