"""Device proof checks: order, payload versions, key encodings and clock skew."""

from __future__ import annotations

import base64
import hashlib
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.ec import SECP256R1, generate_private_key
from cryptography.hazmat.primitives.serialization import (
    Encoding,
    NoEncryption,
    PrivateFormat,
    PublicFormat,
)
from hypothesis import given
from hypothesis import strategies as st

from gateway.handshake import (
    ConnectRejection,
    decode_node_base64,
    public_key_bytes,
    validate_connect_params,
    verify_device_proof,
)
from gateway.handshake.proof import decode_node_base64_lenient
from openclaw_desktop.identity import DeviceIdentity
from tests.helpers.handshake_cases import CaseContext, Challenge, signed_params

NONCE = "d9b822e8-4000-4987-9480-cf4472d36881"
TS = 1_796_023_931_231
IDENTITY = DeviceIdentity.from_seed(bytes(range(32)), created_at_ms=0)
CTX = CaseContext(Challenge(NONCE, TS), IDENTITY, "tok")


def _params(**kw: Any) -> dict[str, Any]:
    return signed_params(CTX, **kw)


def _verify(params: dict[str, Any], now_ms: int = TS) -> Any:
    return verify_device_proof(validate_connect_params(params), nonce=NONCE, now_ms=now_ms)


def _reason(params: dict[str, Any], now_ms: int = TS) -> str:
    with pytest.raises(ConnectRejection) as caught:
        _verify(params, now_ms)
    details = caught.value.details
    assert details is not None
    return str(details["reason"])


def test_v3_proof_passes() -> None:
    """A correct v3 proof verifies and reports the normalized key."""
    device = _verify(_params())

    assert device.device_id == IDENTITY.device_id
    assert device.public_key_raw == IDENTITY.public_key_raw
    assert device.public_key_b64url == IDENTITY.public_key
    assert device.payload_version == "v3"


def test_v2_proof_is_still_accepted() -> None:
    """A legacy v2 signature is accepted and reported as v2."""
    assert _verify(_params(version="v2")).payload_version == "v2"


def test_role_omitted_signs_as_operator() -> None:
    """Without a role, the payload is rebuilt with role operator."""
    assert _verify(_params(role=None)).payload_version == "v3"


def test_signed_token_is_the_shared_token() -> None:
    """The shared token is signed even when a device token is sent too."""
    params = _params()
    params["auth"]["deviceToken"] = "other"

    assert _verify(params).payload_version == "v3"


def test_no_auth_signs_an_empty_token() -> None:
    """No auth object signs an empty token field."""
    assert _verify(_params(token=None)).payload_version == "v3"


def test_platform_changed_after_signing_is_invalid() -> None:
    """v3 binds the platform: changing it breaks the signature."""
    params = _params()
    params["client"]["platform"] = "darwin"

    assert _reason(params) == "device-signature"


def test_platform_case_and_spaces_are_normalized() -> None:
    """Platform is trimmed and ASCII-lowercased before it is signed."""
    params = _params(platform="linux")
    params["client"]["platform"] = "  LINUX "

    assert _verify(params).payload_version == "v3"


@pytest.mark.parametrize("skew", [-120_000, 120_000, 0])
def test_skew_bounds_are_accepted(skew: int) -> None:
    """signedAt exactly 120 000 ms away either way is still fresh."""
    assert _verify(_params(), now_ms=TS + skew).device_id == IDENTITY.device_id


@pytest.mark.parametrize("skew", [-120_001, 120_001])
def test_skew_beyond_bounds_is_expired(skew: int) -> None:
    """One millisecond past the window is expired."""
    assert _reason(_params(), now_ms=TS + skew) == "device-signature-stale"


def test_nonce_is_trimmed_before_comparing_and_signing() -> None:
    """A nonce with surrounding spaces matches and is signed trimmed."""
    assert _verify(_params(nonce=f"  {NONCE}\t")).payload_version == "v3"


def test_blank_nonce_is_required() -> None:
    """A whitespace-only nonce counts as missing."""
    assert _reason(_params(nonce="   ")) == "device-nonce-missing"


def test_wrong_nonce_mismatches() -> None:
    """Another nonce than the challenge's is a mismatch."""
    assert _reason(_params(nonce="other")) == "device-nonce-mismatch"


def test_device_id_is_checked_first() -> None:
    """A wrong id wins over a stale time, a wrong nonce and a bad signature."""
    params = _params(signed_at=1, nonce="other")
    params["device"]["id"] = "0" * 64
    params["device"]["signature"] = "AAAA"

    assert _reason(params) == "device-id-mismatch"


def test_expiry_is_checked_before_the_nonce() -> None:
    """A stale proof with a wrong nonce is reported as expired."""
    assert _reason(_params(signed_at=1, nonce="other")) == "device-signature-stale"


def test_nonce_is_checked_before_the_signature() -> None:
    """A wrong nonce with a broken signature is reported as a nonce mismatch."""
    params = _params(nonce="other")
    params["device"]["signature"] = "AAAA"

    assert _reason(params) == "device-nonce-mismatch"


def test_upper_case_device_id_mismatches() -> None:
    """The id comparison is case-sensitive."""
    params = _params()
    params["device"]["id"] = IDENTITY.device_id.upper()

    assert _reason(params) == "device-id-mismatch"


def test_undecodable_key_is_an_id_mismatch() -> None:
    """A key that decodes to nothing fails the id check, not a key check."""
    params = _params()
    params["device"]["publicKey"] = "!!!!"

    assert _reason(params) == "device-id-mismatch"


def test_short_key_with_its_own_id_fails_the_signature() -> None:
    """A 16-byte key gets a device id, then cannot verify anything."""
    raw = b"0123456789abcdef"
    params = _params()
    params["device"]["publicKey"] = base64.urlsafe_b64encode(raw).decode()
    params["device"]["id"] = hashlib.sha256(raw).hexdigest()

    assert _reason(params) == "device-signature"


@pytest.mark.parametrize(
    "encode",
    [
        lambda i: base64.b64encode(i.public_key_raw).decode(),
        lambda i: base64.urlsafe_b64encode(i.public_key_raw).decode(),
        lambda i: (
            i.private_key.public_key()
            .public_bytes(Encoding.PEM, PublicFormat.SubjectPublicKeyInfo)
            .decode()
        ),
        lambda i: i.private_key.private_bytes(
            Encoding.PEM, PrivateFormat.PKCS8, NoEncryption()
        ).decode(),
        lambda i: f"*{i.public_key[:9]}!!{i.public_key[9:]}==junk",
    ],
    ids=["padded-std-base64", "padded-base64url", "pem-spki", "pem-pkcs8", "junk-characters"],
)
def test_accepted_key_encodings(encode: Any) -> None:
    """Padded base64, PEM and junk-tolerant base64 all decode to the same key."""
    params = _params()
    params["device"]["publicKey"] = encode(IDENTITY)

    device = _verify(params)

    assert device.public_key_raw == IDENTITY.public_key_raw
    assert device.public_key_b64url == IDENTITY.public_key


def test_padded_signature_is_accepted() -> None:
    """The signature is decoded leniently too."""
    params = _params()
    params["device"]["signature"] += "=="

    assert _verify(params).payload_version == "v3"


def test_non_ed25519_pem_key_is_an_id_mismatch() -> None:
    """A PEM key of another type cannot give a device id."""
    pem = (
        generate_private_key(SECP256R1())
        .public_key()
        .public_bytes(Encoding.PEM, PublicFormat.SubjectPublicKeyInfo)
    )

    assert public_key_bytes(pem.decode()) is None


@pytest.mark.parametrize(
    ("text", "hex_bytes"),
    [
        ("QUJD", "414243"),
        ("QU JD", "414243"),
        ("QU*JD", "414243"),
        ("QUJD=QUJD", "414243"),
        ("QUI", "4142"),
        ("QUJ=D", "4142"),
        ("Q", ""),
        ("QR==", "41"),
        ("_-_-", "ffeffe"),
        ("QUJDRA=A", "41424344"),
        ("QU\u0141JD", "414009"),
        ("QU\U0001f600JD", "41"),
    ],
)
def test_decode_like_node(text: str, hex_bytes: str) -> None:
    """Base64 decoding matches what Node's Buffer.from(text, 'base64') gave for these inputs."""
    assert decode_node_base64(text).hex() == hex_bytes


def test_decode_refuses_very_long_text() -> None:
    """Text over 4096 characters is refused, as by the gateway."""
    with pytest.raises(ValueError, match="maximum"):
        decode_node_base64("A" * 4097)


def test_proof_requires_a_device() -> None:
    """Calling the proof check without a device is a programming error."""
    with pytest.raises(ValueError, match="no device"):
        verify_device_proof(validate_connect_params(_params(device=False)), nonce=NONCE, now_ms=TS)


@given(
    st.text(alphabet="ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/-_=\u00e9 .")
)
def test_fast_path_decodes_like_the_lenient_walk(text: str) -> None:
    """Canonical input takes the standard decoder; every input decodes as Node's walk does."""
    assert decode_node_base64(text) == decode_node_base64_lenient(text)
