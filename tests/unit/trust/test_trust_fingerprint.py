"""Unit tests for openclaw_desktop.trust.fingerprint."""

from __future__ import annotations

import hashlib

import pytest

from openclaw_desktop.trust.fingerprint import (
    fingerprint_of_der,
    format_fingerprint,
    normalize_fingerprint,
)

# The value verified live against the real gateway (real-gateway-observed.md, section 7).
FP = "7270b9b1eec5fe809163ace8c347501d3c6ee850aeb91b4d4e56c03eb4f1fd6b"
COLONS = ":".join(FP[i : i + 2] for i in range(0, 64, 2)).upper()


@pytest.mark.parametrize(
    "value",
    [
        FP,
        FP.upper(),
        COLONS,
        COLONS.lower(),
        f"sha256:{FP}",
        f"SHA256:{COLONS}",
        f"sha-256:{FP}",
        f"SHA-256 {FP.upper()}",
        f"sha256 = {FP}",
        f"sha256 Fingerprint={COLONS}",
        f"  {FP}\n",
        " ".join(FP[i : i + 4] for i in range(0, 64, 4)),
        "-".join(FP[i : i + 8] for i in range(0, 64, 8)),
        f"sha256{FP}",
    ],
)
def test_normalize_accepts_common_forms(value: str) -> None:
    """Colon, uppercase, grouped and prefixed forms all normalize to the canonical hex."""
    assert normalize_fingerprint(value) == FP


@pytest.mark.parametrize("value", ["", FP[:-1], FP + "0", FP[:32], "sha256:", COLONS[:-3]])
def test_normalize_rejects_wrong_length(value: str) -> None:
    """Anything but 64 hex digits is refused with the count in the message."""
    with pytest.raises(ValueError, match="64 hex digits"):
        normalize_fingerprint(value)


@pytest.mark.parametrize(
    "value",
    [
        FP[:-1] + "g",
        "z" * 64,
        f"md5:{FP}",
        f"sha1:{FP}",
        f"{FP}.",
        f"0x{FP}",
        FP[:10] + "é" + FP[11:],
    ],
)
def test_normalize_rejects_non_hex(value: str) -> None:
    """Non-hex characters and unknown prefixes are refused."""
    with pytest.raises(ValueError, match="only hex digits"):
        normalize_fingerprint(value)


def test_normalize_error_cuts_long_input() -> None:
    """A huge input is not echoed in full in the error message."""
    with pytest.raises(ValueError, match=r"\.\.\.") as info:
        normalize_fingerprint("x" * 10_000)
    assert len(str(info.value)) < 300


def test_fingerprint_of_der_is_sha256_hex() -> None:
    """The fingerprint is the lowercase hex SHA-256 of the DER bytes."""
    der = b"\x30\x82\x01\x0a not really a certificate"
    assert fingerprint_of_der(der) == hashlib.sha256(der).hexdigest()
    assert normalize_fingerprint(fingerprint_of_der(der)) == fingerprint_of_der(der)


def test_fingerprint_of_empty_der_is_refused() -> None:
    """An empty certificate has no meaningful fingerprint."""
    with pytest.raises(ValueError, match="empty"):
        fingerprint_of_der(b"")


def test_format_fingerprint_two_lines_of_eight_groups() -> None:
    """The display form is 2 lines of 8 uppercase groups of 4."""
    text = format_fingerprint(FP)
    assert text == (
        "7270 B9B1 EEC5 FE80 9163 ACE8 C347 501D\n3C6E E850 AEB9 1B4D 4E56 C03E B4F1 FD6B"
    )
    lines = text.split("\n")
    assert len(lines) == 2
    assert all(len(line.split(" ")) == 8 for line in lines)


def test_format_fingerprint_accepts_any_form_and_round_trips() -> None:
    """Formatting normalizes first, and the display form normalizes back."""
    assert format_fingerprint(f"sha256:{COLONS}") == format_fingerprint(FP)
    assert normalize_fingerprint(format_fingerprint(FP)) == FP


def test_format_fingerprint_rejects_invalid() -> None:
    """Formatting an invalid fingerprint raises instead of showing garbage."""
    with pytest.raises(ValueError, match="invalid TLS fingerprint"):
        format_fingerprint("abc")
