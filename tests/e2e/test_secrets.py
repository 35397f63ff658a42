"""No secret in any output: a planted mirror password, proxy password and HF_TOKEN never
reach a printed line or a file the workbench writes.

A user behind a proxy with credentials and a mirror that takes them in its URL runs the
assignment shrunk through the Hub look-alike, then the commands that print and write what
a run left (runs, report, compare, translate) and a run that fails. Every line of output
and every file under the output folder and the sample cache is searched for the secrets.
Each command runs in a new interpreter with the secrets in its environment: the Hub's
libraries read the mirror, the proxy and the token at import.
"""

from __future__ import annotations

from pathlib import Path

from tests.helpers.cli import run_cli
from tests.helpers.hub import hub_env
from tests.helpers.hub_proxy import ForwardingProxy
from tests.helpers.hub_repos import OPUS_MODEL

MIRROR_PASSWORD = "mirrorpw-0xPLANTED"
PROXY_PASSWORD = "proxypw-0xPLANTED"
TOKEN = "hf_PLANTEDtoken0123456789abcdef"
SECRETS = (MIRROR_PASSWORD, PROXY_PASSWORD, TOKEN)

SHRUNK = (
    "--samples", "40", "--epochs", "1", "--batch-size", "8", "--eval-batch-size", "16",
    "--num-beams", "1", "--max-new-tokens", "8", "--no-interact",
)  # fmt: skip


def leaks(text: str) -> list[str]:
    return [s for s in SECRETS if s in text]


def files_under(*roots: Path) -> list[Path]:
    return [p for root in roots if root.exists() for p in root.rglob("*") if p.is_file()]


def test_no_planted_secret_reaches_any_output_or_file(hub_server, tmp_path):
    proxy = ForwardingProxy()
    try:
        endpoint = hub_server.url.replace("http://", f"http://mirror:{MIRROR_PASSWORD}@")
        proxy_url = proxy.url.replace("http://", f"http://me:{PROXY_PASSWORD}@")
        env = hub_env(hub_server, tmp_path, HTTP_PROXY=proxy_url, NO_PROXY="", HF_TOKEN=TOKEN)
        env["HF_ENDPOINT"] = endpoint
        out = tmp_path / "out"
        outputs = []
        # A busy mirror for the first run, so that retry lines (which name URLs) are printed.
        hub_server.faults.every = {4: 429, 7: 503}
        args: tuple[str, ...]
        hub_server.faults.retry_after = "0"  # no waiting: the lines are what is tested
        for args in (
            ("train", "--headless", "--preset", "opus-en-zh", "--model", OPUS_MODEL, *SHRUNK),
            ("train", "--headless", "--preset", "opus-en-zh", "--model", OPUS_MODEL, *SHRUNK,
             "--seed", "7"),
        ):  # fmt: skip
            proc = run_cli(*args, "--output-dir", str(out), cwd=tmp_path, env=env)
            assert proc.returncode == 0, proc.stderr[-2000:]
            outputs.append(proc)
            hub_server.reset()
        assert "hub: HTTP 429 from http://mirror:***@" in outputs[0].stdout
        assert proxy.requests(), "the downloads went through the proxy"
        runs = sorted(p for p in (out / "runs").iterdir() if p.is_dir())
        for args in (
            ("runs", "--output-dir", str(out)),
            ("runs", "--output-dir", str(out), "--json"),
            ("report", str(runs[0])),
            ("compare", str(runs[0]), str(runs[1]), "--out", str(out / "compare")),
            ("translate", "--model", str(out / "best_model"), "I like tea."),
        ):
            proc = run_cli(*args, cwd=tmp_path, env=env)
            assert proc.returncode == 0, (args, proc.stderr[-2000:])
            outputs.append(proc)
        # And a run that fails at the Hub: its error names the mirror, without the password.
        failing = {**env, "HF_ENDPOINT": endpoint.replace(str(hub_server.port), "9")}
        proc = run_cli(
            "train", "--headless", "--preset", "opus-en-zh", "--model", "nobody/none",
            *SHRUNK, "--output-dir", str(tmp_path / "failed"), cwd=tmp_path, env=failing,
        )  # fmt: skip
        assert proc.returncode != 0
        assert "mirror:***@" in proc.stderr + proc.stdout
        outputs.append(proc)
    finally:
        hub_server.reset()
        proxy.stop()
    printed = [leaks(p.stdout + p.stderr) for p in outputs]
    assert printed == [[]] * len(outputs)
    written = files_under(out, tmp_path / "failed", tmp_path / "sample-cache")
    assert len(written) > 20
    leaked = {
        str(p): found
        for p in written
        if (found := leaks(p.read_bytes().decode("utf-8", "replace")))
    }
    assert leaked == {}
