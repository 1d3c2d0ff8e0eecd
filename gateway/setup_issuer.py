"""Minting setup codes for phones (:class:`SetupCodeIssuer`): which URL, which access, the
bootstrap token, and the ``device.pair.setupCode`` result shaped as the real gateway's."""

from __future__ import annotations

import ipaddress
from typing import Any

from gateway.config import GatewayConfig
from gateway.hub import now_ms
from gateway.setup_code import build_setup_payload, encode_setup_code, qr_png_data_url
from gateway.state import GatewayState
from gateway.state.bootstrap import SetupProfile

__all__ = ["SetupCodeIssuer"]


class SetupCodeIssuer:
    """Mints setup codes for this gateway (``public_urls``: its LAN URLs, set by the server
    when it advertises them)."""

    def __init__(
        self, config: GatewayConfig, state: GatewayState, tls_fingerprint: str | None
    ) -> None:
        self.config = config
        self.state = state
        self.tls_fingerprint = tls_fingerprint
        self.public_urls: list[str] = []

    def mint(
        self,
        *,
        access: SetupProfile = "full",
        public_url: str | None = None,
        include_qr: bool = True,
    ) -> dict[str, Any]:
        """A single-use setup code for a phone (bootstrap token, 10 minutes): the
        ``device.pair.setupCode`` result, shaped as the real gateway's.

        Args:
            access: The code's profile: ``full``, ``limited``, ``node`` or ``voice-node``.
            public_url: A URL the caller already normalized and checked (the request's
                ``publicUrl``); else this gateway's LAN URLs, or loopback.
            include_qr: Add ``qrDataUrl`` (a PNG data URL of the code).

        As the real gateway, full access through a plaintext URL that is not loopback is
        minted as limited (``accessDowngraded``), and a voice-node code reports ``access``
        ``limited``.
        """
        from urllib.parse import urlsplit

        def full_access_url(url: str) -> bool:
            parts = urlsplit(url)
            host = (parts.hostname or "").lower()
            if parts.scheme == "wss":
                return True
            try:
                loopback = host == "localhost" or ipaddress.ip_address(host).is_loopback
            except ValueError:
                loopback = False
            return parts.scheme == "ws" and loopback

        if public_url is not None:
            urls, source = [public_url], "request.publicUrl"
        elif self.public_urls:
            urls, source = list(self.public_urls), "gateway.bind=lan"
        else:
            scheme = "wss" if self.config.tls else "ws"
            urls, source = [f"{scheme}://127.0.0.1:{self.config.port}"], "loopback"
        downgraded = access == "full" and not all(full_access_url(u) for u in urls)
        issued: SetupProfile = "limited" if downgraded else access
        token, record = self.state.bootstrap.mint(now_ms(), access=issued)
        # As the real gateway: the expiry always, the TLS pin for this gateway's own wss://
        # URL (not for a publicUrl, which may be a proxy with another certificate).
        own_tls = public_url is None and urls[0].startswith("wss://")
        pin = self.tls_fingerprint if own_tls else None
        payload = build_setup_payload(
            urls[0], urls, token, expires_at_ms=record.expires_at_ms, tls_fingerprint=pin
        )
        code = encode_setup_code(payload)
        result: dict[str, Any] = {
            "setupId": record.setup_id,
            "expiresAtMs": record.expires_at_ms,
            "setupCode": code,
        }
        if include_qr:
            result["qrDataUrl"] = qr_png_data_url(code)
        result["gatewayUrl"] = urls[0]
        if len(urls) > 1:
            result["gatewayUrls"] = urls
        result["auth"] = self.config.auth_mode
        result["urlSource"] = source
        result["access"] = "limited" if issued == "voice-node" else issued
        if downgraded:
            result["accessDowngraded"] = True
        return result
