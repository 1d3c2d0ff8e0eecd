"""Protocol version numbers and wire limits shared by the client and the bundled gateway."""

from __future__ import annotations

__all__ = [
    "DEFAULT_GATEWAY_PORT",
    "DEFAULT_TICK_INTERVAL_MS",
    "DEVICE_SIGNATURE_SKEW_MS",
    "HANDSHAKE_TIMEOUT_MS",
    "MAX_ATTACHMENT_BYTES",
    "MAX_ATTACHMENT_IMAGE_BYTES",
    "MAX_BUFFERED_BYTES",
    "MAX_FRAME_DEPTH",
    "MAX_PAYLOAD_BYTES",
    "MAX_PREAUTH_PAYLOAD_BYTES",
    "MIN_CLIENT_PROTOCOL_VERSION",
    "MIN_NODE_PROTOCOL_VERSION",
    "MIN_PROBE_PROTOCOL_VERSION",
    "PROTOCOL_VERSION",
    "loopback_url",
]

#: The protocol this code speaks (gateway 2026.9.x).
PROTOCOL_VERSION = 4
#: Operators and UIs must include the current version.
MIN_CLIENT_PROTOCOL_VERSION = 4
#: Sessions with role ``node`` and client mode ``node`` may speak N-1.
MIN_NODE_PROTOCOL_VERSION = 3
#: Lightweight probes (client mode ``probe``) may speak N-1.
MIN_PROBE_PROTOCOL_VERSION = 3

#: The gateway's default port, assumed when a URL has none (ws:// and wss:// alike); the one
#: place the number is written (the CLIs, the configs and the credential keys read it here).
DEFAULT_GATEWAY_PORT = 18789


def loopback_url(port: int = DEFAULT_GATEWAY_PORT) -> str:
    """``ws://127.0.0.1:<port>``: a gateway on this computer (the bundled one, a test one)."""
    return f"ws://127.0.0.1:{port}"


#: Frame cap before ``hello-ok``.
MAX_PREAUTH_PAYLOAD_BYTES = 64 * 1024
#: Frame cap after ``hello-ok`` (advertised as ``policy.maxPayload``).
MAX_PAYLOAD_BYTES = 25 * 1024 * 1024
MAX_BUFFERED_BYTES = 50 * 1024 * 1024
#: ``policy.attachments``: decoded bytes of one message's attachments, and of one image.
MAX_ATTACHMENT_BYTES = 19_464_192
MAX_ATTACHMENT_IMAGE_BYTES = 6_291_456
#: Nesting limit of a frame, in arrays and objects, the frame object itself being level 1;
#: the same in both directions. JSON parsing (orjson) reads 1,024 levels but encodes only
#: 254, so frames are held to this bound on input, with room left for the few levels a
#: gateway adds when it forwards a value (a node's result inside the operator's answer).
MAX_FRAME_DEPTH = 128
#: Assumed tick interval until ``hello-ok`` says otherwise.
DEFAULT_TICK_INTERVAL_MS = 30_000
HANDSHAKE_TIMEOUT_MS = 15_000
#: Accepted clock skew of ``device.signedAt``.
DEVICE_SIGNATURE_SKEW_MS = 120_000
