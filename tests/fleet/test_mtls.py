"""Mutual TLS on the network targets (http, otlp, and syslog over TLS): a loopback server
that requires a client certificate (Python's ssl) refuses a rule without one (counted as
errors and retried) and takes the same records once the rule names the certificate; a
wrong server name is never trusted."""

from __future__ import annotations

import socket
import ssl
import threading

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

    def dispatch(self, tls: dict[str, str]) -> str:
        return f'{{http: {{url: "{self.server.url}", tls: {flow(tls)}}}}}'

    def delivered(self) -> bool:
        return bool(self.server.bodies)

    def close(self) -> None:
        self.server.close()


class Otlp(Http):
    def __init__(self, ca, tmp_path):
        super().__init__(ca, tmp_path, "otlp")

    def dispatch(self, tls: dict[str, str]) -> str:
        endpoint = f"https://127.0.0.1:{self.server.port}"
        return f'{{otlp: {{endpoint: "{endpoint}", tls: {flow(tls)}}}}}'


class Syslog:
    """A syslog-over-TLS receiver (RFC 5425) requiring a client certificate: it reads
    each connection to its end and keeps the bytes of those whose handshake held."""

    def __init__(self, ca, tmp_path):
        self.ctx = requiring(ca)
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.received: list[bytes] = []
        self.refused = 0
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return  # closed
            conn.settimeout(30)
            try:
                with self.ctx.wrap_socket(conn, server_side=True) as tls:
                    data = b""
                    while chunk := tls.recv(65536):
                        data += chunk
                    self.received.append(data)
                    tls.unwrap()  # our close_notify: the sender's batch is read
            except (ssl.SSLError, OSError):
                self.refused += 1  # no certificate of the CA: the handshake failed

    def dispatch(self, tls: dict[str, str]) -> str:
        fields = flow({"host": "127.0.0.1", "port": str(self.port), "protocol": "tls", **tls})
        return f"{{syslog: {fields}}}"

    def delivered(self) -> bool:
        return any(b"session_start" in x for x in self.received)

    def close(self) -> None:
        self.sock.close()


def flow(fields: dict[str, str]) -> str:
    """A YAML flow mapping of the fields."""
    return "{" + ", ".join(f"{k}: {v}" for k, v in fields.items()) + "}"


@pytest.mark.parametrize("kind", [Http, Otlp, Syslog], ids=["http", "otlp", "syslog"])
def test_refused_without_a_client_certificate_then_delivered_with_one(install, pki, tmp_path, kind):
    ca, client = pki
    target = kind(ca, tmp_path)
    try:
        sensor(install, target.dispatch({"ca_file": str(ca["ca"])}))
        play(install, ["SessionStart"])
        assert wait_until(lambda: counters_of(install, "m/r")["errors"] >= 1, timeout=60)
        assert not target.delivered()
        with_cert = {"ca_file": str(ca["ca"]), "cert_file": str(client["cert"])}
        sensor(install, target.dispatch({**with_cert, "key_file": str(client["key"])}))
        play(install, ["UserPromptSubmit"])  # the next event: the dispatcher reads the rule again
        assert wait_until(target.delivered, timeout=90)
        # counted once the sender has the consumer's answer (syslog: its close_notify,
        # after the bytes arrived) and the dispatcher flushed its counts
        assert wait_until(lambda: counters_of(install, "m/r")["delivered"] == 1, timeout=60)
        assert counters_of(install, "m/r")["retries"] >= 1
    finally:
        target.close()


def test_the_server_name_is_verified(install, pki, tmp_path):
    ca, client = pki
    target = Http(ca, tmp_path)
    try:
        tls = {"ca_file": str(ca["ca"]), "cert_file": str(client["cert"])}
        tls |= {"key_file": str(client["key"]), "server_name": "collector.wrong.example"}
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
