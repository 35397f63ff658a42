"""The retries under every Hub request: one loop, in the ``send`` of huggingface_hub's
shared HTTP client.

Public mirrors answer some requests with 429 or 503 under load and drop connections, and
a 50,000-pair WMT19 sample is ~6,300 requests: without retries one bad answer ends the
run. huggingface_hub (2.4, read from its source) retries unevenly: ``HfFileSystem``'s
range reads and listings through ``http_backoff`` (5 retries 1-8 s apart, fixed, any
``Retry-After`` waited out however long); a download's ``GET`` on 408 and 429 and a few
connection errors, not on 5xx (a run stopped on one 503 of ``target.spm``);
``HfApi.dataset_info`` and the check not at all.

So every request is retried in one place under all of them: the ``send`` of
huggingface_hub's shared HTTP client (installed by the reachability check,
:func:`~workbench.core.data.hub_requests.ensure_hub_reachable`, with
``set_client_factory``), behind a proxy too. HTTP 429 and 5xx, a dropped connection and a
read timeout are retried with exponential backoff and jitter, ``Retry-After`` honoured,
bounded in tries and in total time (:mod:`~workbench.core.data.retry_policy`, from the
environment, so tests make it fast). A refused
connection is not retried: nothing listens there. When the tries run out,
:class:`~workbench.core.data.hub.HubRetriesExhausted` is raised: neither huggingface_hub's
retry loops nor transformers' "optional file" handling catch it, so tries never multiply
and a failing server is never taken for a missing file. A body streamed to the caller (a
model's weights) can still break after ``send`` returned: huggingface_hub resumes some of
those, and :func:`retrying` retries the whole load for the rest (the download resumes
from its ``.incomplete`` file).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, TypeVar

from workbench.core.data.hub import (
    HubRetriesExhausted,
    exception_chain,
    hub_endpoint,
    one_line,
    request_url,
    retries_exhausted,
)
from workbench.core.data.retry_policy import RetryPolicy, retried_status, retry_after
from workbench.core.events import EventSink, HubRetry
from workbench.errors import without_passwords

T = TypeVar("T")

#: httpx exception names (httpx and huggingface_hub 2.x's httpx2 alike) of a request that
#: reached the server and then broke: a connection reset or closed early, a read timeout.
#: ``ConnectError``/``ConnectTimeout``/``ProxyError`` are not here: nothing answered.
DROPPED = (
    "ReadError",
    "WriteError",
    "RemoteProtocolError",
    "ReadTimeout",
    "WriteTimeout",
    "PoolTimeout",
)

#: Only requests that may be sent twice are retried (the Hub's reads all are).
IDEMPOTENT = ("GET", "HEAD", "OPTIONS")

#: A request extension that makes any HTTP answer final: the reachability check asks
#: whether anything answers, and a 503 is an answer (the requests after it retry).
ANY_ANSWER = "workbench_any_answer"


# --- who hears about retries -------------------------------------------------------------

_sinks: list[EventSink] = []
_sinks_lock = threading.Lock()


@contextmanager
def reporting_retries(sink: EventSink | None) -> Iterator[None]:
    """While inside, every retry of any thread is sent to ``sink`` as a :class:`HubRetry`.

    Process-wide, not per thread: the retries happen on threads that huggingface_hub and
    the sample reader start, which a context variable would not reach.
    """
    if sink is None:
        yield
        return
    with _sinks_lock:
        _sinks.append(sink)
    try:
        yield
    finally:
        with _sinks_lock:
            _sinks.remove(sink)


def _report(event: HubRetry) -> None:
    with _sinks_lock:
        sinks = list(_sinks)
    for sink in sinks:
        sink(event)


# --- the retry loop ----------------------------------------------------------------------


def dropped(err: BaseException) -> bool:
    """True when ``err`` says a request reached the server and then broke."""
    return any(c.__name__ in DROPPED for c in type(err).__mro__)


def _dropped_reason(err: BaseException) -> str:
    """``connection dropped, ReadError: ...`` or ``no answer in time, ReadTimeout: ...``."""
    name = type(err).__name__
    kind = "no answer in time" if "Timeout" in name else "connection dropped"
    return f"{kind}, {name}: {one_line(str(err) or 'no detail', 80)}"


@dataclass(frozen=True)
class _Failure:
    status: int | None  # None: no complete answer
    reason: str
    retry_after: float | None = None


#: Within :func:`retrying` on this thread, the error that ended a request's tries.
#: transformers answers a failed ``config.json`` by asking for it again another way (and
#: wraps the first error in ``OSError``); every later request of the same load fails at
#: once with the same error, so the tries are the policy's, not a multiple of them.
_load = threading.local()


class RetriesAbandoned(Exception):
    """A request stopped retrying because the work it served was stopped (another
    thread's request failed for good, or Ctrl-C): not a failure of its own."""


#: The stop flags of work in progress, by the URL prefix of the requests it makes.
_stops: dict[int, tuple[str, threading.Event]] = {}
_stops_lock = threading.Lock()


@contextmanager
def stopping_with(stop: threading.Event, url_prefix: str | None) -> Iterator[None]:
    """While inside, requests for URLs under ``url_prefix`` stop retrying (and waiting to)
    once ``stop`` is set, whichever thread makes them (pyarrow reads on threads of its
    own): the threads reading one sample neither go on trying a dead mirror after one has
    given up, nor hold a Ctrl-C for their remaining tries."""
    if not url_prefix:
        yield
        return
    key = id(stop)
    with _stops_lock:
        _stops[key] = (without_passwords(url_prefix), stop)
    try:
        yield
    finally:
        with _stops_lock:
            _stops.pop(key, None)


def _stop_for(url: str) -> threading.Event | None:
    with _stops_lock:
        return next((stop for prefix, stop in _stops.values() if url.startswith(prefix)), None)


class _Tries:
    """The tries of one request under one policy: when to wait, when to give up."""

    def __init__(self, url: str) -> None:
        self.url = without_passwords(url)
        self.policy = RetryPolicy.from_environment()
        self.start = time.monotonic()
        self.attempt = 0

    def failed(self, failure: _Failure) -> None:
        """Wait before the next try, or raise :class:`HubRetriesExhausted` (or
        :class:`RetriesAbandoned` once the work is stopped)."""
        stop = _stop_for(self.url)
        if stop is not None and stop.is_set():
            raise RetriesAbandoned(self.url)
        elapsed = time.monotonic() - self.start
        wait = self.policy.wait(self.attempt, failure.retry_after)
        if self.attempt >= self.policy.tries or elapsed + wait > self.policy.total_seconds:
            error = retries_exhausted(
                self.url, failure.status, failure.reason, self.attempt, elapsed, failure.retry_after
            )
            if getattr(_load, "active", False):
                _load.gave_up = error
            raise error
        _report(HubRetry(self.url, failure.reason, self.attempt, self.policy.tries, wait))
        if stop is None:
            time.sleep(wait)
        elif stop.wait(wait):
            raise RetriesAbandoned(self.url)


def _with_timeouts(request: Any) -> None:
    """Give a request that has none huggingface_hub's download timeout: ``HfApi`` calls
    such as ``dataset_info`` send none, and a mirror that accepts a connection and never
    answers would then hang the run instead of timing out (and being retried)."""
    from huggingface_hub import constants

    timeout = request.extensions.get("timeout")
    if isinstance(timeout, dict) and None in timeout.values():
        seconds = float(constants.HF_HUB_DOWNLOAD_TIMEOUT)
        request.extensions["timeout"] = {
            key: seconds if value is None else value for key, value in timeout.items()
        }


def _retrying_send(send: Callable[..., Any]) -> Callable[..., Any]:
    """``Client.send`` that tries again on the failures that usually pass."""

    def retrying_send(request: Any, **kwargs: Any) -> Any:
        if request.method not in IDEMPOTENT:
            return send(request, **kwargs)
        gave_up = getattr(_load, "gave_up", None)
        if gave_up is not None:
            raise gave_up
        _with_timeouts(request)
        any_answer = bool(request.extensions.get(ANY_ANSWER))
        tries = _Tries(str(request.url))
        while True:
            tries.attempt += 1
            try:
                # Without stream=True, send reads the whole body: a connection cut mid-body
                # is raised here and retried like one cut before the answer.
                response = send(request, **kwargs)
            except Exception as err:
                if not dropped(err):
                    raise
                failure = _Failure(None, _dropped_reason(err))
            else:
                status = int(response.status_code)
                if any_answer or not retried_status(status):
                    return response
                failure = _Failure(status, f"HTTP {status}", retry_after(response.headers))
                response.close()
            tries.failed(failure)

    return retrying_send


class RetryingClients:
    """A client factory for huggingface_hub: its own clients, their ``send`` retrying."""

    def __init__(self, make: Callable[[], Any]) -> None:
        self.make = make

    def __call__(self) -> Any:
        """A new client whose ``send`` retries, made when huggingface_hub asks for one."""
        client = self.make()
        client.send = _retrying_send(client.send)
        return client


_install_lock = threading.Lock()


def install_retries() -> None:
    """Make huggingface_hub's shared client retry (once; later calls do nothing).

    It wraps whichever factory is set, so a user's own (certificates, a transport) stays.
    """
    from huggingface_hub.utils import _http, set_client_factory

    RetryPolicy.from_environment()  # a bad setting is one line now, not mid-download
    with _install_lock:
        # The factory in use is private; 1.x and 2.x both name it so, and the default's
        # public name is the fallback.
        current = getattr(_http, "_GLOBAL_CLIENT_FACTORY", None) or _http.default_client_factory
        if not isinstance(current, RetryingClients):
            set_client_factory(RetryingClients(current))


def retrying(call: Callable[[], T]) -> T:
    """``call()``, tried again while it fails on a streamed body cut off mid-way (what
    ``send`` cannot retry: it returned before the body was read). huggingface_hub keeps
    the part that arrived and resumes from it."""
    tries = _Tries(hub_endpoint())
    _load.active, _load.gave_up = True, None
    try:
        while True:
            tries.attempt += 1
            try:
                return call()
            except HubRetriesExhausted:
                raise
            except Exception as err:
                if _load.gave_up is not None:
                    raise
                cause = next((e for e in exception_chain(err) if dropped(e)), None)
                if cause is None:
                    raise
                tries.url = without_passwords(request_url(cause) or tries.url)
                tries.failed(_Failure(None, _dropped_reason(cause)))
    finally:
        _load.active, _load.gave_up = False, None
