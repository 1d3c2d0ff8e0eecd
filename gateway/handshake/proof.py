"""The signed device proof of a ``connect``, checked in the real gateway's order.

Order (read from ``connect-device-proof`` of the real gateway 2026.9.6, confirmed live):

1. ``device.id`` must equal the SHA-256 of the decoded public key. A key that cannot be
   decoded at all also ends here: ``device identity mismatch`` (DEVICE_AUTH_DEVICE_ID_MISMATCH).
2. ``device.signedAt`` within +-120 000 ms of the gateway clock (the bounds are accepted),
   else ``device signature expired`` - checked before the nonce, so a stale proof with a
   wrong nonce is reported as expired.
3. ``device.nonce`` trimmed must be non-empty (``device nonce required``) and equal the
   challenge nonce (``device nonce mismatch``). The trimmed nonce is the one signed.
4. The signature must verify over payload v3, else v2 (``device signature invalid``).
5. The gateway then normalizes the key again and would answer ``device public key invalid``
   if that failed; it cannot fail after step 1 succeeded, so this module never raises it.

Key and signature decoding copies Node's behaviour, which is more lenient than
:func:`openclaw_desktop.identity.verify.normalize_public_key`: base64 and base64url text is
decoded by skipping characters outside the alphabet and stopping at the first ``=``; a key of
the wrong length still gets a device id (and then fails the signature check); a PEM key is
recognised by ``BEGIN`` anywhere in the text and parsed by OpenSSL (public key, private key
or certificate).
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import re
from dataclasses import dataclass
from typing import Literal

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from openclaw_desktop.identity.payload import build_payload_v2, build_payload_v3, signature_token
from openclaw_desktop.identity.verify import verify_signature
from openclaw_desktop.protocol import DEVICE_SIGNATURE_SKEW_MS, ConnectParams

from .rejection import ConnectRejection

__all__ = ["VerifiedDevice", "decode_node_base64", "public_key_bytes", "verify_device_proof"]

_MAX_BASE64_TEXT = 4096
_ED25519_KEY_LEN = 32
_CANONICAL_B64 = re.compile(r"[A-Za-z0-9+/_-]*={0,2}")
_URLSAFE_TO_STD = str.maketrans("-_", "+/")
_B64_VALUES = {
    **{
        c: i for i, c in enumerate("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
    },
    "+": 62,
    "/": 63,
    "-": 62,
    "_": 63,
}
_JS_WHITESPACE = (
    "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008"
    "\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
)


@dataclass(frozen=True)
class VerifiedDevice:
    """A device whose proof passed.

    Attributes:
        device_id: ``device.id`` (lowercase hex SHA-256 of the raw key).
        public_key_raw: The decoded public key bytes (32 for a real Ed25519 key).
        public_key_b64url: The key as unpadded base64url, the form the gateway stores.
        payload_version: Which payload the signature covered: ``"v3"`` or ``"v2"``.
    """

    device_id: str
    public_key_raw: bytes
    public_key_b64url: str
    payload_version: Literal["v3", "v2"]


def decode_node_base64(text: str) -> bytes:
    """Decode base64 or base64url text the way Node's ``Buffer.from(text, "base64")`` does.

    Every UTF-16 code unit is cut to its low byte, characters outside both alphabets are
    skipped, decoding stops at the first ``=``, and a trailing lone character is dropped.

    Raises:
        ValueError: If the text is longer than 4096 characters (the gateway's bound).
    """
    if len(text) > _MAX_BASE64_TEXT:
        raise ValueError("base64 input exceeds the maximum allowed length")
    if _CANONICAL_B64.fullmatch(text) and len(text.rstrip("=")) % 4 != 1:
        # Well-formed base64 or base64url (what every real client sends): the standard
        # decoder gives the same bytes as the lenient walk below, much faster.
        core = text.rstrip("=").translate(_URLSAFE_TO_STD)
        return base64.b64decode(core + "=" * (-len(core) % 4))
    return decode_node_base64_lenient(text)


def decode_node_base64_lenient(text: str) -> bytes:
    """:func:`decode_node_base64` without the fast path: Node's walk, character by character."""
    units = text.encode("utf-16-le", "surrogatepass")[::2]
    if len(units) > _MAX_BASE64_TEXT:
        raise ValueError("base64 input exceeds the maximum allowed length")
    sextets: list[int] = []
    for unit in units:
        char = chr(unit)
        if char == "=":
            break
        value = _B64_VALUES.get(char)
        if value is not None:
            sextets.append(value)
    out = bytearray()
    for start in range(0, len(sextets) - len(sextets) % 4, 4):
        a, b, c, d = sextets[start : start + 4]
        out += bytes(((a << 2 | b >> 4) & 0xFF, (b << 4 | c >> 2) & 0xFF, (c << 6 | d) & 0xFF))
    rest = sextets[len(sextets) - len(sextets) % 4 :]
    if len(rest) >= 2:
        out.append((rest[0] << 2 | rest[1] >> 4) & 0xFF)
    if len(rest) == 3:
        out.append((rest[1] << 4 | rest[2] >> 2) & 0xFF)
    return bytes(out)


def public_key_bytes(public_key: str) -> bytes | None:
    """The key bytes the gateway derives ``device.id`` from, or None when it cannot decode.

    Mirrors ``normalizeEd25519PublicKeyBase64Url``: PEM (any text containing ``BEGIN``) must
    hold an Ed25519 key; anything else is decoded leniently and may have any non-zero length.
    """
    if "BEGIN" in public_key:
        return _pem_public_key(public_key)
    try:
        raw = decode_node_base64(public_key)
    except ValueError:
        return None
    return raw or None


def _pem_public_key(text: str) -> bytes | None:
    # PEM keys are rare: the serialization module (and its SSH support) loads only for them.
    from cryptography.hazmat.primitives.serialization import (
        load_pem_private_key,
        load_pem_public_key,
    )

    data = text.encode("utf-8", "surrogatepass")
    key: object = None
    with contextlib.suppress(ValueError, TypeError):
        key = load_pem_public_key(data)
    if key is None:
        with contextlib.suppress(ValueError, TypeError):
            key = load_pem_private_key(data, password=None).public_key()
    if key is None:
        from cryptography.x509 import load_pem_x509_certificate  # rare; x509 loads slowly

        with contextlib.suppress(ValueError, TypeError):
            key = load_pem_x509_certificate(data).public_key()
    if isinstance(key, Ed25519PublicKey):
        return key.public_bytes_raw()
    return None


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def verify_device_proof(params: ConnectParams, *, nonce: str, now_ms: int) -> VerifiedDevice:
    """Check ``params.device`` against the challenge, in the real gateway's order.

    Args:
        params: Validated connect params; ``params.device`` must be set.
        nonce: The ``connect.challenge`` nonce sent on this socket.
        now_ms: The gateway clock, milliseconds since the epoch.

    Returns:
        The verified device.

    Raises:
        ConnectRejection: ``INVALID_REQUEST`` with the matching ``DEVICE_AUTH_*`` details
            and close 1008.
        ValueError: If ``params.device`` is None (handle a missing identity before this).
    """
    device = params.device
    if device is None:
        raise ValueError("connect params carry no device proof")
    raw = public_key_bytes(device.public_key)
    if raw is None or hashlib.sha256(raw).hexdigest() != device.id:
        raise ConnectRejection.device_id_mismatch()
    if abs(now_ms - device.signed_at) > DEVICE_SIGNATURE_SKEW_MS:
        raise ConnectRejection.device_signature_expired()
    provided = device.nonce.strip(_JS_WHITESPACE)
    if not provided:
        raise ConnectRejection.device_nonce_required()
    if provided != nonce:
        raise ConnectRejection.device_nonce_mismatch()
    version = _signed_payload_version(params, raw, provided)
    if version is None:
        raise ConnectRejection.device_signature_invalid()
    return VerifiedDevice(
        device_id=device.id,
        public_key_raw=raw,
        public_key_b64url=_b64url(raw),
        payload_version=version,
    )


def _signed_payload_version(
    params: ConnectParams, raw_key: bytes, nonce: str
) -> Literal["v3", "v2"] | None:
    device = params.device
    assert device is not None
    try:
        signature = _b64url(decode_node_base64(device.signature))
    except ValueError:
        return None
    if len(raw_key) != _ED25519_KEY_LEN:
        return None
    auth = params.auth.model_dump(by_alias=True, exclude_none=True) if params.auth else None
    client = params.client
    role = params.role if params.role is not None else "operator"
    scopes = list(params.scopes or [])
    token = signature_token(auth)
    v3 = build_payload_v3(
        device_id=device.id,
        client_id=str(client.id),
        client_mode=str(client.mode),
        role=role,
        scopes=scopes,
        signed_at_ms=device.signed_at,
        token=token,
        nonce=nonce,
        platform=client.platform,
        device_family=client.device_family,
    )
    if verify_signature(raw_key, v3, signature):
        return "v3"
    v2 = build_payload_v2(
        device_id=device.id,
        client_id=str(client.id),
        client_mode=str(client.mode),
        role=role,
        scopes=scopes,
        signed_at_ms=device.signed_at,
        token=token,
        nonce=nonce,
    )
    if verify_signature(raw_key, v2, signature):
        return "v2"
    return None
