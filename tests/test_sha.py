"""sha.py: the package's SHA-256 and HMAC-SHA256 equal hashlib's and hmac's, in the
default mode (OpenSSL) and in the hook's light mode (the built-in SHA-256), and the
light mode never loads OpenSSL."""

from __future__ import annotations

import hashlib
import hmac
import json
import subprocess
import sys
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from ways_sensors import sha

REPO = Path(__file__).resolve().parent.parent


@given(st.binary(max_size=300), st.binary(max_size=2000))
def test_the_default_mode_agrees_with_hashlib_and_hmac(key, data):
    assert sha.sha256_hex(data) == hashlib.sha256(data).hexdigest()
    assert sha.hmac_sha256_hex(key, data) == hmac.new(key, data, hashlib.sha256).hexdigest()


def test_the_light_mode_agrees_and_never_loads_openssl():
    """Keys shorter than, equal to and longer than SHA-256's block (64 bytes)."""
    cases = [(b"k" * n, bytes(range(256)) * 3) for n in (0, 1, 32, 63, 64, 65, 200)]
    code = (
        "import json, sys\n"
        f"sys.path[0] = {str(REPO)!r}\n"
        "from ways_sensors import sha\n"
        "sha.light()\n"
        f"cases = {cases!r}\n"
        "out = [[sha.sha256_hex(d), sha.hmac_sha256_hex(k, d)] for k, d in cases]\n"
        "print(json.dumps([out, sorted({'hashlib', '_hashlib', 'hmac'} & set(sys.modules))]))\n"
    )
    run = subprocess.run([sys.executable, "-S", "-c", code], capture_output=True, check=True)
    digests, loaded = json.loads(run.stdout)
    assert loaded == []
    assert digests == [
        [hashlib.sha256(d).hexdigest(), hmac.new(k, d, hashlib.sha256).hexdigest()]
        for k, d in cases
    ]
