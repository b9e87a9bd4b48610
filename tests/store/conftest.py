"""The store's tests share one PostgreSQL server (tests/store/pgserver.py), started at
the first test that asks for it and stopped at the end of the run."""

from __future__ import annotations

import pytest

from .pgserver import Server


@pytest.fixture(scope="session")
def pg():
    server = Server().start()
    yield server
    server.stop()
