"""Debian's PostgreSQL server, started by the tests themselves (scripts/setup.sh installs
the `postgresql` package): initdb in a temporary folder, a private Unix socket and a
free loopback port, run as the `postgres` account when the tests run as root (initdb
refuses root), stopped and removed at the end of the test session."""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import uuid
from pathlib import Path

ADMIN = "ways_admin"  # the cluster's superuser (trust on the socket)


def bindir() -> Path:
    found = sorted(
        glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(p.split("/")[4])
    )
    assert found, "Debian's postgresql package is missing: apt-get install postgresql"
    return Path(found[-1]).parent


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    def __init__(self) -> None:
        self.root = Path(tempfile.mkdtemp(prefix="ways-pg-"))
        self.data = self.root / "data"
        self.sock = self.root / "sock"
        self.port = _free_port()
        self.bin = bindir()
        self.owner = pwd.getpwnam("postgres") if os.getuid() == 0 else None
        self.sock.mkdir()
        if self.owner:
            for p in (self.root, self.sock):
                os.chown(p, self.owner.pw_uid, self.owner.pw_gid)

    def _run(self, *argv: str) -> subprocess.CompletedProcess:
        cmd = [str(self.bin / argv[0]), *argv[1:]]
        if self.owner:
            cmd = ["runuser", "-u", "postgres", "--", *cmd]
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=120, cwd=self.root)
        assert r.returncode == 0, (argv[0], r.stdout, r.stderr)
        return r

    def start(self) -> Server:
        self._run(
            "initdb",
            "-D",
            str(self.data),
            "-U",
            ADMIN,
            "--auth-local=trust",
            "--auth-host=scram-sha-256",
            "-E",
            "UTF8",
            "--locale=C.UTF-8",
        )
        opts = (
            f"-k {self.sock} -p {self.port} -c listen_addresses=127.0.0.1 "
            "-c fsync=off -c full_page_writes=off"
        )
        self._run(
            "pg_ctl", "start", "-w", "-D", str(self.data), "-l", str(self.root / "log"), "-o", opts
        )
        return self

    def stop(self) -> None:
        self._run("pg_ctl", "stop", "-m", "immediate", "-D", str(self.data))
        shutil.rmtree(self.root, ignore_errors=True)

    def sql(self, statement: str, db: str = "postgres") -> str:
        return self._run(
            "psql",
            "-h",
            str(self.sock),
            "-p",
            str(self.port),
            "-U",
            ADMIN,
            "-d",
            db,
            "-XAtq",
            "-v",
            "ON_ERROR_STOP=1",
            "-c",
            statement,
        ).stdout

    def database(self) -> str:
        """A new empty database owned by ADMIN; its name."""
        name = "t_" + uuid.uuid4().hex[:12]
        self.sql(f"CREATE DATABASE {name}")
        return name

    def url(self, db: str, user: str = ADMIN) -> str:
        """The database's URL through the private socket (loopback: the URL's sslmode)."""
        return f"postgresql://{user}@/{db}?host={self.sock}&port={self.port}"

    def tcp_url(self, db: str, user: str) -> str:
        return f"postgresql://{user}@127.0.0.1:{self.port}/{db}"

    def files(self) -> bytes:
        """Every file of the cluster (tables, indexes, WAL), as bytes."""
        out = []
        for p in sorted(self.data.rglob("*")):
            if p.is_file() and not p.is_symlink():
                out.append(p.read_bytes())
        return b"".join(out)
