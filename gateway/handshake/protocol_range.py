"""Connect admission: protocol range, role and the browser copilot's requirements.

The real gateway 2026.9.6 checks these right after the params schema and before any
credential or device check, in this order (read from ``connect-admission``, confirmed live):

1. Protocol: accepted when ``minProtocol <= 4 <= maxProtocol``; a node session
   (``role == "node"`` and ``client.mode == "node"``) may instead cover 3; a probe
   (``client.mode == "probe"``) may use any of 3..4. Otherwise ``protocol mismatch``,
   close **1002** - even when the role is invalid too.
2. Role: omitted means ``operator``; anything but ``operator`` or ``node`` is
   ``invalid role``. (``role: "worker"`` never gets here: the first-frame check closes it.)
3. Browser copilot (``client.id == "openclaw-browser-copilot"``): needs ``client.mode``
   ``ui`` and the caps ``run-tool-bindings`` and ``session-scoped-events``, then an Origin
   header ``chrome-extension://<32 letters a-p>``.
4. Browser Origin: browser clients (Control UI, copilot, anything with ``client.mode``
   ``webchat`` or id ``webchat-ui``) and every request that carries an ``Origin`` header
   need an acceptable Origin: ``origin not allowed (...)`` with ``details.reason``
   ``origin missing or invalid`` (observed live for a webchat client without Origin) or
   ``origin not allowed``. Accepted: the configured allowlist (or ``*``), the request's own
   host when it is loopback / private / ``.local`` / ``.ts.net``, and loopback origins from
   a local client. (The gateway's opt-in Host-header fallback is not modelled.)
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable
from dataclasses import dataclass

from openclaw_desktop.protocol import (
    MIN_NODE_PROTOCOL_VERSION,
    MIN_PROBE_PROTOCOL_VERSION,
    PROTOCOL_VERSION,
    ClientCap,
    ClientId,
    ClientMode,
    ConnectParams,
    Role,
)

from .rejection import ConnectRejection

__all__ = [
    "Admission",
    "admit_connect",
    "check_browser_copilot",
    "check_browser_origin",
    "check_protocol_range",
    "resolve_role",
]

_OPERATOR_UI = frozenset({ClientId.CONTROL_UI, ClientId.TUI})
_BROWSER_UI = frozenset({ClientId.CONTROL_UI, ClientId.BROWSER_COPILOT})
_DEFAULT_PORTS = {"http": "80", "https": "443", "ws": "80", "wss": "443"}
_ORIGIN = re.compile(r"([a-z][a-z0-9+.-]*)://([^/?#\\]+)/?", re.IGNORECASE)
_EXTENSION_HOST = re.compile(r"[a-p]{32}")
_JS_WHITESPACE = (
    "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008"
    "\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
)


@dataclass(frozen=True)
class Admission:
    """What admission decided about a connect.

    Attributes:
        role: The effective role (``operator`` when omitted).
        scopes: The requested scopes (``[]`` when omitted).
        uses_legacy_node_protocol: The node speaks protocol 3 only.
        is_control_ui: Control UI or TUI (they must carry a device identity).
    """

    role: Role
    scopes: list[str]
    uses_legacy_node_protocol: bool
    is_control_ui: bool


def check_protocol_range(params: ConnectParams) -> bool:
    """Check the protocol range.

    Returns:
        True when only the previous node protocol (3) is spoken.

    Raises:
        ConnectRejection: ``protocol mismatch`` with close 1002.
    """
    low, high = params.min_protocol, params.max_protocol
    current = low <= PROTOCOL_VERSION <= high
    probe = params.client.mode == ClientMode.PROBE and (
        high >= MIN_PROBE_PROTOCOL_VERSION and low <= PROTOCOL_VERSION
    )
    is_node = params.role == Role.NODE and params.client.mode == ClientMode.NODE
    previous_node = is_node and low <= MIN_NODE_PROTOCOL_VERSION <= high
    if not (current or probe or previous_node):
        raise ConnectRejection.protocol_mismatch(low, high)
    return not current and previous_node


def resolve_role(params: ConnectParams) -> Role:
    """The effective role: ``operator`` when omitted.

    Raises:
        ConnectRejection: ``invalid role`` for anything but ``operator`` or ``node``.
    """
    raw = params.role if params.role is not None else Role.OPERATOR.value
    if raw not in (Role.OPERATOR.value, Role.NODE.value):
        raise ConnectRejection.invalid_role()
    return Role(raw)


def _parse_origin(origin: str | None) -> tuple[str, str, str] | None:
    """``(scheme, host, hostname)`` of an Origin header, lowercased, or None when invalid."""
    text = (origin or "").strip(_JS_WHITESPACE)
    match = _ORIGIN.fullmatch(text)
    if match is None or "@" in match.group(2):
        return None
    scheme, host = match.group(1).lower(), match.group(2).lower()
    if host.startswith("["):
        hostname, _, rest = host[1:].partition("]")
        port = rest[1:] if rest.startswith(":") else ""
        hostname = f"[{hostname}]"
    else:
        hostname, _, port = host.partition(":")
    if (port and not port.isdigit()) or not hostname:
        return None
    if port == _DEFAULT_PORTS.get(scheme):
        host = hostname
    return scheme, host, hostname


def _is_extension_origin(origin: str | None) -> bool:
    """Whether an Origin header is a canonical ``chrome-extension://`` origin."""
    parsed = _parse_origin(origin)
    return (
        parsed is not None
        and parsed[0] == "chrome-extension"
        and _EXTENSION_HOST.fullmatch(parsed[2]) is not None
    )


def _ip(hostname: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(hostname.strip("[]"))
    except ValueError:
        return None


def _is_loopback_host(hostname: str) -> bool:
    ip = _ip(hostname)
    return hostname == "localhost" if ip is None else ip.is_loopback


def _origin_allowed(
    parsed: tuple[str, str, str],
    *,
    request_host: str | None,
    allowed_origins: Iterable[str],
    is_local_client: bool,
) -> bool:
    scheme, host, hostname = parsed
    allow = {value.strip(_JS_WHITESPACE).lower() for value in allowed_origins}
    if "*" in allow or f"{scheme}://{host}" in allow:
        return True
    request = (request_host or "").strip(_JS_WHITESPACE).lower()
    if request and host == request:
        request_name = _parse_origin(f"x://{request}")
        name = request_name[2] if request_name else ""
        ip = _ip(name)
        if _is_loopback_host(name):
            return is_local_client
        if ip is not None:
            return ip.is_private or ip.is_loopback
        if name.endswith((".local", ".ts.net")):
            return True
    return is_local_client and _is_loopback_host(hostname)


def check_browser_origin(
    params: ConnectParams,
    origin: str | None,
    *,
    request_host: str | None = None,
    allowed_origins: Iterable[str] = (),
    is_local_client: bool = True,
) -> None:
    """The browser Origin policy for browser clients and any request with an Origin header.

    Args:
        params: Validated connect params.
        origin: The ``Origin`` header of the WebSocket upgrade, if any.
        request_host: The ``Host`` header of the upgrade.
        allowed_origins: ``gateway.controlUi.allowedOrigins``.
        is_local_client: Whether the socket is direct local (loopback, no proxy headers).

    Raises:
        ConnectRejection: ``origin not allowed (...)`` with the failing reason.
    """
    client = params.client
    if client.id == ClientId.BROWSER_COPILOT and _is_extension_origin(origin):
        return
    has_origin = bool((origin or "").strip(_JS_WHITESPACE))
    is_webchat = client.mode == ClientMode.WEBCHAT or client.id == ClientId.WEBCHAT_UI
    if not (has_origin or client.id in _BROWSER_UI or is_webchat):
        return
    parsed = _parse_origin(origin)
    if parsed is None:
        raise ConnectRejection.origin_not_allowed("origin missing or invalid")
    if not _origin_allowed(
        parsed,
        request_host=request_host,
        allowed_origins=allowed_origins,
        is_local_client=is_local_client,
    ):
        raise ConnectRejection.origin_not_allowed("origin not allowed")


def check_browser_copilot(params: ConnectParams, origin: str | None) -> None:
    """The browser copilot's mode, caps and Origin requirements (no-op for other clients).

    Args:
        params: Validated connect params.
        origin: The HTTP ``Origin`` header of the WebSocket upgrade, if any.

    Raises:
        ConnectRejection: The copilot misses mode/caps, or its Origin is not canonical.
    """
    if params.client.id != ClientId.BROWSER_COPILOT:
        return
    caps = params.caps or []
    if (
        params.client.mode != ClientMode.UI
        or ClientCap.RUN_TOOL_BINDINGS.value not in caps
        or ClientCap.SESSION_SCOPED_EVENTS.value not in caps
    ):
        raise ConnectRejection.browser_copilot_requires_ui_caps()
    if not _is_extension_origin(origin):
        raise ConnectRejection.browser_copilot_origin()


def admit_connect(
    params: ConnectParams,
    *,
    origin: str | None = None,
    request_host: str | None = None,
    allowed_origins: Iterable[str] = (),
    is_local_client: bool = True,
) -> Admission:
    """Run the admission checks in the real gateway's order.

    Args:
        params: Validated connect params.
        origin: The HTTP ``Origin`` header of the WebSocket upgrade, if any.
        request_host: The ``Host`` header of the upgrade.
        allowed_origins: ``gateway.controlUi.allowedOrigins``.
        is_local_client: Whether the socket is direct local (loopback, no proxy headers).

    Returns:
        The admission result.

    Raises:
        ConnectRejection: protocol mismatch, invalid role, a browser copilot failure or
            an Origin the policy refuses.
    """
    legacy = check_protocol_range(params)
    role = resolve_role(params)
    check_browser_copilot(params, origin)
    check_browser_origin(
        params,
        origin,
        request_host=request_host,
        allowed_origins=allowed_origins,
        is_local_client=is_local_client,
    )
    return Admission(
        role=role,
        scopes=list(params.scopes or []),
        uses_legacy_node_protocol=legacy,
        is_control_ui=params.client.id in _OPERATOR_UI,
    )
