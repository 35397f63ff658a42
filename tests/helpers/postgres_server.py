"""A throwaway PostgreSQL server for the tests, as a user would set one up for a sweep.

``initdb`` makes a cluster in a temporary folder and ``pg_ctl`` starts it on a free port of
127.0.0.1, its Unix socket in the same folder, with password authentication over TCP (the
sweep's URL carries the password, as the README shows); it is stopped and removed at the
end. Durability is switched off (``fsync``, ``synchronous_commit``): nothing here outlives
the test, and the cluster starts in about a second.

PostgreSQL refuses to run as root, and CI runs the suite as root: then the server runs as
an unprivileged user (``postgres``, which Debian's package creates, or ``nobody``), in a
folder of its own under the system's temporary folder, because pytest's (under
``/tmp/pytest-of-root``, mode 0700) is closed to every other user.
"""

from __future__ import annotations

import os
import pwd
import re
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path
from typing import Any

#: The role the tests connect as, and the database their sweeps share.
USER = "workbench"
DATABASE = "sweeps"
#: Where Debian's packages put the server's programs (not on PATH): one folder a version.
DEBIAN_BINARIES = Path("/usr/lib/postgresql")


def server_binaries() -> Path | None:
    """The folder holding ``initdb`` and ``pg_ctl``: from PATH, else Debian's newest."""
    found = shutil.which("initdb")
    if found:
        folder = Path(found).resolve().parent
        if (folder / "pg_ctl").is_file():
            return folder
    versions = sorted(
        (p for p in DEBIAN_BINARIES.glob("*/bin") if (p / "initdb").is_file()),
        key=lambda p: int(re.sub(r"\D", "", p.parent.name) or 0),
        reverse=True,
    )
    return versions[0] if versions else None


def free_port() -> int:
    """A port on 127.0.0.1 that nothing listens on now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class PostgresServer:
    """One cluster: :meth:`start`, :meth:`url` for a sweep's ``--storage``, :meth:`stop`."""

    def __init__(self, binaries: Path, folder: Path, password: str) -> None:
        self.binaries, self.password = binaries, password
        self.port = free_port()
        self.user: pwd.struct_passwd | None = None
        if os.geteuid() == 0:
            names = [p.pw_name for p in pwd.getpwall()]
            self.user = pwd.getpwnam("postgres" if "postgres" in names else "nobody")
            folder = Path(tempfile.mkdtemp(prefix="workbench-postgres-"))
            os.chown(folder, self.user.pw_uid, self.user.pw_gid)
        self.folder = folder
        self.data = folder / "data"

    def _run(self, *args: str) -> None:
        """A server program, as the server's user; its output in the error when it fails."""
        as_user: dict[str, Any] = {}
        if self.user is not None:
            as_user = {"user": self.user.pw_uid, "group": self.user.pw_gid, "extra_groups": []}
        done = subprocess.run(
            [str(self.binaries / args[0]), *args[1:]],
            capture_output=True,
            text=True,
            cwd=self.folder,
            timeout=120,
            **as_user,
        )
        if done.returncode != 0:
            raise RuntimeError(f"{' '.join(args)} failed:\n{done.stdout}\n{done.stderr}")

    def start(self) -> None:
        """initdb, then the server, then the sweeps' database."""
        self.folder.mkdir(parents=True, exist_ok=True)
        password_file = self.folder / "password"
        password_file.write_text(self.password + "\n", encoding="utf-8")
        if self.user is not None:
            os.chown(password_file, self.user.pw_uid, self.user.pw_gid)
        self._run(
            "initdb",
            "--pgdata", str(self.data),
            "--username", USER,
            "--pwfile", str(password_file),
            "--auth-local", "trust",
            "--auth-host", "scram-sha-256",
            "--encoding", "UTF8",
            "--locale", "C",
            "--no-sync",
        )  # fmt: skip
        password_file.unlink()
        options = (
            f"-k {self.folder} -p {self.port} -c listen_addresses=127.0.0.1 "
            "-c fsync=off -c synchronous_commit=off -c full_page_writes=off"
        )
        log = self.folder / "server.log"
        self._run("pg_ctl", "start", "--pgdata", str(self.data), "--wait", "--timeout", "60",
                  "--log", str(log), "-o", options)  # fmt: skip
        import psycopg

        with psycopg.connect(self.url("postgres"), autocommit=True) as connection:
            connection.execute(f"CREATE DATABASE {DATABASE}")

    def url(self, database: str = DATABASE) -> str:
        """A SQLAlchemy URL for ``database``, the password in it."""
        return f"postgresql://{USER}:{self.password}@127.0.0.1:{self.port}/{database}"

    def stop(self) -> None:
        """Stop the server at once (nothing to keep) and remove its folder."""
        if (self.data / "postmaster.pid").is_file():
            self._run("pg_ctl", "stop", "--pgdata", str(self.data), "--mode", "immediate", "--wait")
        shutil.rmtree(self.folder, ignore_errors=True)
