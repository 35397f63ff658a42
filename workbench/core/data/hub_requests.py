"""How every Hub request is made: a reachability check first, and retries under all.

Every Hub access in the core goes through :func:`ensure_hub_reachable` first, so that an
offline machine fails in about a second with the fix (``HF_ENDPOINT``, offline mode,
``--preset demo``) instead of a retry loop and a traceback. The check is one HTTP request
through huggingface_hub's own client, so it takes the route the downloads will take:
``HTTPS_PROXY``/``HTTP_PROXY``/``ALL_PROXY`` and ``NO_PROXY`` (read by httpx from the
environment), the same certificates. A raw socket to the endpoint would fail behind a
proxy although the downloads would work.

Then requests that fail in a way that usually passes are tried again. Public mirrors
(``HF_ENDPOINT=https://hf-mirror.com``) answer some requests with 429 or 503 under load
and drop connections, and a 50,000-pair WMT19 sample is ~6,300 requests: without retries
one bad answer ends the run. huggingface_hub (2.4, read from its source) retries some
requests, unevenly: ``HfFileSystem``'s range reads and listings go through its
``http_backoff`` (5 retries 1-8 s apart, not configurable, any ``Retry-After`` waited out
however long); a download's ``GET`` is retried on 408 and 429 and on a few connection
errors, not on 5xx (a run stopped on one 503 of ``target.spm``); ``HfApi.dataset_info``
and the check are not retried at all.

So every request is retried in one place under all of them: the ``send`` of
huggingface_hub's shared HTTP client (installed with its ``set_client_factory`` by the
check), which downloads, listings, range reads and the check go through, behind a proxy
too. HTTP 429 and 5xx, a dropped connection and a read timeout are retried with
exponential backoff and jitter, ``Retry-After`` honoured, bounded in tries and in total
time (:class:`RetryPolicy`, read from the environment, so tests make it fast). A refused
connection is not retried: nothing listens there. When the tries run out,
:class:`~workbench.core.data.hub.HubRetriesExhausted` is raised: neither huggingface_hub's
own retry loops nor transformers' "optional file" handling catch it, so tries never
multiply and a failing server is never taken for a missing file.

A body streamed to the caller (a model's weights) can still break after ``send`` has
returned. huggingface_hub resumes some of those; :func:`retrying` retries the whole load
for the rest, and the download resumes from its ``.incomplete`` file.
"""

from __future__ import annotations

import os
import random
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from typing import Any, TypeVar

from workbench.core.data.hub import (
    HubRetriesExhausted,
    exception_chain,
    explain,
    hub_endpoint,
    no_answer,
    offline,
    offline_mode,
    one_line,
    request_url,
    retries_exhausted,
)
from workbench.core.events import EventSink, HubRetry
from workbench.errors import WorkbenchError, without_passwords

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

#: The longest wait between two tries that the backoff itself chooses.
MAX_DELAY = 30.0

#: Seconds the reachability check waits for an answer (a TLS handshake through a proxy
#: included); a refused connection fails at once.
REACH_TIMEOUT = 5.0


def retried_status(status: int) -> bool:
    """True for the answers that usually pass: 408, 429 and 5xx (not 501 or 505, which
    say the server will never do it)."""
    return status in (408, 429) or (status >= 500 and status not in (501, 505))


def _number(name: str, default: float, minimum: float, whole: bool = False) -> float:
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        value = int(raw) if whole else float(raw)
    except ValueError:
        value = minimum - 1
    if not value >= minimum:  # NaN too
        kind = "a whole number" if whole else "a number of seconds"
        raise WorkbenchError(
            f"{name} must be {kind} of at least {minimum:g}, not '{raw}'; "
            f"unset it for the default {default:g}"
        )
    return value


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how long a failing Hub request is tried."""

    tries: int = 6  # the first try and 5 retries
    base_delay: float = 1.0  # seconds before the first retry; doubled each time
    total_seconds: float = 120.0  # the most one request may take over all its tries

    @classmethod
    def from_environment(cls) -> RetryPolicy:
        """``WORKBENCH_HUB_TRIES``, ``WORKBENCH_HUB_RETRY_DELAY`` and
        ``WORKBENCH_HUB_RETRY_SECONDS``, each defaulting to the field's value."""
        default = cls()
        return cls(
            tries=int(_number("WORKBENCH_HUB_TRIES", default.tries, 1, whole=True)),
            base_delay=_number("WORKBENCH_HUB_RETRY_DELAY", default.base_delay, 0),
            total_seconds=_number("WORKBENCH_HUB_RETRY_SECONDS", default.total_seconds, 0),
        )

    def wait(self, attempt: int, retry_after: float | None = None) -> float:
        """Seconds to wait after try ``attempt`` (from 1) failed.

        Exponential with "equal jitter": between half and all of the doubled delay, so the
        8 reading threads that one 503 burst hit do not all come back at the same moment.
        A server's ``Retry-After`` is a minimum.
        """
        ceiling = min(MAX_DELAY, self.base_delay * 2 ** (attempt - 1))
        jittered = ceiling / 2 + _JITTER.uniform(0, ceiling / 2)
        return max(jittered, retry_after or 0.0)


_JITTER = random.Random()


def retry_after(headers: Mapping[str, str]) -> float | None:
    """Seconds the server asked to wait: ``Retry-After`` (seconds or an HTTP date), else
    the IETF ``RateLimit`` header huggingface.co sends with a 429."""
    value = (headers.get("Retry-After") or "").strip()
    if value:
        try:
            return max(0.0, float(value))
        except ValueError:
            pass
        try:
            return max(0.0, parsedate_to_datetime(value).timestamp() - time.time())
        except (TypeError, ValueError):
            return None
    from huggingface_hub.utils import parse_ratelimit_headers

    info = parse_ratelimit_headers(headers)
    return float(info.reset_in_seconds) if info is not None and info.remaining == 0 else None


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


class _Tries:
    """The tries of one request under one policy: when to wait, when to give up."""

    def __init__(self, url: str) -> None:
        self.url = without_passwords(url)
        self.policy = RetryPolicy.from_environment()
        self.start = time.monotonic()
        self.attempt = 0

    def failed(self, failure: _Failure) -> None:
        """Wait before the next try, or raise :class:`HubRetriesExhausted`."""
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
        time.sleep(wait)


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


def ensure_hub_reachable(what: str, timeout: float = REACH_TIMEOUT) -> None:
    """Raise ``HubUnreachableError`` unless the Hub (or the mirror) answers over HTTP.

    Any HTTP answer counts: whether the repo exists, is gated or the server is failing is
    for the requests that follow to say (and retry), each with its own message. A
    connection dropped before the answer is retried.
    """
    if offline_mode():
        raise offline(what)
    from huggingface_hub.utils import get_session

    install_retries()  # from here on, every request of huggingface_hub's client retries
    endpoint = hub_endpoint()
    try:
        get_session().head(
            f"{endpoint}/", timeout=timeout, follow_redirects=False, extensions={ANY_ANSWER: True}
        )
    except Exception as err:
        raise explain(err, what) or no_answer(what, f"{endpoint}/", err) from None
