"""The job a user with the Hub runs, through a Hub look-alike on 127.0.0.1.

``workbench train --headless --preset opus-en-zh`` in a subprocess with ``HF_ENDPOINT`` at
the look-alike (tests/helpers/hub_server.py) and ``HF_HUB_OFFLINE`` unset (a new
interpreter: the Hub's libraries read both, and their cache folders, at import): the real
``from_pretrained`` of a Hub id, ``HfFileSystem`` listing and range reads, the caches, then
a rerun that asks the Hub nothing and one offline. Then the base model's language label in
every front end, the messages for a misbehaving server, and proxies. Nothing here leaves
127.0.0.1.
"""

from __future__ import annotations

import pytest

from tests.helpers.cli import run_cli
from tests.helpers.hub import HUB_TRAIN, closed_port, error_line, hub_env, label_ids, spied_cli
from tests.helpers.hub_proxy import ForwardingProxy
from tests.helpers.hub_repos import OPUS_MODEL, WMT_DATASET

# --- a server that misbehaves: each its own one-line message -----------------------------


@pytest.mark.parametrize(
    ("fault", "needles"),
    [
        (
            {"ignore_range": True},
            [
                "ignored a byte-range request",
                "/datasets/wmt/wmt19/resolve/",
                "HTTP 206",
                "honours Range requests",
            ],
        ),
        (
            {"truncate": {"train-00001-of-00003.parquet": 300}},
            ["train-00001-of-00003.parquet is damaged", "got 300", "shorter than", "re-sync"],
        ),
        (
            {"corrupt": {"train-00002-of-00003.parquet"}},
            ["train-00002-of-00003.parquet is damaged", "not a readable parquet file", "re-sync"],
        ),
        (
            {"status": 503},  # the model's tokenizer and config are read first
            [
                "/api/models/Helsinki-NLP/opus-mt-en-zh answered HTTP 503",
                "server error",
                "try again later",
            ],
        ),
        (
            {"gated": {WMT_DATASET}},
            [
                "dataset 'wmt/wmt19' config 'zh-en' is gated or private",
                "answered HTTP 401 GatedRepo",
                "hf auth login",
                "HF_TOKEN",
            ],
        ),
    ],
    ids=["range-ignored", "truncated", "corrupt", "5xx", "gated"],
)
def test_a_misbehaving_server_is_named_with_the_fix(hub_server, tmp_path, fault, needles):
    hub_server.reset()
    for name, value in fault.items():
        setattr(hub_server.faults, name, value)
    try:
        proc = run_cli(*HUB_TRAIN, cwd=tmp_path, env=hub_env(hub_server, tmp_path))
    finally:
        hub_server.reset()
    line = error_line(proc)
    assert proc.returncode == 2
    for needle in needles:
        assert needle in line, line
    assert "unreachable" not in line
    assert "cannot fetch" not in line
    assert not (tmp_path / "translation_output").exists()


# --- a public mirror under load, or one that dies half-way ---------------------------------


def test_a_missing_dataset_is_named_with_the_fix(hub_server, tmp_path):
    hub_server.reset()
    proc = run_cli(
        *HUB_TRAIN, "--data", "wmt/wmt99", cwd=tmp_path, env=hub_env(hub_server, tmp_path)
    )
    line = error_line(proc)
    assert proc.returncode == 2
    for needle in (
        "dataset 'wmt/wmt99' config 'zh-en' was not found on the Hub",
        f"{hub_server.url}/api/datasets/wmt/wmt99 answered HTTP 404 RepoNotFound",
        "--data",
    ):
        assert needle in line, line


def test_a_missing_or_gated_model_is_named_with_the_fix(served_hub, tmp_path, monkeypatch):
    """transformers wraps the Hub's typed errors in OSError: the message still names them."""
    from huggingface_hub import constants

    from workbench.core.model.load import load_model_and_tokenizer
    from workbench.errors import WorkbenchError

    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hub"))
    with pytest.raises(WorkbenchError) as info:
        load_model_and_tokenizer("Helsinki-NLP/opus-mt-en-xx")
    message = str(info.value)
    assert "model 'Helsinki-NLP/opus-mt-en-xx' was not found on the Hub" in message
    assert "answered HTTP 404 RepoNotFound" in message
    assert "check the id" in message
    served_hub.faults.gated = {OPUS_MODEL}
    with pytest.raises(WorkbenchError) as info:
        load_model_and_tokenizer(OPUS_MODEL)
    assert f"model '{OPUS_MODEL}' is gated or private" in str(info.value)
    assert "answered HTTP 401 GatedRepo" in str(info.value)


# --- proxies -------------------------------------------------------------------------------


def test_downloads_and_the_check_go_through_the_proxy(hub_server, tmp_path):
    """A fresh cache behind HTTP_PROXY: the model comes through the proxy, label and all."""
    proxy = ForwardingProxy()
    try:
        hub_server.reset()
        proc, first = spied_cli(
            "translate",
            "--model",
            OPUS_MODEL,
            "I like tea.",
            cwd=tmp_path,
            env=hub_env(hub_server, tmp_path, HTTP_PROXY=proxy.url, NO_PROXY=""),
        )
        forwarded = proxy.requests()
    finally:
        proxy.stop()
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert f"HEAD {hub_server.url}/" in forwarded  # the reachability check
    assert any(
        line.startswith("GET ") and line.endswith("/model.safetensors") for line in forwarded
    )
    assert len(forwarded) == len(hub_server.requests())  # everything came through it
    assert first == [label_ids(hub_server)[">>cmn_Hans<<"]]


def test_a_proxy_password_is_never_shown(served_hub, monkeypatch):
    """A proxy URL with credentials is named when it does not answer, its password hidden."""
    from huggingface_hub.utils import close_session

    from workbench.core.data.hub_requests import ensure_hub_reachable
    from workbench.errors import HubUnreachableError

    port = closed_port()
    monkeypatch.setenv("HTTP_PROXY", f"http://me:s3cret@127.0.0.1:{port}")
    monkeypatch.setenv("NO_PROXY", "")
    close_session()
    with pytest.raises(HubUnreachableError) as info:
        ensure_hub_reachable("model 'x'")
    message = str(info.value)
    assert f"the proxy http://me:***@127.0.0.1:{port} (from HTTP_PROXY)" in message
    assert "s3cret" not in message


#: A request huggingface_hub makes on its own, not part of what is tested.
HOUSEKEEPING = "/api/agent-harnesses"


def test_reachability_honours_the_proxy_variables(served_hub, monkeypatch):
    """The check takes huggingface_hub's route: a proxy that is down is named, NO_PROXY
    bypasses it, and a working proxy carries the request."""
    from huggingface_hub.utils import close_session

    from workbench.core.data.hub_requests import ensure_hub_reachable
    from workbench.errors import HubUnreachableError

    dead = f"http://127.0.0.1:{closed_port()}"
    monkeypatch.setenv("HTTP_PROXY", dead)
    monkeypatch.setenv("NO_PROXY", "")
    close_session()
    with pytest.raises(HubUnreachableError) as info:
        ensure_hub_reachable("model 'x'")
    message = str(info.value)
    assert (
        f"the proxy {dead} (from HTTP_PROXY) did not answer the request to "
        f"{served_hub.url}/" in message
    )
    assert "NO_PROXY" in message
    assert "\n" not in message

    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    close_session()
    served_hub.reset()
    ensure_hub_reachable("model 'x'")
    # huggingface_hub may also fetch its /api/agent-harnesses registry on a new session.
    assert [r.path for r in served_hub.requests() if r.path != HOUSEKEEPING] == ["/"]

    proxy = ForwardingProxy()
    try:
        monkeypatch.setenv("HTTP_PROXY", proxy.url)
        monkeypatch.setenv("NO_PROXY", "")
        close_session()
        ensure_hub_reachable("model 'x'")
        assert [r for r in proxy.requests() if not r.endswith(HOUSEKEEPING)] == [
            f"HEAD {served_hub.url}/"
        ]
    finally:
        proxy.stop()
        close_session()


def test_a_proxy_that_is_down_stops_train_at_once(hub_server, tmp_path):
    dead = f"http://127.0.0.1:{closed_port()}"
    proc = run_cli(
        *HUB_TRAIN, cwd=tmp_path, env=hub_env(hub_server, tmp_path, HTTP_PROXY=dead, NO_PROXY="")
    )
    assert proc.returncode == 3
    line = error_line(proc)
    # hub_env sets both spellings; like urllib and httpx, the lower case one is named.
    assert f"the proxy {dead} (from http_proxy) did not answer" in line
    assert "NO_PROXY" in line
