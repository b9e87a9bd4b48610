"""Mutual TLS on the HTTP targets: a loopback server that requires a client certificate
(Python's ssl) refuses a rule without one (counted as errors and retried) and takes the
same records once the rule names the certificate; a wrong server name is never trusted."""

from __future__ import annotations

import ssl

import pytest

from ..helpers import counters_of, play, wait_until
from ..rsyslog import client_cert, make_ca
from ..servers import Server


@pytest.fixture
def pki(tmp_path):
    ca = make_ca(tmp_path / "pki")
    return ca, client_cert(ca, tmp_path / "pki")


def requiring(ca) -> ssl.SSLContext:
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(ca["cert"], ca["key"])
    ctx.load_verify_locations(ca["ca"])
    ctx.verify_mode = ssl.CERT_REQUIRED
    return ctx


def sensor(install, dispatch: str) -> None:
    install.sensor(
        "m",
        f"""
        rules:
          r:
            sections: [session_start]
            delivery: at_least_once
            dispatch: {dispatch}
        """,
    )


class Http:
    def __init__(self, ca, tmp_path, mode="accept"):
        self.server = Server(mode, tls=requiring(ca))

    def dispatch(self, tls: str) -> str:
        return f'{{http: {{url: "{self.server.url}", tls: {tls}}}}}'

    def delivered(self) -> bool:
        return bool(self.server.bodies)

    def close(self) -> None:
        self.server.close()


class Otlp(Http):
    def __init__(self, ca, tmp_path):
        super().__init__(ca, tmp_path, "otlp")

    def dispatch(self, tls: str) -> str:
        return f'{{otlp: {{endpoint: "https://127.0.0.1:{self.server.port}", tls: {tls}}}}}'


@pytest.mark.parametrize("kind", [Http, Otlp], ids=["http", "otlp"])
def test_refused_without_a_client_certificate_then_delivered_with_one(install, pki, tmp_path, kind):
    ca, client = pki
    target = kind(ca, tmp_path)
    try:
        sensor(install, target.dispatch(f"{{ca_file: {ca['ca']}}}"))
        play(install, ["SessionStart"])
        assert wait_until(lambda: counters_of(install, "m/r")["errors"] >= 1, timeout=60)
        assert not target.delivered()
        with_cert = (
            f"{{ca_file: {ca['ca']}, cert_file: {client['cert']}, key_file: {client['key']}}}"
        )
        sensor(install, target.dispatch(with_cert))
        play(install, ["UserPromptSubmit"])  # the next event: the dispatcher reads the rule again
        assert wait_until(target.delivered, timeout=90)
        got = counters_of(install, "m/r")
        assert got["delivered"] == 1 and got["retries"] >= 1
    finally:
        target.close()


def test_the_server_name_is_verified(install, pki, tmp_path):
    ca, client = pki
    target = Http(ca, tmp_path)
    try:
        tls = (
            f"{{ca_file: {ca['ca']}, cert_file: {client['cert']}, key_file: {client['key']},"
            " server_name: collector.wrong.example}"
        )
        sensor(install, target.dispatch(tls))
        play(install, ["SessionStart"])
        assert wait_until(lambda: counters_of(install, "m/r")["errors"] >= 1, timeout=60)
        assert not target.delivered()
    finally:
        target.close()


def test_skipping_verification_is_said_in_so_many_words_and_linted(install):
    sensor(install, '{http: {url: "https://collector.example", tls: {insecure_skip_verify: true}}}')
    r = install.ways("sensors", "lint")
    assert "insecure_skip_verify" in r.stdout and "not checked" in r.stdout
    bad = install.ways(
        "settings",
        "set",
        "ways.sensors.m.rules.r.dispatch",
        "{http: {url: 'https://x', tls: {verify: false}}}",
    )
    assert bad.returncode == 3  # no shorter spelling turns verification off
