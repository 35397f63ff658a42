"""Retrying Hub requests that fail in ways that pass (workbench/core/data/hub_retries.py,
retry_policy.py).

Against the Hub look-alike on 127.0.0.1 (tests/helpers/hub_server.py) made to misbehave as a
loaded public mirror does: every n-th file request answered 429 or 503, bodies cut off
mid-way, answers late enough for a read timeout. The real ``HfFileSystem``,
``HfApi`` and transformers' ``from_pretrained`` make the requests; the retries are 10 ms
apart (``WORKBENCH_HUB_RETRY_DELAY``, set by the ``served_hub`` fixture).
"""

from __future__ import annotations

import collections
from dataclasses import replace
from email.utils import formatdate

import pytest

from tests.helpers.hub_repos import OPUS_MODEL, WMT_DATASET
from workbench.core.data.hub_requests import ensure_hub_reachable
from workbench.core.data.hub_retries import reporting_retries
from workbench.core.data.hub_sample import load_hub_sample
from workbench.core.data.retry_policy import RetryPolicy, retry_after
from workbench.core.data.sample_cache import find_cached_sample
from workbench.core.data.sample_plan import HubSample
from workbench.core.events import HubRetry, SampleProgress
from workbench.errors import HubUnreachableError, WorkbenchError

#: 200 pairs of the look-alike's WMT19: 3 files, 9 row groups of 10 rows from each.
SAMPLE = HubSample(WMT_DATASET, "zh-en", "en", "zh", n=200, seed=0)


def file_requests(server) -> list:
    """The look-alike's ``/resolve/`` requests (model and dataset files)."""
    return [r for r in server.requests() if "/resolve/" in r.path]


def draw(server, tmp_path, name: str, **kwargs):
    """The sample drawn into its own cache folder, and every event it sent."""
    events: list = []
    with reporting_retries(events.append):
        rows = load_hub_sample(SAMPLE, events.append, cache_dir=tmp_path / name, **kwargs)
    return rows, events


@pytest.fixture
def clean_sample(served_hub, tmp_path):
    """The sample drawn from a healthy look-alike, to compare with."""
    rows, _ = draw(served_hub, tmp_path, "clean")
    served_hub.reset()
    return rows


# --- the policy ----------------------------------------------------------------------------


def test_the_wait_doubles_with_jitter_and_honours_retry_after():
    policy = RetryPolicy(tries=6, base_delay=1.0)
    for attempt, ceiling in [(1, 1.0), (2, 2.0), (3, 4.0), (6, 30.0)]:  # 32 capped to 30
        waits = [policy.wait(attempt) for _ in range(200)]
        assert ceiling / 2 <= min(waits)
        assert max(waits) <= ceiling
        assert len(set(waits)) > 100  # jittered: threads hit by one burst do not retry in step
    assert policy.wait(1, retry_after=7.0) == 7.0  # a minimum, not a suggestion


def test_retry_after_is_read_in_seconds_as_a_date_or_from_ratelimit():
    assert retry_after({"Retry-After": "1"}) == 1.0
    later = retry_after({"Retry-After": formatdate(usegmt=True)})
    assert later is not None
    assert 0 <= later < 2
    assert retry_after({"RateLimit": '"api";r=0;t=55'}) == 55.0  # huggingface.co's header
    assert retry_after({"RateLimit": '"api";r=3;t=55'}) is None  # requests left: no wait
    assert retry_after({}) is None


def test_a_bad_setting_is_one_line_with_the_variable(monkeypatch):
    monkeypatch.setenv("WORKBENCH_HUB_TRIES", "zero")
    with pytest.raises(WorkbenchError, match="WORKBENCH_HUB_TRIES must be a whole number") as info:
        RetryPolicy.from_environment()
    assert "'zero'" in str(info.value)
    assert "default 6" in str(info.value)
    monkeypatch.setenv("WORKBENCH_HUB_TRIES", "3")
    monkeypatch.setenv("WORKBENCH_HUB_RETRY_DELAY", "-1")
    with pytest.raises(WorkbenchError, match="WORKBENCH_HUB_RETRY_DELAY"):
        RetryPolicy.from_environment()


# --- a mirror under load: the run goes on ---------------------------------------------------


def test_429_and_503_are_retried_and_the_sample_is_the_same(served_hub, tmp_path, clean_sample):
    served_hub.faults.every = {4: 429, 7: 503}
    served_hub.faults.retry_after = "0"
    rows, events = draw(served_hub, tmp_path, "loaded")
    assert rows == clean_sample
    faulted = [r for r in file_requests(served_hub) if r.status in (429, 503)]
    assert {r.status for r in faulted} == {429, 503}
    # Footers and row groups alike; each failure is one retry, told as an event.
    retries = [e for e in events if isinstance(e, HubRetry)]
    assert sorted(e.reason for e in retries) == sorted(f"HTTP {r.status}" for r in faulted)
    assert all(e.tries == 6 and e.url.startswith(served_hub.url) for e in retries)
    progress = [e for e in events if isinstance(e, SampleProgress)]
    last = progress[-1]
    assert last.row_groups == last.row_groups_total == 27
    assert last.bytes == last.bytes_total > 0
    assert [e.row_groups for e in progress] == sorted(e.row_groups for e in progress)


def test_retry_after_is_waited_out(served_hub, tmp_path):
    served_hub.faults.every = {5: 429}
    served_hub.faults.retry_after = "1"
    events: list = []
    with reporting_retries(events.append):
        load_hub_sample(replace(SAMPLE, n=30), cache_dir=tmp_path)
    waits = [e.wait_seconds for e in events if e.reason == "HTTP 429"]
    assert waits
    assert min(waits) >= 1.0  # not the 10 ms the backoff would choose


def test_bodies_cut_off_mid_way_are_fetched_again(served_hub, tmp_path, clean_sample):
    served_hub.faults.cut_every = 3
    rows, events = draw(served_hub, tmp_path, "cut")
    assert rows == clean_sample
    cut = [r for r in file_requests(served_hub) if r.status < 0]
    assert cut
    retries = [e for e in events if isinstance(e, HubRetry)]
    assert len(retries) == len(cut)
    assert all(
        e.reason.startswith(
            ("connection dropped, RemoteProtocolError", "connection dropped, ReadError")
        )
        for e in retries
    )


def test_a_read_timeout_is_retried(served_hub, tmp_path, monkeypatch, clean_sample):
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "HF_HUB_DOWNLOAD_TIMEOUT", 0.5)
    served_hub.faults.stall_every = 9
    served_hub.faults.stall_seconds = 1.5
    rows, events = draw(served_hub, tmp_path, "slow")
    assert rows == clean_sample
    assert any(
        isinstance(e, HubRetry) and e.reason.startswith("no answer in time, ReadTimeout")
        for e in events
    )


def test_the_model_downloads_through_429_and_503(served_hub, tmp_path, monkeypatch):
    """The run that stopped on one 503 of target.spm: transformers' download retries 429
    only, and the tokenizer's optional files must not be taken for missing on a 503."""
    from huggingface_hub import constants

    from workbench.core.model.load import load_model_and_tokenizer

    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hub"))
    served_hub.faults.every = {4: 429, 7: 503}
    served_hub.faults.retry_after = "0"
    events: list = []
    with reporting_retries(events.append):
        _, tokenizer = load_model_and_tokenizer(OPUS_MODEL)
    assert tokenizer("I like tea.").input_ids
    faulted = [r for r in file_requests(served_hub) if r.status in (429, 503)]
    assert any(r.method == "GET" and r.status == 503 for r in faulted)
    assert len([e for e in events if isinstance(e, HubRetry)]) == len(faulted)


# --- when the tries run out: one line, no more requests than the tries ---------------------


def test_a_server_error_on_every_try_is_one_line_with_the_url_and_the_tries(
    served_hub, tmp_path, monkeypatch
):
    monkeypatch.setenv("WORKBENCH_HUB_TRIES", "3")
    served_hub.faults.every = {1: 503}  # every file request
    with pytest.raises(WorkbenchError) as info:
        load_hub_sample(SAMPLE, cache_dir=tmp_path)
    message = str(info.value)
    assert info.value.exit_code == 2
    assert "\n" not in message
    assert message.startswith("the Hub's server failed on dataset 'wmt/wmt19' config 'zh-en' (")
    assert f"{served_hub.url}/datasets/wmt/wmt19/resolve/" in message
    assert "answered HTTP 503, a server error, to all 3 tries" in message
    assert "another mirror" in message
    # huggingface_hub's own retries (HfFileSystem's http_backoff) did not multiply ours:
    # the file the message names had exactly the 3 tries, and no file had more. The shards
    # are read on several threads and the first to run out of tries stops the others, so
    # a shard still in flight may have had fewer.
    per_url = collections.Counter(r.path for r in file_requests(served_hub))
    named = [path for path in per_url if f"{served_hub.url}{path}" in message]
    tries = [(r.method, r.path[-40:], r.status, r.range) for r in served_hub.requests()]
    assert len(named) == 1, tries
    assert per_url[named[0]] == 3, tries
    assert max(per_url.values()) == 3, tries
    assert find_cached_sample(tmp_path, SAMPLE) is None  # nothing looks complete


def test_a_rate_limit_on_every_try_says_to_wait_or_use_another_mirror(
    served_hub, tmp_path, monkeypatch
):
    monkeypatch.setenv("WORKBENCH_HUB_TRIES", "2")
    served_hub.faults.every = {1: 429}
    served_hub.faults.retry_after = "0"
    with pytest.raises(WorkbenchError) as info:
        load_hub_sample(SAMPLE, cache_dir=tmp_path)
    message = str(info.value)
    assert message.startswith(f"the mirror {served_hub.url} is rate-limiting the requests for")
    for needle in ("answered HTTP 429 Too Many Requests to all 2 tries", "wait a few minutes"):
        assert needle in message
    assert "another mirror" in message
    assert "check that HF_ENDPOINT" not in message


def test_a_retry_after_beyond_the_time_allowed_gives_up_at_once(served_hub, tmp_path):
    served_hub.faults.every = {1: 429}
    served_hub.faults.retry_after = "3600"
    with pytest.raises(WorkbenchError) as info:
        load_hub_sample(SAMPLE, cache_dir=tmp_path)
    assert "to its only try in" in str(info.value)
    assert "it last asked to wait 3600 s" in str(info.value)
    per_url = collections.Counter(r.path for r in file_requests(served_hub))
    assert set(per_url.values()) == {1}


def test_the_model_stops_after_its_tries_with_the_models_name(served_hub, tmp_path, monkeypatch):
    from huggingface_hub import constants

    from workbench.core.model.load import load_model_and_tokenizer

    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hub"))
    monkeypatch.setenv("WORKBENCH_HUB_TRIES", "3")
    served_hub.faults.every = {1: 503}
    with pytest.raises(WorkbenchError) as info:
        load_model_and_tokenizer(OPUS_MODEL)
    message = str(info.value)
    assert message.startswith(f"the Hub's server failed on model '{OPUS_MODEL}' (")
    assert "to all 3 tries" in message
    per_url = collections.Counter(r.path for r in file_requests(served_hub))
    assert set(per_url.values()) == {3}, [
        (r.method, r.path[-30:], r.status) for r in served_hub.requests()
    ]  # neither huggingface_hub nor transformers retried it


# --- the reachability check ----------------------------------------------------------------


def test_the_check_takes_a_server_error_for_an_answer(served_hub):
    served_hub.faults.status = 503
    ensure_hub_reachable("model 'x'")  # the requests after it say (and retry) the 503
    assert [r.path for r in served_hub.requests() if r.path == "/"] == ["/"]


def test_the_check_retries_dropped_connections_then_says_so(served_hub, monkeypatch):
    monkeypatch.setenv("WORKBENCH_HUB_TRIES", "3")
    served_hub.faults.drop_after = 0  # a mirror that closes every connection unanswered
    with pytest.raises(HubUnreachableError) as info:
        ensure_hub_reachable("model 'x'")
    message = str(info.value)
    assert info.value.exit_code == 3
    assert message.startswith(
        f"cannot fetch model 'x': the connection to 127.0.0.1:{served_hub.port}"
    )
    assert "was dropped or timed out on all 3 tries in" in message
    assert f"({served_hub.url}/; last: connection dropped, RemoteProtocolError: Server" in message
    assert [r.status for r in served_hub.requests() if r.path == "/"] == [0, 0, 0]


def test_a_429_that_was_not_retried_still_says_rate_limiting(monkeypatch):
    from workbench.core.data.hub import http_error

    monkeypatch.delenv("HF_ENDPOINT", raising=False)
    message = str(http_error("model 'x'", 429, "https://huggingface.co/api/models/x"))
    assert message.startswith("the Hub is rate-limiting the requests for model 'x'")
    assert "wait a few minutes" in message
    assert "check that HF_ENDPOINT" not in message


def test_a_half_filled_model_cache_fetches_what_it_lacks(served_hub, tmp_path, monkeypatch):
    """A download stopped after config.json leaves a cache whose tokenizer cannot load
    (transformers raises TypeError on the missing vocab.json): the next run fetches the
    missing files instead of failing with a traceback."""
    from huggingface_hub import constants

    from workbench.core.model.load import load_tokenizer_and_config

    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hub"))
    load_tokenizer_and_config(OPUS_MODEL)
    (vocab,) = (tmp_path / "hub").glob("models--*/snapshots/*/vocab.json")
    vocab.unlink()
    served_hub.reset()
    tokenizer, config = load_tokenizer_and_config(OPUS_MODEL)
    assert tokenizer("I like tea.").input_ids
    assert config.model_type == "marian"
    assert any(r.path.endswith("/vocab.json") for r in file_requests(served_hub))
