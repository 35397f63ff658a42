"""Reaching the Hugging Face Hub, and saying plainly when it cannot be reached.

Every Hub access in the core goes through :func:`ensure_hub_reachable` first, so that an
offline machine fails in about a second with the fix (``HF_ENDPOINT``, offline mode,
``--preset demo``) instead of a retry loop and a traceback.
"""

from __future__ import annotations

import os
import socket
from urllib.parse import urlparse

from workbench.errors import HubUnreachableError

DEFAULT_ENDPOINT = "https://huggingface.co"


def hub_endpoint() -> str:
    """The Hub address in use: ``HF_ENDPOINT`` (a mirror) or huggingface.co."""
    return os.environ.get("HF_ENDPOINT", "").strip() or DEFAULT_ENDPOINT


def offline_mode() -> bool:
    """True when the user asked the Hugging Face libraries to stay offline."""
    return os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in ("1", "true", "yes", "on")


def unreachable(what: str, reason: str) -> HubUnreachableError:
    """The one-line error for a Hub resource that cannot be fetched."""
    return HubUnreachableError(
        f"cannot fetch {what} from the Hugging Face Hub at {hub_endpoint()} ({reason}); "
        "set HF_ENDPOINT to a reachable mirror, unset HF_HUB_OFFLINE if you are online, "
        "or run fully offline with --preset demo"
    )


def ensure_hub_reachable(what: str, timeout: float = 3.0) -> None:
    """Raise :class:`HubUnreachableError` unless a TCP connection to the Hub opens quickly."""
    if offline_mode():
        raise unreachable(what, "HF_HUB_OFFLINE is set and it is not in the local cache")
    url = urlparse(hub_endpoint())
    host = url.hostname or ""
    port = url.port or (443 if url.scheme == "https" else 80)
    try:
        with socket.create_connection((host, port), timeout=timeout):
            pass
    except OSError as err:
        raise unreachable(what, f"no connection to {host}:{port}: {err.strerror or err}") from None
