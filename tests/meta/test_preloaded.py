"""The tests' preloaded ``python -m workbench`` (tests/helpers/preloaded.py) answers as a
fresh interpreter does, kills a command past its timeout, and keeps apart the environments
its libraries read at import."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest

from tests.helpers import preloaded
from tests.helpers.cli import SUITE_ENV, run_cli

#: A Hub of a test's own, as tests/helpers/hub.py's hub_env gives (nothing listens there).
HUB_ENV = {**SUITE_ENV, "HF_ENDPOINT": "http://127.0.0.1:9", "HF_HUB_OFFLINE": "", "HF_HOME": ""}


@pytest.fixture(scope="module")
def servers(tmp_path_factory):
    """Servers of this module's own, by kind: for the suite's environment, and for a Hub of
    the test's own; each with the environment it was started for."""
    hub = {**HUB_ENV, "HF_HOME": str(tmp_path_factory.mktemp("hf"))}
    own = {kind: (preloaded.Server(preloaded.key_of(env, kind), env), env)
           for kind, env in (("full", SUITE_ENV), ("hub-free", hub))}  # fmt: skip
    yield own
    for server, _ in own.values():
        server.stop()


ODD_BYTES = b"I like tea.\n\xff\xfe half a line\r\nThank you.\n"

#: Commands and their stdin: bytes in and out, or text (as run_cli passes a str). The
#: two that translate load torch and the model in the fresh interpreter: the hub-free
#: server runs one of them.
COMMANDS = {
    "version": (["--version"], None),
    "a bad flag": (["translate", "--beams", "x"], None),
    "no runs in the folder": (["runs"], None),
    "stdin as bytes": (["translate", "--model", "TINY"], ODD_BYTES),
    "stdin as text": (["translate", "--model", "TINY"], ODD_BYTES.decode("utf-8", "replace")),
}


CASES = [("full", name) for name in COMMANDS] + [
    ("hub-free", "version"),
    ("hub-free", "stdin as bytes"),
]


@pytest.mark.parametrize(("kind", "name"), CASES)
def test_a_child_answers_as_a_fresh_interpreter_does(servers, tiny_model_dir, tmp_path, kind, name):
    server, env = servers[kind]
    argv, stdin = COMMANDS[name]
    args = [str(tiny_model_dir) if arg == "TINY" else arg for arg in argv]
    env = {**env, "WORKBENCH_CACHE": str(tmp_path / "cache")}
    text = not isinstance(stdin, bytes)
    child = preloaded.run(server, args, cwd=tmp_path, env=env, input=stdin, text=text, timeout=300)
    fresh = run_cli(*args, cwd=tmp_path, env=env, input=stdin, fresh=True, timeout=300)
    assert child.args == fresh.args
    assert (child.returncode, child.stdout, child.stderr) == (
        fresh.returncode,
        fresh.stdout,
        fresh.stderr,
    )
    assert server.alive()


def children_of(pid: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry))
    return found


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def no_children_left(server: preloaded.Server) -> None:
    deadline = time.monotonic() + 30
    while children_of(server.process.pid):
        assert time.monotonic() < deadline, "the command still runs"
        time.sleep(0.1)


def test_a_command_past_its_timeout_is_killed(servers, tmp_path):
    server, env = servers["full"]
    port = free_port()
    with pytest.raises(subprocess.TimeoutExpired) as expired:
        preloaded.run(
            server, ["serve", "--port", str(port)], cwd=tmp_path, env=env, input=None,
            text=True, timeout=5,
        )  # fmt: skip
    assert expired.value.timeout == 5
    no_children_left(server)
    with pytest.raises(ConnectionRefusedError), socket.create_connection(("127.0.0.1", port)):
        pass
    assert server.alive()


def test_a_started_child_is_polled_signalled_and_waited_for_as_popen_is(servers, tmp_path):
    server, env = servers["full"]
    port = free_port()
    child = preloaded.Child(
        server, ["serve", "--port", str(port)], cwd=tmp_path, env=env,
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
    )  # fmt: skip
    assert child.pid in children_of(server.process.pid)
    assert child.poll() is None
    with pytest.raises(subprocess.TimeoutExpired):
        child.wait(timeout=0.5)
    child.kill()
    assert child.wait(timeout=30) == -signal.SIGKILL == child.returncode
    out, err = child.communicate(timeout=30)
    assert isinstance(out, str)
    assert err is None
    no_children_left(server)
    finished = preloaded.Child(
        server, ["--version"], cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    out, err = finished.communicate(timeout=60)
    assert (finished.returncode, out.startswith("workbench "), err) == (0, True, "")


def test_a_hub_of_its_own_shares_a_hub_free_server_only(tmp_path):
    hub = {**HUB_ENV, "HF_HOME": str(tmp_path / "hf")}
    other = {**HUB_ENV, "HF_HOME": str(tmp_path / "other")}
    assert preloaded.key_of(hub) != preloaded.key_of(other)
    assert preloaded.key_of(hub, "hub-free") == preloaded.key_of(other, "hub-free")
    assert preloaded.key_of(hub, "hub-free") == preloaded.key_of(SUITE_ENV, "hub-free")
    assert preloaded.key_of({**hub, "HOME": "/elsewhere"}, "hub-free") != preloaded.key_of(
        hub, "hub-free"
    )


def test_variables_read_at_import_keep_environments_apart():
    suite = preloaded.key_of(SUITE_ENV)
    assert preloaded.key_of({**SUITE_ENV, "WORKBENCH_CACHE": "/elsewhere"}) == suite
    assert preloaded.key_of({**SUITE_ENV, "PYTEST_CURRENT_TEST": "another"}) == suite
    read_at_import = {
        "HF_ENDPOINT": "http://127.0.0.1:1",
        "HF_HUB_OFFLINE": "0",
        "OMP_NUM_THREADS": "2",
        "HOME": "/elsewhere",
        "PYTHONHASHSEED": "1",
    }
    for name, value in read_at_import.items():
        assert preloaded.key_of({**SUITE_ENV, name: value}) != suite, name
    without = {k: v for k, v in SUITE_ENV.items() if k != "HF_HUB_OFFLINE"}
    assert preloaded.key_of(without) != suite
