"""Credentials and TLS trust of one connection: what to send, what to pin, what to keep."""

from __future__ import annotations

import logging

from openclaw_desktop.errors import OpenClawError
from openclaw_desktop.identity.credentials import StoredDeviceToken, gateway_key
from openclaw_desktop.protocol import HelloOk, Role
from openclaw_desktop.session import Credentials, FailureDecision, decide_after_failure
from openclaw_desktop.session.plan import AuthSource
from openclaw_desktop.transport.options import ConnectionOptions, Endpoint
from openclaw_desktop.trust import TlsPlan, resolve_tls

__all__ = ["ConnectionVault"]

log = logging.getLogger("openclaw.transport")


class ConnectionVault:
    """Reads and writes the stored credentials and pin for one endpoint and role."""

    def __init__(self, options: ConnectionOptions, endpoint: Endpoint) -> None:
        self.options = options
        self.endpoint = endpoint
        self.gateway = gateway_key(endpoint.url)
        #: The one stored-device-token retry after AUTH_TOKEN_MISMATCH was used.
        self.device_retry_used = False

    def credentials(self) -> Credentials:
        """Explicit credentials first, then what is stored for this gateway and role."""
        opts = self.options
        stored: StoredDeviceToken | None = None
        if opts.credentials is not None and opts.signer is not None:
            stored = opts.credentials.device_token(
                self.gateway, opts.signer.device_id, opts.role.value
            )
        shared, password = opts.shared_token, opts.password
        explicit = bool(opts.shared_token_first and shared)
        if opts.credentials is not None:
            shared = shared or opts.credentials.shared_token(self.gateway)
            password = password or opts.credentials.password(self.gateway)
        return Credentials(
            shared, password, opts.bootstrap_token, stored, shared_token_first=explicit
        )

    def pin(self) -> str | None:
        """The TLS pin in force: the explicit one, else the stored one."""
        if self.options.tls_fingerprint:
            return self.options.tls_fingerprint
        if self.options.credentials is not None:
            return self.options.credentials.tls_pin(self.gateway)
        return None

    def trusted_endpoint(self) -> bool:
        """Loopback or LAN cleartext, or TLS with a pin in force."""
        return not self.endpoint.tls or self.pin() is not None

    async def resolve_tls(self) -> TlsPlan | None:
        """The TLS plan for the next attempt (None for ``ws://``)."""
        if not self.endpoint.tls:
            return None
        store, gateway = self.options.credentials, self.gateway

        def save_pin(fingerprint: str) -> None:
            if store is not None:
                store.save_tls_pin(gateway, fingerprint)

        return await resolve_tls(
            self.endpoint.host,
            self.endpoint.port,
            pin=self.pin(),
            trust_callback=self.options.trust_callback,
            save_pin=save_pin,
            hint=self.options.tls_hint,
        )

    def decide(self, error: OpenClawError, source: AuthSource) -> FailureDecision:
        """Ask the failure policy, and apply what it says about stored tokens."""
        creds = self.credentials()
        decision = decide_after_failure(
            error,
            auth_source=source,
            device_token_retry_available=(
                not self.device_retry_used
                and creds.stored_device_token is not None
                and self.trusted_endpoint()
            ),
            has_fallback_credential=bool(creds.shared_token or creds.bootstrap_token),
            role=self.options.role.value,
        )
        store, signer = self.options.credentials, self.options.signer
        if decision.clear_device_token and store is not None and signer is not None:
            log.warning("stored device token was refused by the gateway; removing it")
            store.clear_device_token(self.gateway, signer.device_id, self.options.role.value)
        if decision.retry_with_device_token:
            self.device_retry_used = True
        return decision

    def store_tokens(self, hello: HelloOk) -> None:
        """Keep the device token of ``hello-ok`` (and bootstrap hand-off tokens)."""
        self.device_retry_used = False
        store, signer = self.options.credentials, self.options.signer
        if store is None or signer is None:
            return
        auth = hello.auth
        if auth.device_token:
            token = StoredDeviceToken(
                auth.device_token, auth.role, tuple(auth.scopes), auth.issued_at_ms
            )
            store.save_device_token(self.gateway, signer.device_id, token)
        # Bootstrap hand-off tokens are kept only over TLS or to this machine / the LAN;
        # Endpoint.parse already refuses cleartext to anything else.
        for grant in auth.device_tokens:
            if grant.role in (Role.NODE.value, Role.OPERATOR.value):
                token = StoredDeviceToken(
                    grant.device_token, grant.role, tuple(grant.scopes), grant.issued_at_ms
                )
                store.save_device_token(self.gateway, signer.device_id, token)
