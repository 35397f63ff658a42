"""A CLI subprocess or this process pointed at the Hub look-alike, with every other host
unreachable: the proxy safety net, and a port where nothing listens."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import textwrap
from pathlib import Path

from tests.helpers.hub_repos import LABELS, OPUS_MODEL

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
        # Retries (workbench/core/data/hub_retries.py) 10 ms apart, not 1 s: a test of a
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


#: The assignment's run, shrunk: 40 sampled pairs, one epoch, greedy 8-token decoding.
HUB_TRAIN = (
    "train",
    "--headless",
    "--preset",
    "opus-en-zh",
    "--model",
    OPUS_MODEL,
    "--samples",
    "40",
    "--epochs",
    "1",
    "--batch-size",
    "8",
    "--eval-batch-size",
    "16",
    "--num-beams",
    "1",
    "--max-new-tokens",
    "8",
    "--no-interact",
    "--set",
    "logging_steps=1",
)


#: Runs the CLI with ``MarianMTModel.generate`` wrapped to record the first input id of
#: every sequence it is given: where the language label must be.
SPY = textwrap.dedent("""
    import json, os, sys
    from transformers import MarianMTModel

    real = MarianMTModel.generate

    def spy(self, *args, **kwargs):
        ids = kwargs.get("input_ids", args[0] if args else None)
        with open(os.environ["GENERATE_LOG"], "a") as fh:
            fh.write(json.dumps([row[0] for row in ids.tolist()]) + "\\n")
        return real(self, *args, **kwargs)

    MarianMTModel.generate = spy
    from workbench.cli import main

    sys.exit(main(sys.argv[1:]))
""")


def spied_cli(
    *args: str, cwd: Path, env: dict[str, str], input: str | None = None
) -> tuple[subprocess.CompletedProcess, list[int]]:
    """Run the CLI under SPY; also return the first input id of every generated sequence."""
    log = cwd / "generate.jsonl"
    log.unlink(missing_ok=True)
    proc = subprocess.run(
        [sys.executable, "-c", SPY, *args],
        cwd=cwd,
        input=input,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONUNBUFFERED": "1", **env, "GENERATE_LOG": str(log)},
    )
    first = (
        [i for line in log.read_text().splitlines() for i in json.loads(line)]
        if log.exists()
        else []
    )
    return proc, first


def label_ids(server) -> dict[str, int]:
    """The served model's ids of its language labels."""
    folder = server.repos[("model", OPUS_MODEL)].folder
    vocab = json.loads((folder / "vocab.json").read_text(encoding="utf-8"))
    return {label: vocab[label] for label in LABELS}


def error_line(proc: subprocess.CompletedProcess) -> str:
    lines = [line for line in proc.stderr.splitlines() if line.startswith("workbench: error:")]
    assert len(lines) == 1, proc.stderr[-3000:]
    return lines[0]
