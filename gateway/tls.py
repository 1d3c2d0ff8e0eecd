"""The bundled gateway's TLS certificate: generated once, then reused so pins stay valid.

This mirrors the real gateway's ``gateway.tls.autoGenerate`` (``openssl req -x509 -newkey
rsa:2048 -sha256 -days 3650 -nodes -subj /CN=openclaw-gateway`` into
``<state>/gateway/tls/gateway-{cert,key}.pem``, served with TLS 1.3 as the minimum), with
subject alternative names added so that clients checking hostnames against ``localhost`` or
the loopback addresses also succeed.

The fingerprint is what the gateway advertises as ``gatewayTlsSha256`` and what clients pin:
the SHA-256 of the certificate's DER encoding, as 64 lowercase hex characters.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import hashlib
import ipaddress
import logging
import os
import re
import socket
import ssl
import tempfile
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from gateway.errors import BundledGatewayError

__all__ = [
    "CERT_FILENAME",
    "KEY_FILENAME",
    "TlsMaterial",
    "TlsMaterialError",
    "certificate_fingerprint",
    "ensure_certificate",
    "server_context",
]

log = logging.getLogger("gateway")

CERT_FILENAME = "gateway-cert.pem"
KEY_FILENAME = "gateway-key.pem"
_COMMON_NAME = "openclaw-gateway"
_VALIDITY = dt.timedelta(days=3650)
_BACKDATE = dt.timedelta(minutes=5)
"""Start validity a little in the past so clients with a slow clock accept it too."""
_DNS_LABEL = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?")


class TlsMaterialError(BundledGatewayError, RuntimeError):
    """The stored certificate or key is unusable; nothing was overwritten."""


@dataclass(frozen=True)
class TlsMaterial:
    """Where the certificate and key live, and the certificate's fingerprint."""

    cert_path: Path
    key_path: Path
    fingerprint: str


def certificate_fingerprint(der: bytes) -> str:
    """SHA-256 of a DER certificate as 64 lowercase hex characters (no separators)."""
    return hashlib.sha256(der).hexdigest()


def _host_names(hostname: str | None) -> list[str]:
    """DNS names for the certificate: ``localhost`` plus this machine's valid labels."""
    names = ["localhost"]
    candidate = (hostname if hostname is not None else socket.gethostname()).strip().rstrip(".")
    if candidate and all(_DNS_LABEL.fullmatch(label) for label in candidate.split(".")):
        for name in (candidate, candidate.split(".")[0], f"{candidate.split('.')[0]}.local"):
            if name.lower() not in (n.lower() for n in names):
                names.append(name)
    return names


def _generate(hostname: str | None) -> tuple[bytes, bytes]:
    """A fresh RSA-2048 key and a self-signed certificate for it, both PEM."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, _COMMON_NAME)])
    now = dt.datetime.now(dt.UTC)
    alt_names: list[x509.GeneralName] = [x509.DNSName(n) for n in _host_names(hostname)]
    alt_names += [x509.IPAddress(ipaddress.ip_address(a)) for a in ("127.0.0.1", "::1")]
    cert = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - _BACKDATE)
        .not_valid_after(now + _VALIDITY)
        .add_extension(x509.SubjectAlternativeName(alt_names), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(
            x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]),
            critical=False,
        )
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .sign(key, hashes.SHA256())
    )
    key_pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    return cert.public_bytes(serialization.Encoding.PEM), key_pem


def _write_atomically(path: Path, data: bytes, mode: int) -> None:
    """Write ``data`` to ``path`` through a temporary file, with ``mode`` from the start."""
    fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    tmp = Path(tmp_name)
    try:
        os.chmod(tmp, mode)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise


def _load(cert_path: Path, key_path: Path) -> TlsMaterial:
    """Check that the stored pair parses and belongs together; return its fingerprint."""
    try:
        cert = x509.load_pem_x509_certificate(cert_path.read_bytes())
    except (OSError, ValueError) as exc:
        raise TlsMaterialError(f"cannot read the gateway certificate {cert_path}: {exc}") from exc
    try:
        key = serialization.load_pem_private_key(key_path.read_bytes(), password=None)
    except (OSError, ValueError, TypeError) as exc:
        raise TlsMaterialError(
            f"cannot read the gateway key {key_path}: {exc}; delete both files in "
            f"{cert_path.parent} to generate a new certificate (paired clients must re-pin)"
        ) from exc
    spki = serialization.PublicFormat.SubjectPublicKeyInfo
    if key.public_key().public_bytes(
        serialization.Encoding.DER, spki
    ) != cert.public_key().public_bytes(serialization.Encoding.DER, spki):
        raise TlsMaterialError(
            f"the gateway key {key_path} does not match the certificate {cert_path}; delete "
            f"both to generate a new certificate (paired clients must re-pin)"
        )
    der = cert.public_bytes(serialization.Encoding.DER)
    return TlsMaterial(cert_path, key_path, certificate_fingerprint(der))


def ensure_certificate(state_dir: Path, *, hostname: str | None = None) -> TlsMaterial:
    """Return the gateway's certificate, generating it on first use.

    The pair lives in ``<state_dir>/tls/`` (the folder is created ``0700``, the key is
    written ``0600``). Once the certificate exists it is reused as is, so the fingerprint
    that clients pinned stays valid; a missing or mismatched key is an error rather than a
    silent replacement. A key without a certificate (an interrupted first run) is replaced.

    Args:
        state_dir: The gateway's state folder.
        hostname: Extra DNS name for the certificate; the system hostname when None.

    Returns:
        The paths and the fingerprint.

    Raises:
        TlsMaterialError: If the stored certificate or key cannot be used.
    """
    tls_dir = state_dir / "tls"
    cert_path = tls_dir / CERT_FILENAME
    key_path = tls_dir / KEY_FILENAME
    if cert_path.exists():
        return _load(cert_path, key_path)
    tls_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    cert_pem, key_pem = _generate(hostname)
    _write_atomically(key_path, key_pem, 0o600)
    _write_atomically(cert_path, cert_pem, 0o644)
    material = _load(cert_path, key_path)
    log.info("generated a TLS certificate in %s (sha256 %s)", tls_dir, material.fingerprint)
    return material


def server_context(material: TlsMaterial) -> ssl.SSLContext:
    """A server-side SSL context serving ``material`` with TLS 1.3 as the minimum."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_3
    context.load_cert_chain(material.cert_path, material.key_path)
    return context
