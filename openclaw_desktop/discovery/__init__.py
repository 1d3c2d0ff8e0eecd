"""LAN discovery of OpenClaw gateways, and setup codes.

:class:`GatewayBrowser` watches ``_openclaw-gw._tcp.local.`` over mDNS and keeps a list of
:class:`GatewayEndpoint`; :func:`endpoint_from_service` is the pure conversion it uses.
:func:`decode_setup_code` reads the codes a gateway hands out for pairing. TXT values and
fingerprints found here are hints: they never replace a stored TLS pin.
"""

from openclaw_desktop.discovery.browser import ChangeKind, GatewayBrowser, Listener
from openclaw_desktop.discovery.setup_code import (
    MAX_BOOTSTRAP_TOKEN_CHARS,
    MAX_CODE_CHARS,
    MAX_JSON_BYTES,
    MAX_URLS,
    SetupCode,
    SetupCodeError,
    decode_setup_code,
    encode_setup_code,
)
from openclaw_desktop.discovery.txt import (
    DOMAIN,
    SERVICE_TYPE,
    GatewayEndpoint,
    decode_bonjour_escapes,
    endpoint_from_service,
    stable_gateway_id,
)

__all__ = [
    "DOMAIN",
    "MAX_BOOTSTRAP_TOKEN_CHARS",
    "MAX_CODE_CHARS",
    "MAX_JSON_BYTES",
    "MAX_URLS",
    "SERVICE_TYPE",
    "ChangeKind",
    "GatewayBrowser",
    "GatewayEndpoint",
    "Listener",
    "SetupCode",
    "SetupCodeError",
    "decode_bonjour_escapes",
    "decode_setup_code",
    "encode_setup_code",
    "endpoint_from_service",
    "stable_gateway_id",
]
