"""A real rsyslogd for tests: Debian's `rsyslog`, started on loopback with a config and
work folder of the test's own (never the system's), receiving on TCP, TLS (its OpenSSL
driver, a throwaway CA made with `openssl`) or UDP, and writing each message it parsed
as one JSON line of the fields rsyslog's RFC 5424 parser found (`received()`), and as its
documented RSYSLOG_FileFormat stores it (`stored`, what `ways sensors verify` reads).

rsyslogd runs in the foreground (-n) as the test's child; `kill()` SIGKILLs it, `start()`
starts it again on the same port. Its main queue is `Direct`: the input thread itself
writes each message to the file before it reads the next, so once rsyslogd has read a
byte, its message is on disk (the kill test depends on nothing else).

`sh scripts/setup.sh` installs rsyslog and rsyslog-openssl when they are missing and it
runs as root (CI); elsewhere `apt-get install rsyslog rsyslog-openssl`.
"""

from __future__ import annotations

import glob
import json
import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path
from typing import Any

RSYSLOGD = shutil.which("rsyslogd") or "/usr/sbin/rsyslogd"
SD_ID = "ways@32473"

# every field rsyslog parsed, as one JSON object a line; $!rfc5424-sd is mmpstrucdata's
# parse of the STRUCTURED-DATA into SD-ID -> {param: value}
TEMPLATE = """
template(name="fields" type="list" option.jsonf="on") {
  property(outname="pri" name="pri" format="jsonf")
  property(outname="facility" name="syslogfacility-text" format="jsonf")
  property(outname="severity" name="syslogseverity-text" format="jsonf")
  property(outname="protocol_version" name="protocol-version" format="jsonf")
  property(outname="timestamp" name="timereported" dateFormat="rfc3339" format="jsonf")
  property(outname="hostname" name="hostname" format="jsonf")
  property(outname="app_name" name="app-name" format="jsonf")
  property(outname="procid" name="procid" format="jsonf")
  property(outname="msgid" name="msgid" format="jsonf")
  property(outname="structured_data" name="structured-data" format="jsonf")
  property(outname="sd" name="$!rfc5424-sd" format="jsonf")
  property(outname="msg" name="msg" format="jsonf")
}
"""


def relp_missing() -> str | None:
    """Why imrelp cannot be loaded here, or None (setup.sh installs rsyslog-relp)."""
    if not glob.glob("/usr/lib/*/rsyslog/imrelp.so"):
        return "rsyslog-relp is not installed: apt-get install rsyslog-relp"
    return None


def missing() -> str | None:
    """Why rsyslog cannot run here, with the next step; None when it can."""
    if not os.access(RSYSLOGD, os.X_OK):
        return "rsyslogd is not installed: apt-get install rsyslog (sh scripts/setup.sh as root)"
    if not glob.glob("/usr/lib/*/rsyslog/lmnsd_ossl.so"):
        return "rsyslog's OpenSSL driver is missing: apt-get install rsyslog-openssl"
    return None


def make_ca(folder: Path) -> dict[str, Path]:
    """A throwaway CA and a server certificate for localhost and 127.0.0.1."""
    folder.mkdir(parents=True, exist_ok=True)
    names = ("ca.key", "ca.pem", "server.key", "server.csr", "server.pem")
    ca_key, ca, key, csr, cert = (folder / n for n in names)
    ext = folder / "san.ext"
    ext.write_text("subjectAltName=DNS:localhost,IP:127.0.0.1\n")

    def run(*args: str) -> None:
        subprocess.run(["openssl", *args], check=True, capture_output=True, timeout=60)

    run("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(ca_key), "-out",
        str(ca), "-days", "2", "-subj", "/CN=ways test CA")  # fmt: skip
    run("req", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out", str(csr),
        "-subj", "/CN=localhost")  # fmt: skip
    run("x509", "-req", "-in", str(csr), "-CA", str(ca), "-CAkey", str(ca_key),
        "-CAcreateserial", "-out", str(cert), "-days", "2", "-extfile", str(ext))  # fmt: skip
    return {"ca": ca, "cert": cert, "key": key}


def client_cert(ca: dict[str, Path], folder: Path, name: str = "client") -> dict[str, Path]:
    """A client certificate signed by make_ca's CA (for servers that require one)."""
    folder.mkdir(parents=True, exist_ok=True)
    key, csr, cert = (folder / f"{name}.{x}" for x in ("key", "csr", "pem"))

    def run(*args: str) -> None:
        subprocess.run(["openssl", *args], check=True, capture_output=True, timeout=60)

    request = ["-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out", str(csr)]
    run("req", *request, "-subj", f"/CN={name}")
    signer = ["-CA", str(ca["ca"]), "-CAkey", str(ca["ca"].with_name("ca.key"))]
    run("x509", "-req", "-in", str(csr), *signer, "-CAcreateserial", "-out", str(cert))
    return {"cert": cert, "key": key}


def free_udp_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Rsyslog:
    def __init__(self, folder: Path, protocol: str = "tcp", max_message: str | None = "4m"):
        why = missing()
        assert why is None, why
        if protocol.startswith("relp"):
            why = relp_missing()
            assert why is None, why
        self.folder = folder
        self.protocol = protocol
        self.max_message = max_message  # None: rsyslog's default (8 KiB)
        self.work = folder / "work"
        self.work.mkdir(parents=True, exist_ok=True)
        self.out = folder / "received.jsonl"
        self.stored = folder / "stored.log"  # as a user's rsyslog stores messages
        self.conf = folder / "rsyslog.conf"
        self.pidfile = folder / "rsyslogd.pid"
        self.portfile = folder / "port"
        self.certs = make_ca(folder / "tls") if protocol in ("tls", "relp-tls") else {}
        self.port = free_udp_port() if protocol == "udp" else 0
        if protocol.startswith("relp"):  # imrelp writes no port file: a port of ours
            from .servers import free_port

            self.port = free_port()
        self.proc: subprocess.Popen[bytes] | None = None
        self.start()

    def _config(self) -> str:
        size = f' maxMessageSize="{self.max_message}"' if self.max_message else ""
        lines = [f'global(workDirectory="{self.work}"{size})']
        if self.protocol == "tls":
            lines.append(
                f'global(defaultNetstreamDriver="ossl" '
                f'defaultNetstreamDriverCAFile="{self.certs["ca"]}" '
                f'defaultNetstreamDriverCertFile="{self.certs["cert"]}" '
                f'defaultNetstreamDriverKeyFile="{self.certs["key"]}")'
            )
        lines.append('main_queue(queue.type="Direct")')
        lines.append('module(load="mmpstrucdata")')
        if self.protocol.startswith("relp"):  # Debian's rsyslog-relp
            lines.append('module(load="imrelp")')
            tls = ""
            if self.protocol == "relp-tls":  # mutual TLS: clients need a certificate of the CA
                tls = (
                    f' tls="on" tls.caCert="{self.certs["ca"]}" tls.authMode="certvalid"'
                    f' tls.myCert="{self.certs["cert"]}" tls.myPrivKey="{self.certs["key"]}"'
                )
            lines.append(f'input(type="imrelp" address="127.0.0.1" port="{self.port}"{tls})')
        elif self.protocol == "udp":
            lines.append('module(load="imudp")')
            lines.append(f'input(type="imudp" address="127.0.0.1" port="{self.port}")')
        else:
            driver = ""
            if self.protocol == "tls":
                driver = ' streamDriver.name="ossl" streamDriver.mode="1" ' \
                         'streamDriver.authMode="anon"'  # fmt: skip
            lines.append('module(load="imtcp")')
            lines.append(
                f'input(type="imtcp" address="127.0.0.1" port="{self.port}" '
                f'listenPortFileName="{self.portfile}"{driver})'
            )
        lines.append(TEMPLATE)
        lines.append('action(type="mmpstrucdata")')
        lines.append(f'action(type="omfile" file="{self.out}" template="fields")')
        # rsyslog's documented file format (high-precision timestamp, host, tag, MSG)
        lines.append(f'action(type="omfile" file="{self.stored}" template="RSYSLOG_FileFormat")')
        return "\n".join(lines) + "\n"

    def start(self, timeout: float = 30.0) -> None:
        self.conf.write_text(self._config())
        self.portfile.unlink(missing_ok=True)
        with open(self.folder / "rsyslogd.err", "ab") as err:
            self.proc = subprocess.Popen(
                [RSYSLOGD, "-n", "-f", str(self.conf), "-i", str(self.pidfile)],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=err,
            )
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            assert self.proc.poll() is None, (self.folder / "rsyslogd.err").read_text()
            if self.protocol == "udp":
                if self._udp_bound():
                    return
            elif self.port and self._accepts():  # a restart: the port it had before
                return
            elif self.portfile.exists() and self.portfile.read_text().strip():
                self.port = int(self.portfile.read_text().strip())  # rsyslog's port-0 pick
            time.sleep(0.05)
        raise AssertionError("rsyslogd did not start listening")

    def _accepts(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                return True
        except OSError:
            return False

    def _udp_bound(self) -> bool:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            try:
                s.bind(("127.0.0.1", self.port))
            except OSError:
                return True  # taken: rsyslogd holds it
            return False

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(timeout=30)
        self.pidfile.unlink(missing_ok=True)

    def received(self) -> list[dict[str, Any]]:
        if not self.out.exists():
            return []
        return [json.loads(x) for x in self.out.read_text().splitlines() if x.strip()]

    def wait_for(self, n: int, timeout: float = 60.0) -> list[dict[str, Any]]:
        end = time.monotonic() + timeout
        got = self.received()
        while len(got) < n and time.monotonic() < end:
            time.sleep(0.05)
            got = self.received()
        return got

    def close(self) -> None:
        self.kill()
