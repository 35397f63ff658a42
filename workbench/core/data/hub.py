"""Where the Hugging Face Hub is, and saying plainly what went wrong when it fails.

How requests are made is :mod:`workbench.core.data.hub_requests` (the reachability
check) and :mod:`workbench.core.data.hub_retries` (the retries). When a request fails,
:func:`explain` turns the client's exception chain (transformers wraps huggingface_hub's
errors in ``OSError``) into one sentence naming what answered and how, the URL and the
fix. "Unreachable" is said
only when nothing answered; a server that answered 401, 404 or 503, ignored a ``Range``
header, sent a damaged file or failed on every try gets its own sentence, because each
has a different fix.
"""

from __future__ import annotations

import os
from urllib.parse import urlsplit

from workbench.errors import HubUnreachableError, WorkbenchError

DEFAULT_ENDPOINT = "https://huggingface.co"

#: httpx exception names that mean "no HTTP answer at all" (httpx 0.x and huggingface_hub
#: 2.x's httpx2 name them alike; matched by name so either works).
_NO_ANSWER = (
    "ConnectError",
    "ConnectTimeout",
    "ProxyError",
    "ReadTimeout",
    "PoolTimeout",
    "RemoteProtocolError",
    "ReadError",
    "NetworkError",
    "TimeoutException",
)

LOGIN = "log in with `hf auth login` or set HF_TOKEN"


def hub_endpoint() -> str:
    """The Hub address in use: ``HF_ENDPOINT`` (a mirror) or huggingface.co."""
    return (os.environ.get("HF_ENDPOINT", "").strip() or DEFAULT_ENDPOINT).rstrip("/")


def offline_mode() -> bool:
    """True when the user asked the Hugging Face libraries to stay offline."""
    return os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in ("1", "true", "yes", "on")


def proxy_for(url: str) -> tuple[str, str] | None:
    """``(where it is set, proxy URL)`` of the proxy a request to ``url`` goes through.

    httpx (huggingface_hub's client) reads proxies with :func:`urllib.request.getproxies`,
    so this does too: the same variables and precedence (an empty lower-case variable
    cancels the upper-case one) and the same ``NO_PROXY`` list.
    """
    # typeshed omits the undocumented proxy_bypass_environment (in urllib.request since 3.x).
    from urllib.request import getproxies, proxy_bypass_environment  # type: ignore[attr-defined]

    parts = urlsplit(url)
    proxies = getproxies()
    host = f"{parts.hostname}:{parts.port}" if parts.port else parts.hostname
    if not host or proxy_bypass_environment(host, proxies):
        return None
    for scheme in (parts.scheme, "all"):
        address = proxies.get(scheme)
        if address:
            name = f"{scheme}_proxy"
            source = next(
                (v for v in (name, name.upper()) if os.environ.get(v) == address),
                "the system's proxy settings",
            )
            return source, address
    return None


def _server() -> str:
    """``the mirror URL`` when HF_ENDPOINT names one, else ``the Hub``."""
    return f"the mirror {hub_endpoint()}" if os.environ.get("HF_ENDPOINT") else "the Hub"


class GatedOrPrivate(WorkbenchError):
    """The Hub answered 401 or 403: the repo is gated (its terms not accepted by the
    account of the token sent, or no token) or private. A caller that knows the repo's
    licence page says so in its own sentence."""


def unreachable(what: str, reason: str) -> HubUnreachableError:
    """The one-line error for a Hub resource that cannot be fetched because nothing answered."""
    return HubUnreachableError(
        f"cannot fetch {what} from the Hugging Face Hub at {hub_endpoint()} ({reason}); "
        "set HF_ENDPOINT to a reachable mirror, unset HF_HUB_OFFLINE if you are online, "
        "or run fully offline with --preset demo"
    )


def offline(what: str) -> HubUnreachableError:
    """The error for a resource that is not cached while HF_HUB_OFFLINE is set."""
    return unreachable(what, "HF_HUB_OFFLINE is set and it is not in the local cache")


def one_line(text: str, limit: int = 160) -> str:
    """``text`` on one line, cut to ``limit`` characters: a reason quoted in a sentence."""
    line = " ".join(str(text).split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def no_answer(what: str, url: str, err: BaseException) -> HubUnreachableError:
    """Nothing answered a request to ``url``: name the proxy when one was in the way."""
    reason = one_line(str(err) or type(err).__name__, 100)
    proxy = proxy_for(url)
    host = urlsplit(url).hostname or url
    if proxy is not None:
        variable, address = proxy
        refused = any(c.__name__ == "ProxyError" for c in type(err).__mro__)
        happened = "refused to forward" if refused else "did not answer"
        return HubUnreachableError(
            f"cannot fetch {what}: the proxy {address} (from {variable}) {happened} the "
            f"request to {url} ({reason}); check that the proxy runs and {variable} is right, "
            f"or add {host} to NO_PROXY if the Hub is reachable without it"
        )
    parts = urlsplit(url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    return unreachable(what, f"no answer from {host}:{port}: {reason}")


def http_error(
    what: str,
    status: int,
    url: str,
    code: str | None = None,
    message: str | None = None,
    missing_fix: str = "check the name",
) -> WorkbenchError:
    """One sentence for an HTTP error answer, by the Hub's ``X-Error-Code`` and the status."""
    answer = f"{url} answered HTTP {status}" + (f" {code}" if code else "")
    if code == "GatedRepo" or (status in (401, 403) and code != "RepoNotFound"):
        return GatedOrPrivate(
            f"{what} is gated or private ({answer}); accept its terms on its Hub page "
            f"with your account, then {LOGIN}"
        )
    if code == "RepoNotFound":
        return WorkbenchError(
            f"{what} was not found on the Hub ({answer}); {missing_fix}, "
            f"or {LOGIN} if it is private"
        )
    if code == "RevisionNotFound":
        return WorkbenchError(f"{what} has no such revision ({answer}); check the revision")
    if code == "EntryNotFound" or status == 404:
        return WorkbenchError(
            f"{what} was not found on the Hub ({answer}); {missing_fix}, and check that "
            "HF_ENDPOINT points at the Hub or a complete mirror of it"
        )
    if status == 416:
        return damaged_file(url, "HTTP 416: the file is shorter than its listing says")
    if status == 429:  # retried first (hub_retries); here only if a request was not
        return WorkbenchError(
            f"{_server()} is rate-limiting the requests for {what} ({answer}); wait a few "
            "minutes and run again, or set HF_ENDPOINT to another mirror"
        )
    if status >= 500:
        return WorkbenchError(
            f"the Hub's server failed on {what} ({answer}, a server error); try again later, "
            "or set HF_ENDPOINT to another mirror"
        )
    detail = f": {one_line(message, 100)}" if message else ""
    return WorkbenchError(
        f"cannot fetch {what} ({answer}{detail}); check that HF_ENDPOINT points at the "
        "Hub or a Hub mirror"
    )


def range_ignored(url: str, asked: int, got: int) -> WorkbenchError:
    """A byte-range request answered with something else than those bytes (200 + the file)."""
    return WorkbenchError(
        f"the server ignored a byte-range request for {url} (asked for {asked:,} bytes, got "
        f"{got:,}: it answers with the whole file instead of HTTP 206), so parquet files "
        "cannot be sampled through it; use a mirror or proxy that honours Range requests "
        "(huggingface.co does), or unset HF_ENDPOINT"
    )


def damaged_file(url: str, detail: str) -> WorkbenchError:
    """A file that arrived but is not what it should be (truncated, corrupt)."""
    return WorkbenchError(
        f"{url} is damaged ({one_line(detail, 120)}); the server holds a truncated or "
        "corrupt copy: re-sync it on the mirror, or set HF_ENDPOINT to another one"
    )


class HubRetriesExhausted(WorkbenchError):
    """A Hub request failed on every try in a way that usually passes (HTTP 429 or 5xx, a
    dropped connection, a read timeout): the sentence names the URL, the last failure and
    the tries, and :meth:`about` names what was being fetched once a caller knows it."""

    def __init__(
        self,
        url: str,
        status: int | None,
        reason: str,
        tries: int,
        seconds: float,
        retry_after: float | None = None,
        what: str = "a file from the Hub",
    ) -> None:
        self.url, self.status, self.reason = url, status, reason
        self.tries, self.seconds, self.retry_after = tries, seconds, retry_after
        super().__init__(self._sentence(what))

    def about(self, what: str) -> HubRetriesExhausted:
        """The same failure, said of ``what`` (``model 'x'``, ``dataset 'y'``)."""
        return type(self)(
            self.url, self.status, self.reason, self.tries, self.seconds, self.retry_after, what
        )

    def _sentence(self, what: str) -> str:
        tries = "its only try" if self.tries == 1 else f"all {self.tries} tries"
        tried = f"{tries} in {self.seconds:.0f} s"
        another = "set HF_ENDPOINT to another mirror"
        if self.status == 429:
            asked = f"; it last asked to wait {self.retry_after:.0f} s" if self.retry_after else ""
            return (
                f"{_server()} is rate-limiting the requests for {what} ({self.url} answered HTTP "
                f"429 Too Many Requests to {tried}{asked}); wait a few minutes and run "
                f"again (what has arrived is kept), or {another}"
            )
        if self.status and self.status >= 500:
            return (
                f"the Hub's server failed on {what} ({self.url} answered HTTP {self.status}, "
                f"a server error, to {tried}); try again later, or {another}"
            )
        if self.status:
            return (
                f"cannot fetch {what} ({self.url} answered HTTP {self.status} to {tried}); "
                f"try again later, or {another}"
            )
        parts = urlsplit(self.url)
        port = parts.port or (443 if parts.scheme == "https" else 80)
        return (
            f"cannot fetch {what}: the connection to {parts.hostname}:{port} was dropped or "
            f"timed out on {tried} ({self.url}; last: {self.reason}); the server or the "
            f"network is failing: try again later, or {another}"
        )


class HubDroppedEveryTry(HubRetriesExhausted, HubUnreachableError):
    """No try got a whole answer (each was dropped or timed out): exit 3, as when nothing
    answered at all; a server that answered with an error status exits 2."""


def retries_exhausted(
    url: str, status: int | None, reason: str, tries: int, seconds: float, wait: float | None
) -> HubRetriesExhausted:
    """The error for a request whose every try failed; ``status`` None: no answer."""
    kind = HubRetriesExhausted if status else HubDroppedEveryTry
    return kind(url, status, reason, tries, seconds, wait)


def exception_chain(err: BaseException) -> list[BaseException]:
    """``err`` and the exceptions it was raised from, outermost first."""
    found: list[BaseException] = []
    current: BaseException | None = err
    while current is not None and current not in found:
        found.append(current)
        current = current.__cause__ or current.__context__
    return found


def request_url(err: BaseException) -> str | None:
    """The URL of the request an httpx error was raised for, if it has one."""
    try:
        request = getattr(err, "request", None)  # httpx raises if it was never set
    except RuntimeError:
        return None
    url = getattr(request, "url", None)
    return str(url) if url is not None else None


def explain(
    err: BaseException, what: str, missing_fix: str = "check the name"
) -> WorkbenchError | None:
    """One sentence for a failed Hub access, or None when ``err`` is not about the Hub.

    Looks through the exception chain for, in order: our own error, an HTTP answer (its
    status and ``X-Error-Code``), offline mode, and a request that got no answer.
    """
    for e in exception_chain(err):
        if isinstance(e, HubRetriesExhausted):
            return e.about(what)
        if isinstance(e, WorkbenchError):
            return e
        response = getattr(e, "response", None)
        status = getattr(response, "status_code", None)
        if isinstance(status, int):
            headers = getattr(response, "headers", {}) or {}
            return http_error(
                what,
                status,
                str(getattr(response, "url", "") or hub_endpoint()),
                headers.get("X-Error-Code"),
                headers.get("X-Error-Message"),
                missing_fix,
            )
        names = {c.__name__ for c in type(e).__mro__}
        if "OfflineModeIsEnabled" in names:
            return offline(what)
        if names & set(_NO_ANSWER):
            return no_answer(what, request_url(e) or hub_endpoint(), e)
    return None
