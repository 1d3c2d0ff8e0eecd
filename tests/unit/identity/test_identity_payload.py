"""Device-auth payload strings, checked against a frame captured from the real gateway."""

from __future__ import annotations

import pytest

from openclaw_desktop.identity import (
    b64url_decode,
    build_payload_v2,
    build_payload_v3,
    device_id_for,
    normalize_device_metadata,
    normalize_public_key,
    signature_token,
    verify_signature,
)

# From real-gateway-observed.md section 2: an operator connect the real gateway accepted.
REAL_DEVICE_ID = "88a4d83a94cbc8231289273535eb61453087a816368fea490fd7ed482e294d75"
REAL_PUBLIC_KEY = "w1tF0k6A6Udo13b50tQToiyU74nTScuJShZTpxQthm4"
REAL_SIGNATURE = (
    "REABgoPAhU82OSrcWfKeBsGaH7vvxfxr-c-kA13ITUY8KJAJyD7piqgnHsySXFpW8gf_dlfKMmwFcEoPgu0yBg"
)
REAL_SCOPES = [
    "operator.read",
    "operator.write",
    "operator.admin",
    "operator.approvals",
    "operator.pairing",
    "operator.talk",
    "operator.talk.secrets",
    "operator.questions",
]
REAL_NONCE = "d9b822e8-4000-4987-9480-cf4472d36881"
REAL_SIGNED_AT = 1796023931231
REAL_PAYLOAD = (
    "v3|88a4d83a94cbc8231289273535eb61453087a816368fea490fd7ed482e294d75|cli|cli|operator|"
    "operator.read,operator.write,operator.admin,operator.approvals,operator.pairing,"
    "operator.talk,operator.talk.secrets,operator.questions|1796023931231|test-token-123|"
    "d9b822e8-4000-4987-9480-cf4472d36881|linux|"
)


def _real_v3() -> str:
    return build_payload_v3(
        device_id=REAL_DEVICE_ID,
        client_id="cli",
        client_mode="cli",
        role="operator",
        scopes=REAL_SCOPES,
        signed_at_ms=REAL_SIGNED_AT,
        token="test-token-123",
        nonce=REAL_NONCE,
        platform="linux",
        device_family=None,
    )


def test_real_frame_payload_is_reproduced_exactly() -> None:
    """The v3 builder yields byte for byte the payload the real gateway accepted."""
    assert _real_v3() == REAL_PAYLOAD


def test_real_public_key_hashes_to_real_device_id() -> None:
    """sha256 of the observed raw public key is the observed device id."""
    assert device_id_for(normalize_public_key(REAL_PUBLIC_KEY)) == REAL_DEVICE_ID


def test_real_signature_verifies_over_real_payload() -> None:
    """The captured signature verifies over our payload with the captured key."""
    assert verify_signature(normalize_public_key(REAL_PUBLIC_KEY), _real_v3(), REAL_SIGNATURE)


def test_real_signature_fails_when_any_field_changes() -> None:
    """Changing the platform after signing breaks the proof, as on the real gateway."""
    tampered = REAL_PAYLOAD.replace("|linux|", "|darwin|")
    assert not verify_signature(normalize_public_key(REAL_PUBLIC_KEY), tampered, REAL_SIGNATURE)


def test_real_signature_is_64_bytes() -> None:
    """The captured signature decodes to a 64-byte Ed25519 signature."""
    assert len(b64url_decode(REAL_SIGNATURE)) == 64


def test_v2_payload_has_no_platform_fields() -> None:
    """v2 is the v3 string without platform and device family, prefixed v2."""
    payload = build_payload_v2(
        device_id="dev",
        client_id="node-host",
        client_mode="node",
        role="node",
        scopes=[],
        signed_at_ms=5,
        token=None,
        nonce="n",
    )
    assert payload == "v2|dev|node-host|node|node||5||n"


def test_v3_normalizes_platform_and_family() -> None:
    """v3 trims and ASCII-lowercases platform and device family."""
    payload = build_payload_v3(
        device_id="dev",
        client_id="node-host",
        client_mode="node",
        role="node",
        scopes=[],
        signed_at_ms=7,
        token="tok",
        nonce="n",
        platform=" Linux ",
        device_family="Linux",
    )
    assert payload == "v3|dev|node-host|node|node||7|tok|n|linux|linux"


def test_scopes_keep_order_and_duplicates() -> None:
    """Scopes are joined in the order given, without sorting or deduplication."""
    payload = build_payload_v2(
        device_id="d",
        client_id="c",
        client_mode="m",
        role="operator",
        scopes=("operator.write", "operator.read", "operator.write"),
        signed_at_ms=1,
        token="",
        nonce="n",
    )
    assert payload.split("|")[5] == "operator.write,operator.read,operator.write"


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (None, ""),
        ("", ""),
        (" Linux ", "linux"),
        ("\tMacOS\n", "macos"),
        ("iPhone", "iphone"),
        ("ÄÖÜ-Linux", "ÄÖÜ-linux"),
        ("İSTANBUL", "İstanbul"),
        ("\u00a0Windows\ufeff", "windows"),
    ],
)
def test_normalize_device_metadata(value: str | None, expected: str) -> None:
    """Only whitespace is trimmed and only ASCII A-Z are lowercased."""
    assert normalize_device_metadata(value) == expected


@pytest.mark.parametrize(
    ("auth", "expected"),
    [
        (None, ""),
        ({}, ""),
        ({"password": "pw"}, ""),
        ({"bootstrapToken": "boot"}, "boot"),
        ({"deviceToken": "dev", "bootstrapToken": "boot"}, "dev"),
        ({"token": "shared", "deviceToken": "dev"}, "shared"),
        ({"token": None, "deviceToken": "dev"}, "dev"),
        ({"token": "", "deviceToken": "dev"}, ""),
    ],
)
def test_signature_token_precedence(auth: dict[str, str | None] | None, expected: str) -> None:
    """token beats deviceToken beats bootstrapToken; only null/absent falls through."""
    assert signature_token(auth) == expected


def test_signature_token_rejects_non_string() -> None:
    """A non-string token is a caller bug, not something to sign."""
    with pytest.raises(TypeError):
        signature_token({"token": 5})
