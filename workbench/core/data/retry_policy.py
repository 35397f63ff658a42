"""When a failing Hub request is tried again, and how long it waits: the numbers, from
the environment so that a test can make them small, and the server's own ``Retry-After``.
:mod:`workbench.core.data.hub_retries` applies them to every request."""

from __future__ import annotations

import os
import random
import time
from collections.abc import Mapping
from dataclasses import dataclass
from email.utils import parsedate_to_datetime

from workbench.errors import WorkbenchError

#: The longest wait between two tries that the backoff itself chooses.
MAX_DELAY = 30.0


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
