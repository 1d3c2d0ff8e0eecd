"""The device's Ed25519 identity: its key pair, device id and signing."""

from __future__ import annotations

import time
from dataclasses import dataclass
from functools import cached_property

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from .encoding import b64url_encode
from .verify import device_id_for

__all__ = ["DeviceIdentity"]

_SEED_LEN = 32


@dataclass(frozen=True, eq=False, repr=False)
class DeviceIdentity:
    """One device identity: an Ed25519 key pair and when it was created.

    Attributes:
        private_key: The Ed25519 private key. Never logged or shown by ``repr``.
        created_at_ms: Creation time, milliseconds since the epoch.
    """

    private_key: Ed25519PrivateKey
    created_at_ms: int

    @classmethod
    def generate(cls, *, now_ms: int | None = None) -> DeviceIdentity:
        """Create a new random identity.

        Args:
            now_ms: Creation time to record; defaults to the current time.

        Returns:
            A fresh identity.
        """
        created = now_ms if now_ms is not None else time.time_ns() // 1_000_000
        return cls(private_key=Ed25519PrivateKey.generate(), created_at_ms=created)

    @classmethod
    def from_seed(cls, seed: bytes, created_at_ms: int) -> DeviceIdentity:
        """Rebuild an identity from the 32-byte raw private key (the seed).

        Args:
            seed: The raw Ed25519 private key.
            created_at_ms: Creation time, milliseconds since the epoch.

        Returns:
            The identity.

        Raises:
            ValueError: If the seed is not 32 bytes long.
        """
        if len(seed) != _SEED_LEN:
            raise ValueError(f"Ed25519 seed must be {_SEED_LEN} bytes")
        return cls(
            private_key=Ed25519PrivateKey.from_private_bytes(seed), created_at_ms=created_at_ms
        )

    def private_key_seed(self) -> bytes:
        """The raw 32-byte private key, for persisting the identity. Keep it secret."""
        return self.private_key.private_bytes_raw()

    @cached_property
    def public_key_raw(self) -> bytes:
        """The raw 32-byte public key (derived once: every handshake asks for it)."""
        return self.private_key.public_key().public_bytes_raw()

    @cached_property
    def public_key(self) -> str:
        """The public key as sent in ``device.publicKey``: unpadded base64url of the raw key."""
        return b64url_encode(self.public_key_raw)

    @cached_property
    def device_id(self) -> str:
        """``device.id``: the lowercase hex SHA-256 of the raw public key."""
        return device_id_for(self.public_key_raw)

    def sign(self, payload: str) -> str:
        """Sign a device-auth payload string.

        Args:
            payload: The payload (see :mod:`.payload`); its UTF-8 bytes are signed.

        Returns:
            The unpadded base64url Ed25519 signature, as sent in ``device.signature``.
        """
        return b64url_encode(self.private_key.sign(payload.encode("utf-8")))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, DeviceIdentity):
            return NotImplemented
        return (
            self.public_key_raw == other.public_key_raw
            and self.created_at_ms == other.created_at_ms
        )

    def __hash__(self) -> int:
        return hash((self.public_key_raw, self.created_at_ms))

    def __repr__(self) -> str:
        return f"DeviceIdentity(device_id={self.device_id!r}, created_at_ms={self.created_at_ms})"
