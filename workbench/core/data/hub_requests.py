"""How every Hub request is made: a reachability check first, and retries under all
(:mod:`~workbench.core.data.hub_retries`).

Every Hub access in the core goes through :func:`ensure_hub_reachable` first, so that an
offline machine fails in about a second with the fix (``HF_ENDPOINT``, offline mode,
``--preset demo``) instead of a retry loop and a traceback. The check is one HTTP request
through huggingface_hub's own client, so it takes the route the downloads will take
(``HTTPS_PROXY``/``HTTP_PROXY``/``ALL_PROXY`` and ``NO_PROXY``, read by httpx, the same
certificates); a raw socket would fail behind a proxy although the downloads would work.
The check also installs the retries, so every request after it is retried when it fails.
A model or a file is taken from the local cache first (:func:`cached_or_fetched`), so a
model fetched once works offline.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from workbench.core.data.hub import explain, hub_endpoint, no_answer, offline, offline_mode
from workbench.core.data.hub_retries import ANY_ANSWER, install_retries, retrying
from workbench.errors import WorkbenchError

T = TypeVar("T")

#: Seconds the reachability check waits for an answer (a TLS handshake through a proxy
#: included); a refused connection fails at once.
REACH_TIMEOUT = 5.0


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


def cached_or_fetched(load: Callable[..., T], what: str, missing_fix: str) -> T:
    """``load(local_files_only=True)`` from the local cache, so a model fetched once works
    offline; else ``load()`` from the Hub after the reachability check, under the retries
    every Hub access here has, with any failure said in one line naming ``what``."""
    try:
        return load(local_files_only=True)
    except (OSError, TypeError):
        # Not in the cache; or a cache a stopped download left half-filled (config.json
        # there, vocab.json not), which fails inside a tokenizer with a TypeError (a None
        # path): fetch what is missing.
        pass
    ensure_hub_reachable(what)  # and every request from here on is retried when it fails
    try:
        # A weights file streamed in can still be cut off mid-way: then the whole load is
        # tried again, and huggingface_hub resumes the file from what has arrived.
        return retrying(load)
    except Exception as err:
        # transformers wraps huggingface_hub's typed errors in OSError ``from`` them; the
        # retries' last error comes through as it was raised.
        found = explain(err, what, missing_fix)
        if found is not None:
            raise found from None
        if not isinstance(err, OSError):
            raise  # not about the Hub: a bug to see with its traceback
        first = " ".join(str(err).split("\n", 1)[0].split()) or type(err).__name__
        raise WorkbenchError(
            f"cannot load {what} from the Hub at {hub_endpoint()}: {first}"
        ) from None


def hub_file(repo_id: str, filename: str, what: str, missing_fix: str) -> str:
    """The local path of one file of a Hub model repo (:func:`cached_or_fetched`)."""
    from huggingface_hub import hf_hub_download

    return str(
        cached_or_fetched(
            lambda **options: hf_hub_download(repo_id, filename, **options), what, missing_fix
        )
    )
