"""Fixtures of the integration tests that start a server."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from evals.postgres_server import PostgresServer, running_postgres


@pytest.fixture(scope="module")
def postgres() -> Iterator[PostgresServer]:
    """A real PostgreSQL server for the tests of one file (started on first use, stopped after the file)."""
    with running_postgres() as running:
        yield running
