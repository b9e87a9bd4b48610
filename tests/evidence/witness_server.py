"""A tlog-witness for the tests, written from c2sp.org/tlog-witness and
c2sp.org/tlog-cosignature (cosignature/v1, Ed25519), on a loopback port. Like
independent.py it never imports ways_sensors.

Its trust policy is the deployment's business (the spec: "each witness is configured
with a list of supported log public keys"); here a callable gives, per origin, the
(key name, Ed25519 public key) pairs it trusts, or None for an unknown origin.
"""

from __future__ import annotations

import base64
import struct
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from . import independent as ind

Trust = Callable[[str], "list[tuple[str, bytes]] | None"]


class Witness:
    def __init__(self, name: str, trust: Trust) -> None:
        self.name = name
        self.trust = trust
        self.key = Ed25519PrivateKey.generate()
        self.public = self.key.public_key().public_bytes_raw()
        self.state: dict[str, tuple[int, bytes]] = {}  # origin -> latest cosigned (size, root)
        self.answers: list[int] = []  # every status code sent, in order
        self.lock = threading.Lock()
        self.server: ThreadingHTTPServer | None = None

    @property
    def vkey(self) -> str:
        kid = ind.cosigner_key_id(self.name, self.public)
        key = base64.b64encode(b"\x04" + self.public).decode()
        return f"{self.name}+{kid.hex()}+{key}"

    @property
    def url(self) -> str:
        assert self.server is not None
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}"

    def cosign(self, text: str) -> str:
        ts = int(time.time())
        message = b"cosignature/v1\n" + f"time {ts}\n".encode() + text.encode()
        raw = ind.cosigner_key_id(self.name, self.public) + struct.pack(">Q", ts)
        raw += self.key.sign(message)
        return f"{ind.EM_DASH} {self.name} {base64.b64encode(raw).decode()}\n"

    def add_checkpoint(self, body: bytes) -> tuple[int, bytes, str]:
        """(status, body, content type) for one add-checkpoint request body."""
        try:
            text = body.decode("utf-8")
            head, sep, note = text.partition("\n\n")
            lines = head.split("\n")
            assert sep and lines[0].startswith("old ")
            old_text = lines[0][4:]
            assert old_text == "0" or (old_text.isdigit() and not old_text.startswith("0"))
            old = int(old_text)
            proof = [base64.b64decode(x, validate=True) for x in lines[1:]]
            assert len(proof) <= 63 and all(len(p) == 32 for p in proof)
            origin, size, root, _ = ind.checkpoint_body(note)
            cp_text, sigs = ind.split_note(note)
        except (AssertionError, ValueError, UnicodeDecodeError):
            return 400, b"malformed request\n", "text/plain"
        trusted = self.trust(origin)
        if trusted is None:
            return 404, b"unknown origin\n", "text/plain"
        verified = False
        for name, public in trusted:
            kid = ind.ed25519_key_id(name, public)
            for sig_name, raw in sigs:
                if sig_name == name and raw[:4] == kid:
                    if not ind.signed_by(note, name, public):
                        return 403, b"bad signature\n", "text/plain"
                    verified = True
        if not verified:
            return 403, b"no trusted signature\n", "text/plain"
        if old > size:
            return 400, b"old size above the checkpoint size\n", "text/plain"
        with self.lock:  # the check and the update are one step (the spec's race)
            cur_size, cur_root = self.state.get(origin, (0, ind.sha256(b"")))
            if old != cur_size:
                return 409, f"{cur_size}\n".encode(), "text/x.tlog.size"
            if size == 0 and root != ind.sha256(b""):
                return 422, b"size 0 with a root other than the empty tree's\n", "text/plain"
            if old == 0:
                if proof:
                    return 422, b"a proof from size 0\n", "text/plain"
            elif old == size:
                if root != cur_root:
                    return 422, b"same size, another root\n", "text/plain"
            elif not ind.verify_consistency(old, size, cur_root, root, proof):
                return 422, b"consistency proof does not verify\n", "text/plain"
            self.state[origin] = (size, root)
            return 200, self.cosign(cp_text).encode(), "text/plain"

    def __enter__(self) -> Witness:
        witness = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                n = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(n)
                if self.path.rstrip("/").endswith("/add-checkpoint"):
                    status, out, ctype = witness.add_checkpoint(body)
                else:
                    status, out, ctype = 404, b"not found\n", "text/plain"
                witness.answers.append(status)
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(out)))
                self.end_headers()
                self.wfile.write(out)

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        assert self.server is not None
        self.server.shutdown()
        self.server.server_close()
