"""The job a user with the Hub runs, through a Hub look-alike on 127.0.0.1.

The tests that train (or build), split from tests/cli/test_hub.py, whose other tests do not.
Each command with the look-alike as its Hub runs in a new interpreter: the Hub's libraries
read its address, the offline switch and the cache folders at import.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from textual.widgets import Input

from tests.helpers.cli import run_cli, start_cli
from tests.helpers.hub import HUB_TRAIN, error_line, hub_env, label_ids, spied_cli
from tests.helpers.hub_repos import OPUS_MODEL, WMT_DATASET
from tests.helpers.tui import wait_for


def repo_requests(server) -> list:
    """Requests for a model or dataset (not the client's own housekeeping)."""
    return [
        r
        for r in server.requests()
        if "/resolve/" in r.path or r.path.startswith(("/api/models/", "/api/datasets/"))
    ]


@pytest.fixture(scope="module")
def first_run(hub_server, tmp_path_factory: pytest.TempPathFactory):
    """The first online run: downloads the model, samples the dataset (caches under home)."""
    home = tmp_path_factory.mktemp("online")
    hub_server.reset()
    proc = run_cli(*HUB_TRAIN, cwd=home, env=hub_env(hub_server, home))
    return home, proc, hub_server.requests()


def test_first_run_downloads_the_model_and_samples_the_dataset(first_run, hub_server):
    home, proc, log = first_run
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = proc.stdout
    for split in ("validation", "test (newstest2018, 24)"):
        assert f"before fine-tuning, {split}" in out
        assert f"after fine-tuning,  {split}" in out
    assert "[done]" in out
    sha = hub_server.repos[("dataset", WMT_DATASET)].sha
    summary = json.loads(
        next((home / "translation_output" / "runs").glob("*/summary.json")).read_text(
            encoding="utf-8"
        )
    )
    assert summary["data_revision"] == sha
    # The tiny random model is far from what opus-mt-en-zh's authors published: said beside
    # "before", with the cause this run shows (8 new tokens) and those it rules out.
    before_test = next(line for line in out.splitlines() if "before fine-tuning, test" in line)
    assert before_test.endswith(" · published 22.0 (Helsinki-NLP opus-2020-07-17, newstest2018)")
    warning = out.split(before_test + "\n", 1)[1].splitlines()[0]
    assert warning.startswith("  warning: before BLEU ")
    assert "below the published 22.0" in warning
    assert "likely cause: " in warning
    assert "--max-new-tokens" in warning
    assert "Ruled out: the BLEU tokenizer (zh, as published), the Marian label (>>cmn_Hans<<)" in (
        warning
    )
    baseline = summary["baseline"]
    assert (baseline["bleu"], baseline["source"], baseline["test_set"]) == (
        22.0,
        "Helsinki-NLP opus-2020-07-17",
        "newstest2018",
    )
    assert baseline["before_bleu"] == summary["before"]["test"]["bleu"]
    assert f"  warning: {baseline['warning']}" == warning
    paths = {r.path for r in log}
    assert "/" in paths  # the reachability check
    assert any("/tree/" in path and "cursor=" in path for path in paths)  # pages followed
    for name in (
        "config.json",
        "model.safetensors",
        "source.spm",
        "target.spm",
        "vocab.json",
        "generation_config.json",
    ):
        assert any(
            r.method == "GET" and r.path.endswith(f"/{name}") and r.status == 200 for r in log
        ), name
    # Optional files were probed and told "no such file", not "no such repo".
    assert any(r.path.endswith("/tokenizer.json") and r.status == 404 for r in log)
    data = [r for r in log if r.path.startswith("/datasets/")]
    assert data
    assert all(f"/datasets/{WMT_DATASET}/resolve/{sha}/zh-en/" in r.path for r in data)
    assert all(r.range and r.status == 206 for r in data)  # range reads, all honoured
    assert any("validation-00000-of-00001.parquet" in r.path for r in data)


def test_a_second_run_asks_the_hub_nothing_and_runs_offline(first_run, hub_server):
    home, first, _ = first_run
    assert first.returncode == 0
    hub_server.reset()
    again = run_cli(*HUB_TRAIN, cwd=home, env=hub_env(hub_server, home))
    assert again.returncode == 0, again.stderr[-3000:]
    assert repo_requests(hub_server) == []
    # Offline, and scored with 13a as a student might: the warning names the tokenizer first.
    offline = run_cli(
        *HUB_TRAIN,
        "--bleu-tokenize",
        "13a",
        cwd=home,
        env=hub_env(hub_server, home, HF_HUB_OFFLINE="1"),
    )
    assert offline.returncode == 0, offline.stderr[-3000:]
    assert hub_server.requests() == []
    assert offline.stdout.count("before fine-tuning,") == 2
    assert (
        "likely causes, most likely first: the BLEU tokenizer is 13a, the published score used "
        "zh (13a scores unsegmented Chinese near 0): --bleu-tokenize zh; "
    ) in offline.stdout


def test_translate_and_interact_give_the_hub_model_its_presets_label(first_run, hub_server):
    home, *_ = first_run
    hans = label_ids(hub_server)[">>cmn_Hans<<"]
    env = hub_env(hub_server, home, HF_HUB_OFFLINE="1")  # downloaded by the first run
    proc, first = spied_cli(
        "translate", "--model", OPUS_MODEL, "I like tea.", "Hello.", cwd=home, env=env
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert len(proc.stdout.splitlines()) == 2
    assert first
    assert set(first) == {hans}
    proc, first = spied_cli(
        "interact", "--model", OPUS_MODEL, cwd=home, env=env, input="I like tea.\n:q\n"
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "zh> " in proc.stdout
    assert first
    assert set(first) == {hans}


def test_attention_on_the_base_model_uses_the_label(first_run, hub_server):
    home, *_ = first_run
    hans = label_ids(hub_server)[">>cmn_Hans<<"]
    proc, first = spied_cli(
        "attention",
        "--model",
        OPUS_MODEL,
        "--width",
        "200",
        "--max-new-tokens",
        "4",
        "I like tea.",
        cwd=home,
        env=hub_env(hub_server, home, HF_HUB_OFFLINE="1"),
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert ">>cmn_Han" in proc.stdout.splitlines()[3]  # the first column (cut to fit)
    assert first
    assert set(first) == {hans}


@pytest.fixture
def cached_hub_model(first_run, monkeypatch: pytest.MonkeyPatch):
    """This process loads the first run's downloaded model from its cache (offline)."""
    from huggingface_hub import constants

    home, *_ = first_run
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(home / "hf" / "hub"))
    monkeypatch.setenv("WORKBENCH_CACHE", str(home / "sample-cache"))
    return home


@pytest.fixture
def generated(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """First input id of every sequence the transformers backend generates from."""
    from workbench.core.translate.backend import TransformersBackend

    first: list[int] = []
    real = TransformersBackend.generate_ids

    def spy(self, sources, options, bound):
        first.extend(ids[0] for ids in sources)
        return real(self, sources, options, bound)

    monkeypatch.setattr(TransformersBackend, "generate_ids", spy)
    return first


def test_label_option_replaces_or_drops_the_label(cli, cached_hub_model, hub_server, generated):
    ids = label_ids(hub_server)
    translate = ("translate", "--model", OPUS_MODEL)
    assert cli(*translate, "--label", ">>cmn_Hant<<", "Tea.").returncode == 0
    assert generated == [ids[">>cmn_Hant<<"]]
    generated.clear()
    assert cli(*translate, "--label", "none", "Tea.").returncode == 0
    assert generated
    assert generated[0] not in ids.values()
    done = cli(*translate, "--label", ">>xyz<<", "Tea.")
    assert done.returncode == 2
    assert "'>>xyz<<' is not a single token" in done.stderr
    done = cli(*translate, "--label", "cmn", "Tea.")
    assert done.returncode == 2
    assert "known labels include: >>cmn_Hans<<, >>cmn_Hant<<" in done.stderr


async def test_tui_base_model_translates_with_the_runs_label(
    cached_hub_model, hub_server, generated, tmp_path
):
    from textual.widgets import DataTable, Select

    from workbench.core.config.build import build_config
    from workbench.tui.app import WorkbenchApp
    from workbench.tui.widgets.translate_pane import TranslatePane

    config = build_config(
        "opus-en-zh", overrides={"samples": 40, "output_dir": str(tmp_path / "out")}
    )
    app = WorkbenchApp(config)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("f4")
        await wait_for(pilot, lambda: bool(app.query(TranslatePane)))
        pane = app.query_one(TranslatePane)
        pane.query_one("#translate-model", Select).value = "base"
        pane.query_one("#translate-input", Input).value = "I like tea."
        pane.query_one("#translate-input", Input).focus()
        await pilot.press("enter")
        await wait_for(pilot, lambda: pane.pending == 0, what="translated")
        assert pane.query_one("#translate-history", DataTable).row_count == 1
    assert generated == [label_ids(hub_server)[">>cmn_Hans<<"]]


def with_the_model_cached(first_run, home: Path) -> None:
    """The first run's Hugging Face cache (the model) copied under ``home``: a run reads
    the model's tokenizer and config before its data, so a test of a failing sample
    download starts with the model in hand, as a user's second attempt would."""
    import shutil

    shutil.copytree(first_run[0] / "hf", home / "hf", symlinks=True)


def train_file_reads(log) -> list:
    """Answered reads of the sample's train files (footers and row groups)."""
    return [r for r in log if "/zh-en/train-" in r.path and r.status == 206]


def sample_progress(out: str) -> tuple[int, int, int]:
    """(row groups in hand, of how many, kept from an earlier try) of the last progress line."""
    import re

    found = re.findall(
        r"sample: (\d+)/(\d+) row groups, .*?(?:\((\d+) kept from an earlier try\))?$", out, re.M
    )
    assert found, out[-3000:]
    done, total, kept = found[-1]
    return int(done), int(total), int(kept or 0)


def test_train_finishes_against_a_mirror_under_load(hub_server, tmp_path):
    """Every 4th file request 429 (Retry-After: 1), every 7th 503: the sample's range reads,
    the test split and the model's files are all retried, and each retry is a line."""
    hub_server.reset()
    hub_server.faults.every = {4: 429, 7: 503}
    hub_server.faults.retry_after = "1"
    try:
        proc = run_cli(*HUB_TRAIN, cwd=tmp_path, env=hub_env(hub_server, tmp_path))
        log = hub_server.requests()
    finally:
        hub_server.reset()
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "[done]" in proc.stdout
    faulted = [r for r in log if r.status in (429, 503)]
    for kind in (f"/{OPUS_MODEL}/resolve/", f"/datasets/{WMT_DATASET}/resolve/"):
        assert {r.status for r in faulted if kind in r.path} == {429, 503}, kind
    retried = [line for line in proc.stdout.splitlines() if line.startswith("  hub: HTTP ")]
    assert len(retried) == len(faulted)
    assert any("HTTP 429 from" in line and "try 2 of 6" in line for line in retried)
    done, total, _ = sample_progress(proc.stdout)
    assert done == total > 0


def test_a_mirror_that_dies_half_way_then_a_healthy_one_fetches_only_the_rest(
    hub_server, tmp_path, first_run
):
    """With the retries' real delays (1 s, doubling): one line, exit 3, no traceback, no
    run folder. The same command on a healthy mirror then reads only the row groups that
    had not arrived, and draws the sample an uninterrupted run drew."""
    with_the_model_cached(first_run, tmp_path)
    hub_server.reset()
    hub_server.faults.drop_after = 3 + 3  # the sample's 3 footers and 3 row groups
    env = hub_env(hub_server, tmp_path, WORKBENCH_HUB_RETRY_DELAY="")
    try:
        # timeout: the "within 3 minutes" bound; it fails by raising, nothing is timed.
        failed = run_cli(*HUB_TRAIN, cwd=tmp_path, env=env, timeout=180)
        first = train_file_reads(hub_server.requests())
    finally:
        hub_server.reset()
    assert failed.returncode == 3, failed.stderr[-3000:]
    line = error_line(failed)
    assert "cannot fetch dataset 'wmt/wmt19' config 'zh-en': the connection to" in line
    assert "dropped or timed out on all 6 tries" in line
    assert "/datasets/wmt/wmt19/" in line
    assert "Traceback" not in failed.stderr
    assert not (tmp_path / "translation_output").exists()
    arrived = len(first) - sum(hub_server.is_footer_read(r) for r in first)
    assert arrived >= 3

    again = run_cli(*HUB_TRAIN, cwd=tmp_path, env=hub_env(hub_server, tmp_path))
    assert again.returncode == 0, again.stderr[-3000:]
    reads = train_file_reads(hub_server.requests())
    done, total, kept = sample_progress(again.stdout)
    assert done == total
    assert kept == arrived
    assert not any(hub_server.is_footer_read(r) for r in reads)
    assert len(reads) == total - arrived
    # The sample, row for row and in order, is the uninterrupted first run's.
    home, *_ = first_run
    name = "wmt--wmt19-zh-en-en-zh-n44-seed42-cap8@*.jsonl"  # 40 and 10% for cleaning
    resumed = next((tmp_path / "sample-cache" / "samples").glob(name))
    whole = next((home / "sample-cache" / "samples").glob(name))
    assert resumed.read_bytes() == whole.read_bytes()


def test_ctrl_c_twice_while_the_sample_is_read_stops_its_retries_and_the_rerun_resumes(
    hub_server, tmp_path, first_run
):
    """The sample's 3 reading threads wait on a mirror that stopped answering. The first
    Ctrl-C asks the run to stop after a training step, as always; the second aborts: no
    thread tries again (each held request is the only one of its thread), the command
    says "interrupted" (exit 130), and the rerun reads only the row groups that had not
    arrived."""
    import signal
    import threading
    import time

    with_the_model_cached(first_run, tmp_path)
    hub_server.reset()
    hub_server.faults.hang_after = 3 + 3  # the 3 footers and 3 row groups, then silence
    env = hub_env(hub_server, tmp_path, HF_HUB_DOWNLOAD_TIMEOUT="2")
    proc = start_cli(*HUB_TRAIN, cwd=tmp_path, env=env)
    out: list[str] = []
    reader = threading.Thread(target=lambda: out.extend(proc.stdout or []), daemon=True)
    reader.start()
    deadline = time.monotonic() + 120  # bounds on waiting, not measurements

    def wait_until(done) -> None:
        while not done():
            assert proc.poll() is None, "".join(out)
            assert time.monotonic() < deadline, "".join(out)
            time.sleep(0.05)

    try:
        wait_until(lambda: sum(r.status == 0 for r in hub_server.requests()) >= 3)
        proc.send_signal(signal.SIGINT)
        wait_until(lambda: any("press Ctrl-C again" in line for line in out))
        proc.send_signal(signal.SIGINT)
        err = proc.stderr.read() if proc.stderr else ""
        proc.wait(timeout=120)
        log = hub_server.requests()
    finally:
        proc.kill()
        hub_server.reset()
    assert proc.returncode == 130, err[-3000:]
    assert "workbench: interrupted" in err
    assert "Traceback" not in err
    assert sum(r.status == 0 for r in log) == 3  # held, timed out, not tried again
    arrived = len(train_file_reads(log)) - 3

    again = run_cli(*HUB_TRAIN, cwd=tmp_path, env=hub_env(hub_server, tmp_path))
    assert again.returncode == 0, again.stderr[-3000:]
    done, total, kept = sample_progress(again.stdout)
    assert kept == arrived >= 3
    assert done == total
    assert len(train_file_reads(hub_server.requests())) == total - arrived
