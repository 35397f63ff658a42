"""A CLI subprocess or this process pointed at the Hub look-alike, with every other host
unreachable: the proxy safety net, and a port where nothing listens."""

from __future__ import annotations

import socket
from pathlib import Path

#: Proxy variables, cleared for Hub subprocesses unless a test sets them.
PROXY_VARIABLES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY")


#: A port on 127.0.0.1 where nothing listens (discard): the safety-net proxy.
DEAD_PROXY = "http://127.0.0.1:9"


def hub_env(server, home: Path, **extra: str) -> dict[str, str]:
    """Environment for a CLI subprocess whose Hub is ``server``: online (HF_HUB_OFFLINE
    unset), its own Hugging Face cache and sample cache under ``home``.

    As a safety net every proxy variable names a dead port on 127.0.0.1 and only 127.0.0.1
    bypasses it (NO_PROXY), so a request meant for any other host fails instead of leaving
    the machine. ``extra`` proxy variables are set in both cases (urllib and httpx let an
    empty lower-case one cancel the upper-case one).
    """
    env = {
        "HF_ENDPOINT": server.url,
        "HF_HUB_OFFLINE": "",
        "TRANSFORMERS_OFFLINE": "",
        "HF_HOME": str(home / "hf"),
        "WORKBENCH_CACHE": str(home / "sample-cache"),
        "HF_HUB_DISABLE_TELEMETRY": "1",
        "OMP_NUM_THREADS": "1",
        # Retries (workbench/core/data/hub_requests.py) 10 ms apart, not 1 s: a test of a
        # failing server fails in a second. A test of the delays sets its own.
        "WORKBENCH_HUB_RETRY_DELAY": "0.01",
    }
    proxies = {name: DEAD_PROXY for name in PROXY_VARIABLES[:-1]}
    proxies["NO_PROXY"] = "127.0.0.1"
    proxies.update({k: v for k, v in extra.items() if k in PROXY_VARIABLES})
    for name, value in proxies.items():
        env[name] = env[name.lower()] = value
    env.update({k: v for k, v in extra.items() if k not in PROXY_VARIABLES})
    return env


def closed_port() -> int:
    """A port on 127.0.0.1 that nothing listens on."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])
