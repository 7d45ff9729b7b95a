"""A throwaway PostgreSQL server on 127.0.0.1 for the scale-out test and benchmark.

It uses the server binaries of Debian's `postgresql` package (`/usr/lib/postgresql/<version>/bin`, or `initdb`
on PATH), a private data and socket folder, and trust authentication on loopback only. Started as root, it runs
as the `postgres` user (the server refuses root). Nothing here is used by the product itself.
"""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from extraction_assets.lib.ports import free_port

SERVER_USER = "postgres"


@dataclass(frozen=True)
class PostgresServer:
    host: str
    port: int
    user: str
    data: Path | None = None

    def cpu_seconds(self) -> float:
        """CPU the server has used so far: the postmaster and every backend it has reaped (a backend ends with its
        connection), so a bench can count the catalog's work with the processes that asked for it."""
        if self.data is None or not (self.data / "postmaster.pid").exists():
            return 0.0
        pid = (self.data / "postmaster.pid").read_text().split("\n", 1)[0].strip()
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            return 0.0
        return sum(int(tick) for tick in fields[11:15]) / os.sysconf("SC_CLK_TCK")  # utime stime cutime cstime

    def conninfo(self, dbname: str) -> str:
        """A libpq connection string for one database of this server."""
        return f"host={self.host} port={self.port} user={self.user} dbname={dbname}"

    def url(self, dbname: str) -> str:
        """A SQLAlchemy URL naming psycopg2, the driver dagster-postgres is written for (SQLAlchemy 2.1 would
        otherwise pick psycopg 3, whose server-side parameters break dagster's NOTIFY)."""
        return f"postgresql+psycopg2://{self.user}@{self.host}:{self.port}/{dbname}"


def server_binaries() -> Path | None:
    """The folder holding initdb and pg_ctl (the newest Debian version), or None when PostgreSQL is not installed."""
    versions = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"), key=lambda p: int(p.parts[-3]))
    if versions:
        return versions[-1].parent
    found = shutil.which("initdb")
    return Path(found).resolve().parent if found else None


def unavailable_reason() -> str | None:
    """Why a server cannot be started here, or None when it can."""
    if server_binaries() is None:
        return "PostgreSQL server binaries (initdb, pg_ctl) are not installed: apt-get install postgresql"
    if os.geteuid() == 0:
        try:
            pwd.getpwnam(SERVER_USER)
        except KeyError:
            return f"running as root and there is no {SERVER_USER!r} user to run the server as"
    return None


def _as_server_user(command: list[str]) -> list[str]:
    return ["runuser", "-u", SERVER_USER, "--", *command] if os.geteuid() == 0 else command


@contextmanager
def running_postgres(databases: tuple[str, ...] = ()) -> Iterator[PostgresServer]:
    """Start a server in a private temporary folder, create `databases`, then stop it and remove the folder."""
    reason = unavailable_reason()
    if reason:
        raise RuntimeError(reason)
    binaries = server_binaries()
    assert binaries is not None
    folder = Path(tempfile.mkdtemp(prefix="extraction-pg-"))
    data, sockets = folder / "data", folder / "sockets"
    sockets.mkdir()
    user = SERVER_USER if os.geteuid() == 0 else pwd.getpwuid(os.geteuid()).pw_name
    if os.geteuid() == 0:
        record = pwd.getpwnam(SERVER_USER)
        for path in (folder, sockets):
            os.chown(path, record.pw_uid, record.pw_gid)
    port = free_port()
    options = f"-h 127.0.0.1 -p {port} -k {sockets} -c fsync=off -c max_connections=200"
    try:
        _run([str(binaries / "initdb"), "-D", str(data), "-U", user, "-A", "trust", "-E", "UTF8"])
        _run([str(binaries / "pg_ctl"), "-D", str(data), "-o", options, "-l", str(folder / "log"), "-w", "start"])
        server = PostgresServer(host="127.0.0.1", port=port, user=user, data=data)
        for name in databases:
            create_database(server, name)
        yield server
    finally:
        if (data / "postmaster.pid").exists():
            subprocess.run(
                _as_server_user([str(binaries / "pg_ctl"), "-D", str(data), "-m", "immediate", "-w", "stop"]),
                capture_output=True,
            )
        shutil.rmtree(folder, ignore_errors=True)


def _run(command: list[str]) -> None:
    done = subprocess.run(_as_server_user(command), capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"{Path(command[0]).name} failed: {done.stderr.strip() or done.stdout.strip()}")


def create_database(server: PostgresServer, name: str) -> None:
    """CREATE DATABASE through libpq (psycopg2, the driver dagster-postgres brings and uses)."""
    import psycopg2

    deadline = time.monotonic() + 30
    while True:
        try:
            con = psycopg2.connect(server.conninfo("postgres"))
            break
        except psycopg2.OperationalError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)
    try:
        con.autocommit = True
        with con.cursor() as cursor:
            cursor.execute(f'CREATE DATABASE "{name}"')
    finally:
        con.close()
