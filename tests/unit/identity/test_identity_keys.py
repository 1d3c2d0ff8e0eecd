"""Base64url helpers, public-key encodings, device ids and signature checks."""

from __future__ import annotations

import base64

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from openclaw_desktop.identity import (
    ED25519_SPKI_PREFIX,
    DeviceIdentity,
    InvalidPublicKey,
    b64url_decode,
    b64url_encode,
    device_id_for,
    normalize_public_key,
    verify_signature,
)


@pytest.mark.parametrize("size", [0, 1, 2, 3, 31, 32, 33, 64])
def test_b64url_round_trip_unpadded(size: int) -> None:
    """Encoding has no padding and decodes back to the same bytes."""
    data = bytes(range(256))[:size] or b""
    text = b64url_encode(data)
    assert "=" not in text
    assert "+" not in text
    assert "/" not in text
    assert b64url_decode(text) == data


def test_b64url_decode_accepts_padding() -> None:
    """Correctly padded base64url decodes too."""
    assert b64url_decode("YQ==") == b"a"
    assert b64url_decode("YQ") == b"a"


@pytest.mark.parametrize("garbage", ["Y", "YQ=", "YQ===", "a+b/", "ab cd", "ab!", "Y=Q="])
def test_b64url_decode_rejects_garbage(garbage: str) -> None:
    """Foreign characters, bad padding and impossible lengths raise ValueError."""
    with pytest.raises(ValueError, match="base64url"):
        b64url_decode(garbage)


def _raw_key() -> bytes:
    return Ed25519PrivateKey.generate().public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)


def test_public_key_raw_base64url() -> None:
    """The wire form (unpadded base64url of the raw key) normalizes to the raw key."""
    raw = _raw_key()
    assert normalize_public_key(b64url_encode(raw)) == raw


def test_public_key_padded_standard_base64() -> None:
    """Standard padded base64 of the raw key is accepted."""
    raw = b"\xfb\xff" * 16  # forces '+' and '/' in standard base64
    text = base64.b64encode(raw).decode()
    assert "+" in text or "/" in text
    assert text.endswith("=")
    assert normalize_public_key(text) == raw


def test_public_key_pem_spki() -> None:
    """A PEM SubjectPublicKeyInfo block yields the raw key after the SPKI prefix."""
    key = Ed25519PrivateKey.generate().public_key()
    pem = key.public_bytes(Encoding.PEM, PublicFormat.SubjectPublicKeyInfo).decode()
    raw = key.public_bytes(Encoding.Raw, PublicFormat.Raw)
    assert normalize_public_key(pem) == raw
    der = key.public_bytes(Encoding.DER, PublicFormat.SubjectPublicKeyInfo)
    assert der[: len(ED25519_SPKI_PREFIX)] == ED25519_SPKI_PREFIX


@pytest.mark.parametrize(
    "bad",
    [
        "",
        "   ",
        "not base64 at all!",
        b64url_encode(b"\x01" * 31),
        b64url_encode(b"\x01" * 33),
        b64url_encode(ED25519_SPKI_PREFIX + b"\x01" * 32),
        "-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----",
        "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----",
        "A" * 5000,
        "ab-c+d/e",
    ],
)
def test_invalid_public_keys(bad: str) -> None:
    """Wrong lengths, wrong PEM blocks and garbage raise InvalidPublicKey."""
    with pytest.raises(InvalidPublicKey):
        normalize_public_key(bad)


def test_pem_with_other_algorithm_rejected() -> None:
    """A PEM public key of another algorithm (X25519-sized but different OID) is refused."""
    from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey

    pem = (
        X25519PrivateKey.generate()
        .public_key()
        .public_bytes(Encoding.PEM, PublicFormat.SubjectPublicKeyInfo)
        .decode()
    )
    with pytest.raises(InvalidPublicKey):
        normalize_public_key(pem)


def test_invalid_public_key_is_a_value_error() -> None:
    """Callers can catch InvalidPublicKey as ValueError."""
    assert issubclass(InvalidPublicKey, ValueError)


def test_device_id_is_lower_hex_sha256() -> None:
    """The device id is 64 lowercase hex characters."""
    device_id = device_id_for(b"\x00" * 32)
    assert device_id == "66687aadf862bd776c8fc18b8e9f8e20089714856ee233b3902a591d0d5f2925"
    with pytest.raises(InvalidPublicKey):
        device_id_for(b"\x00" * 31)


def test_verify_signature_never_raises() -> None:
    """Malformed keys and signatures give False instead of an exception."""
    identity = DeviceIdentity.generate()
    raw = identity.public_key_raw
    good = identity.sign("payload")
    assert verify_signature(raw, "payload", good)
    assert verify_signature(raw, "payload", good + "==")
    assert not verify_signature(raw, "payload!", good)
    assert not verify_signature(raw[:31], "payload", good)
    assert not verify_signature(raw, "payload", "")
    assert not verify_signature(raw, "payload", "!!!")
    assert not verify_signature(raw, "payload", good[:-4])
    assert not verify_signature(raw, "payload", "A" * 300)
    assert not verify_signature(raw, "\ud800", good)
    assert not verify_signature(None, "payload", good)  # type: ignore[arg-type]
    assert not verify_signature(raw, "payload", None)  # type: ignore[arg-type]
