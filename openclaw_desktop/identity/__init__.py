"""Device identity, device-auth signatures and secret storage.

* :mod:`.encoding` - unpadded base64url.
* :mod:`.payload` - the v2/v3 device-auth payload strings (pure).
* :mod:`.verify` - public-key decoding, device ids, signature checks (also used by the
  bundled gateway).
* :mod:`.device` / :mod:`.store` - the Ed25519 identity and its 0600 file.
* :mod:`.secrets` / :mod:`.keyring_store` - where secrets live (keyring or a 0600 file).
  ``keyring_store`` is not imported here, so importing this package never imports keyring.
* :mod:`.credentials` - typed per-gateway credentials over a secret store.
"""

from .credentials import CredentialStore, StoredDeviceToken
from .device import DeviceIdentity
from .encoding import b64url_decode, b64url_encode
from .gateway_id import DEFAULT_GATEWAY_PORT, gateway_key
from .payload import (
    build_payload_v2,
    build_payload_v3,
    normalize_device_metadata,
    signature_token,
)
from .secrets import FileSecretStore, MemorySecretStore, SecretStore, open_secret_store
from .store import IDENTITY_FILE_VERSION, IdentityStore
from .verify import (
    ED25519_SPKI_PREFIX,
    InvalidPublicKey,
    device_id_for,
    normalize_public_key,
    verify_signature,
)

__all__ = [
    "DEFAULT_GATEWAY_PORT",
    "ED25519_SPKI_PREFIX",
    "IDENTITY_FILE_VERSION",
    "CredentialStore",
    "DeviceIdentity",
    "FileSecretStore",
    "IdentityStore",
    "InvalidPublicKey",
    "MemorySecretStore",
    "SecretStore",
    "StoredDeviceToken",
    "b64url_decode",
    "b64url_encode",
    "build_payload_v2",
    "build_payload_v3",
    "device_id_for",
    "gateway_key",
    "normalize_device_metadata",
    "normalize_public_key",
    "open_secret_store",
    "signature_token",
    "verify_signature",
]
