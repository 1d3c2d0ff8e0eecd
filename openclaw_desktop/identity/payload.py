"""The device-auth payload strings the gateway expects to be signed (pure, no crypto).

The gateway rebuilds the same string from the ``connect`` params and checks the Ed25519
signature over its UTF-8 bytes. It tries ``v3`` first (which also binds the client's
platform and device family) and then the legacy ``v2``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = [
    "build_payload_v2",
    "build_payload_v3",
    "normalize_device_metadata",
    "signature_token",
]

# The characters JavaScript's String.prototype.trim() removes (WhiteSpace and
# LineTerminator). Python's str.strip() uses a slightly different set, and the gateway
# normalizes with the JavaScript one.
_JS_WHITESPACE = (
    "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008"
    "\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
)
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")
_TOKEN_FIELDS = ("token", "deviceToken", "bootstrapToken")


def normalize_device_metadata(value: str | None) -> str:
    """Normalize ``client.platform`` or ``client.deviceFamily`` for the v3 payload.

    Trims surrounding whitespace, then lowercases ASCII ``A``-``Z`` only, so the result
    never depends on the locale and non-ASCII letters stay as they are.

    Args:
        value: The metadata value, or None when the client does not send it.

    Returns:
        The normalized value; ``""`` for None.
    """
    if value is None:
        return ""
    return value.strip(_JS_WHITESPACE).translate(_ASCII_LOWER)


def build_payload_v3(
    *,
    device_id: str,
    client_id: str,
    client_mode: str,
    role: str,
    scopes: Sequence[str],
    signed_at_ms: int,
    token: str | None,
    nonce: str,
    platform: str | None,
    device_family: str | None,
) -> str:
    """Build the v3 device-auth payload.

    Args:
        device_id: ``device.id`` (hex SHA-256 of the raw public key).
        client_id: ``client.id``.
        client_mode: ``client.mode``.
        role: ``role``.
        scopes: ``scopes`` exactly as sent; joined with ``,`` in order, neither sorted
            nor deduplicated.
        signed_at_ms: ``device.signedAt`` (the challenge ``ts``).
        token: The credential being signed (see :func:`signature_token`), or None.
        nonce: ``device.nonce`` (the challenge nonce).
        platform: ``client.platform``; normalized with :func:`normalize_device_metadata`.
        device_family: ``client.deviceFamily``; normalized the same way.

    Returns:
        ``v3|deviceId|clientId|clientMode|role|scopes|signedAt|token|nonce|platform|family``.
    """
    fields = _common_fields(
        device_id, client_id, client_mode, role, scopes, signed_at_ms, token, nonce
    )
    platform_field = normalize_device_metadata(platform)
    family_field = normalize_device_metadata(device_family)
    return "|".join(("v3", *fields, platform_field, family_field))


def build_payload_v2(
    *,
    device_id: str,
    client_id: str,
    client_mode: str,
    role: str,
    scopes: Sequence[str],
    signed_at_ms: int,
    token: str | None,
    nonce: str,
) -> str:
    """Build the legacy v2 device-auth payload (v3 without platform and device family).

    Args:
        device_id: ``device.id``.
        client_id: ``client.id``.
        client_mode: ``client.mode``.
        role: ``role``.
        scopes: ``scopes`` exactly as sent, joined with ``,`` in order.
        signed_at_ms: ``device.signedAt``.
        token: The credential being signed, or None.
        nonce: ``device.nonce``.

    Returns:
        ``v2|deviceId|clientId|clientMode|role|scopes|signedAt|token|nonce``.
    """
    fields = _common_fields(
        device_id, client_id, client_mode, role, scopes, signed_at_ms, token, nonce
    )
    return "|".join(("v2", *fields))


def _common_fields(
    device_id: str,
    client_id: str,
    client_mode: str,
    role: str,
    scopes: Sequence[str],
    signed_at_ms: int,
    token: str | None,
    nonce: str,
) -> tuple[str, ...]:
    """The fields v2 and v3 share, in order, after the version tag."""
    return (
        device_id,
        client_id,
        client_mode,
        role,
        ",".join(scopes),
        str(int(signed_at_ms)),
        token if token is not None else "",
        nonce,
    )


def signature_token(auth: Mapping[str, Any] | None) -> str:
    """The credential of a ``connect.params.auth`` object that goes into the payload.

    The gateway signs ``auth.token ?? auth.deviceToken ?? auth.bootstrapToken ?? ""``:
    the first field that is present and not null wins, even when it is an empty string.
    So when a shared token and a device token are both sent, the shared token is signed.
    ``auth.password`` is never signed.

    Args:
        auth: The ``auth`` object of the connect params, or None.

    Returns:
        The token to sign, or ``""``.

    Raises:
        TypeError: If the chosen field is not a string.
    """
    if auth is None:
        return ""
    for field in _TOKEN_FIELDS:
        value = auth.get(field)
        if value is None:
            continue
        if not isinstance(value, str):
            raise TypeError(f"auth.{field} must be a string")
        return value
    return ""
