"""TLS certificate fingerprints: parse, compute and display.

A gateway fingerprint is the SHA-256 digest of the DER encoding of the leaf certificate,
written as 64 lowercase hex characters with no separators. That is the form the real gateway
advertises in the ``gatewayTlsSha256`` TXT record and the form we store as a pin. Users paste
fingerprints in many other shapes (``openssl`` output, colon-separated, uppercase, with a
``sha256:`` prefix), so :func:`normalize_fingerprint` accepts all of them.

This module is pure: no I/O.
"""

from __future__ import annotations

import hashlib
import re

__all__ = [
    "FINGERPRINT_HEX_LENGTH",
    "fingerprint_of_der",
    "format_fingerprint",
    "normalize_fingerprint",
]

FINGERPRINT_HEX_LENGTH = 64
"""Number of hex characters in a SHA-256 fingerprint."""

# "sha256", "SHA-256", "sha256:", "SHA256 Fingerprint=" (openssl x509 -fingerprint output), ...
_PREFIX = re.compile(r"^sha-?256(?:\s*fingerprint)?\s*[:=]?\s*", re.IGNORECASE)
_SEPARATORS = re.compile(r"[:\-\s]+")
_HEX = re.compile(r"[0-9a-f]*")
_GROUP = 4
_GROUPS_PER_LINE = 8


def _shown(value: str) -> str:
    """Quote an input value for an error message, cut to a readable length."""
    return repr(value if len(value) <= 80 else value[:77] + "...")


def normalize_fingerprint(value: str) -> str:
    """Return the canonical form of a SHA-256 certificate fingerprint.

    Strips an optional ``sha256`` / ``sha-256`` prefix (any case, optionally followed by
    ``fingerprint``, ``:`` or ``=`` and whitespace), drops colons, dashes and whitespace, and
    lowercases the rest.

    Args:
        value: The fingerprint as typed, pasted, stored or advertised.

    Returns:
        64 lowercase hex characters.

    Raises:
        ValueError: If what remains is not exactly 64 hex characters.
    """
    body = _PREFIX.sub("", value.strip(), count=1)
    digits = _SEPARATORS.sub("", body).lower()
    if not _HEX.fullmatch(digits):
        raise ValueError(
            f"invalid TLS fingerprint {_shown(value)}: only hex digits, colons, dashes and "
            "spaces are allowed after an optional 'sha256:' prefix"
        )
    if len(digits) != FINGERPRINT_HEX_LENGTH:
        raise ValueError(
            f"invalid TLS fingerprint {_shown(value)}: a SHA-256 fingerprint has "
            f"{FINGERPRINT_HEX_LENGTH} hex digits, got {len(digits)}"
        )
    return digits


def fingerprint_of_der(der: bytes) -> str:
    """Compute the fingerprint of a certificate.

    Args:
        der: The DER encoding of the leaf certificate, as returned by
            ``getpeercert(binary_form=True)``.

    Returns:
        The SHA-256 digest as 64 lowercase hex characters.

    Raises:
        ValueError: If ``der`` is empty.
    """
    if not der:
        raise ValueError("cannot fingerprint an empty certificate")
    return hashlib.sha256(der).hexdigest()


def format_fingerprint(fp: str) -> str:
    """Lay out a fingerprint for a person to compare, e.g. in a trust dialog.

    The result is 16 groups of 4 uppercase hex digits separated by spaces, on two lines of
    8 groups joined by ``"\\n"``. :func:`normalize_fingerprint` reads it back.

    Args:
        fp: A fingerprint in any form :func:`normalize_fingerprint` accepts.

    Returns:
        The two-line display form.

    Raises:
        ValueError: If ``fp`` is not a valid fingerprint.
    """
    digits = normalize_fingerprint(fp).upper()
    groups = [digits[i : i + _GROUP] for i in range(0, len(digits), _GROUP)]
    lines = [
        " ".join(groups[i : i + _GROUPS_PER_LINE]) for i in range(0, len(groups), _GROUPS_PER_LINE)
    ]
    return "\n".join(lines)
