"""Ed25519 device-proof checks, shared by the client and the bundled gateway.

Imports only the standard library, ``cryptography`` and :mod:`.encoding`, so the bundled
gateway can use it without pulling in the rest of the client.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import re

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from openclaw_desktop.errors import OpenClawError

from .encoding import b64url_decode

__all__ = [
    "ED25519_SPKI_PREFIX",
    "InvalidPublicKey",
    "device_id_for",
    "normalize_public_key",
    "verify_signature",
]

ED25519_SPKI_PREFIX = bytes.fromhex("302a300506032b6570032100")
"""DER prefix of an Ed25519 SubjectPublicKeyInfo; the raw 32-byte key follows it."""

_KEY_LEN = 32
_SIGNATURE_LEN = 64
_MAX_KEY_TEXT = 4096
_MAX_SIGNATURE_TEXT = 256
_PEM = re.compile(
    r"-----BEGIN PUBLIC KEY-----(?P<body>[A-Za-z0-9+/=\s]*)-----END PUBLIC KEY-----",
)
_STD_B64 = re.compile(r"[A-Za-z0-9+/]*={0,2}")


class InvalidPublicKey(OpenClawError, ValueError):
    """A device public key is not an Ed25519 key in an accepted encoding."""


def normalize_public_key(value: str) -> bytes:
    """Decode a device public key to its raw 32 bytes.

    Accepted encodings: base64url of the raw key (padding optional, the wire format),
    standard base64 of the raw key (padding optional), or a PEM ``PUBLIC KEY`` block
    holding an Ed25519 SubjectPublicKeyInfo.

    Args:
        value: The encoded key, e.g. ``connect.params.device.publicKey``.

    Returns:
        The raw 32-byte Ed25519 public key.

    Raises:
        InvalidPublicKey: If the value is none of the accepted encodings.
    """
    text = value.strip()
    if not text or len(text) > _MAX_KEY_TEXT:
        raise InvalidPublicKey("public key is empty or too long")
    if text.startswith("-----BEGIN"):
        return _from_pem(text)
    try:
        if "+" in text or "/" in text:
            if not _STD_B64.fullmatch(text):
                raise ValueError("not base64")
            raw = b64url_decode(text.replace("+", "-").replace("/", "_"))
        else:
            raw = b64url_decode(text)
    except ValueError as exc:
        raise InvalidPublicKey("public key is not base64 or base64url") from exc
    if len(raw) != _KEY_LEN:
        raise InvalidPublicKey(f"public key has {len(raw)} bytes, expected {_KEY_LEN}")
    return raw


def _from_pem(text: str) -> bytes:
    match = _PEM.fullmatch(text)
    if match is None:
        raise InvalidPublicKey("not a PEM PUBLIC KEY block")
    body = "".join(match.group("body").split())
    try:
        der = base64.b64decode(body, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise InvalidPublicKey("PEM body is not base64") from exc
    if len(der) != len(ED25519_SPKI_PREFIX) + _KEY_LEN or not der.startswith(ED25519_SPKI_PREFIX):
        raise InvalidPublicKey("PEM block is not an Ed25519 SubjectPublicKeyInfo")
    return der[len(ED25519_SPKI_PREFIX) :]


def device_id_for(raw_public_key: bytes) -> str:
    """The device id the gateway expects for a key.

    Args:
        raw_public_key: The raw 32-byte Ed25519 public key.

    Returns:
        The lowercase hex SHA-256 of the raw key (64 characters).

    Raises:
        InvalidPublicKey: If the key is not 32 bytes long.
    """
    if len(raw_public_key) != _KEY_LEN:
        raise InvalidPublicKey(f"public key has {len(raw_public_key)} bytes, expected 32")
    return hashlib.sha256(raw_public_key).hexdigest()


def verify_signature(raw_public_key: bytes, payload: str, signature_b64url: str) -> bool:
    """Check an Ed25519 signature over the UTF-8 bytes of a payload string.

    Never raises: any malformed key, payload or signature gives False.

    Args:
        raw_public_key: The raw 32-byte Ed25519 public key.
        payload: The signed payload string (see :mod:`.payload`).
        signature_b64url: The base64url signature (padding optional).

    Returns:
        True only if the signature is valid for this key and payload.
    """
    try:
        if len(raw_public_key) != _KEY_LEN or len(signature_b64url) > _MAX_SIGNATURE_TEXT:
            return False
        signature = b64url_decode(signature_b64url)
        if len(signature) != _SIGNATURE_LEN:
            return False
        key = Ed25519PublicKey.from_public_bytes(bytes(raw_public_key))
        key.verify(signature, payload.encode("utf-8"))
    except (InvalidSignature, ValueError, TypeError, AttributeError):
        return False
    return True
