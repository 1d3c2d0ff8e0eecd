"""The ``hello-ok`` payload, built from :class:`openclaw_desktop.protocol.HelloOk` (the
model the client reads it with), so both sides hold the same shape; its ``protocol`` is
:data:`~openclaw_desktop.protocol.version.PROTOCOL_VERSION`, the one the client speaks."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from openclaw_desktop.protocol import (
    MAX_ATTACHMENT_BYTES,
    MAX_ATTACHMENT_IMAGE_BYTES,
    MAX_BUFFERED_BYTES,
    MAX_PAYLOAD_BYTES,
    PROTOCOL_VERSION,
    Features,
    HelloAuth,
    HelloOk,
    Policy,
    ServerInfo,
    SessionDefaults,
    Snapshot,
)

__all__ = ["hello_ok"]


def hello_ok(
    *,
    server: ServerInfo,
    methods: Sequence[str],
    events: Sequence[str],
    capabilities: Sequence[str],
    snapshot: dict[str, Any],
    auth: dict[str, Any],
    tick_interval_ms: int,
) -> dict[str, Any]:
    """The payload as sent: what was given, nothing defaulted in (``exclude_unset``).
    ``snapshot`` holds the live parts (presence, health, stateVersion, uptimeMs, authMode)."""
    hello = HelloOk(
        type="hello-ok",
        protocol=PROTOCOL_VERSION,
        server=server,
        features=Features(
            methods=list(methods), events=list(events), capabilities=list(capabilities)
        ),
        snapshot=Snapshot.model_validate(
            {
                **snapshot,
                "sessionDefaults": SessionDefaults(
                    default_agent_id="main",
                    main_key="main",
                    main_session_key="agent:main:main",
                    scope="per-sender",
                ),
            }
        ),
        auth=HelloAuth.model_validate(auth),
        policy=Policy(
            max_payload=MAX_PAYLOAD_BYTES,
            max_buffered_bytes=MAX_BUFFERED_BYTES,
            tick_interval_ms=tick_interval_ms,
            attachments={
                "maxBytes": MAX_ATTACHMENT_BYTES,
                "maxImageBytes": MAX_ATTACHMENT_IMAGE_BYTES,
            },
        ),
    )
    return hello.model_dump(by_alias=True, exclude_unset=True, mode="json")
