"""Key files: an Ed25519 private key as PKCS#8 PEM, written and read without cryptography's
`serialization` package (about 5 ms of every dispatcher's start, with the RSA, DSA, DH,
EC and SSH modules it loads), which is imported only for a key file in another PEM form
than the one written here; and config.yaml's `ways.evidence.epoch_seconds`."""

from __future__ import annotations

import base64

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

DEFAULT_EPOCH_SECONDS = 3600.0

# An Ed25519 key's PKCS#8 (RFC 8410) DER is this prefix and the 32-byte seed: its PEM is
# what cryptography writes for it (serialization.PrivateFormat.PKCS8, no encryption)
PKCS8_ED25519 = bytes.fromhex("302e020100300506032b657004220420")
PEM_HEAD, PEM_TAIL = "-----BEGIN PRIVATE KEY-----\n", "\n-----END PRIVATE KEY-----\n"


def pem(key: Ed25519PrivateKey) -> bytes:
    body = base64.b64encode(PKCS8_ED25519 + key.private_bytes_raw()).decode()
    return (PEM_HEAD + body + PEM_TAIL).encode()


def pkcs8_seed(text: str) -> bytes | None:
    """The seed of a key file exactly as `pem` writes it; None for any other text."""
    if not (text.startswith(PEM_HEAD) and text.endswith(PEM_TAIL)):
        return None
    try:
        der = base64.b64decode(text[len(PEM_HEAD) : -len(PEM_TAIL)], validate=True)
    except ValueError:
        return None
    if len(der) != len(PKCS8_ED25519) + 32 or not der.startswith(PKCS8_ED25519):
        return None
    return der[len(PKCS8_ED25519) :]


def epoch_seconds() -> float:
    """`ways.evidence.epoch_seconds` from config.yaml (a positive number), else 3600."""
    from ..layers import read_config

    try:
        config, _ = read_config()
    except Exception:
        return DEFAULT_EPOCH_SECONDS
    node = config.get("ways") if isinstance(config, dict) else None
    node = node.get("evidence") if isinstance(node, dict) else None
    value = node.get("epoch_seconds") if isinstance(node, dict) else None
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0:
        return float(value)
    return DEFAULT_EPOCH_SECONDS
