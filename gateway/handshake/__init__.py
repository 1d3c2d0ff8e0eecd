"""The bundled gateway's handshake checks, answering bad input like the real gateway 2026.9.6.

Order of checks for the first frame of a connection (the server calls them in this order):

1. :func:`parse_first_frame` - size, JSON, worker claim, request frame, method ``connect``;
   returns ``request_id, params``.
2. :func:`validate_connect_params` - the closed params schema, TypeBox-style error text.
3. :func:`admit_connect` - protocol range (close 1002), role, browser copilot, browser Origin.
4. :func:`gateway.handshake.decide.decide` - runs 3, then missing device identity,
   :func:`verify_device_proof` when ``device`` is set, credentials
   (:meth:`ConnectRejection.auth_failed`), pairing (:meth:`ConnectRejection.pairing_required`)
   and hello-ok's tokens, as a sans-I/O decision whose writes are effects the server carries
   out (:mod:`gateway.handshake.decision`, :func:`gateway.connect.admit`).

Every failure is a :class:`ConnectRejection` carrying the ``res`` error, close code and reason.
"""

from .frame import (
    MAX_PREAUTH_FRAME_BYTES,
    ConnectFrame,
    claims_worker_identity,
    parse_first_frame,
)
from .proof import VerifiedDevice, decode_node_base64, public_key_bytes, verify_device_proof
from .protocol_range import (
    Admission,
    admit_connect,
    check_browser_copilot,
    check_browser_origin,
    check_protocol_range,
    resolve_role,
)
from .rejection import ConnectRejection
from .schema import (
    CONNECT_PARAMS_SCHEMA,
    REQUEST_FRAME_SCHEMA,
    connect_params_error,
    validate_connect_params,
)
from .shortcuts import (
    bootstrap_token_invalid,
    device_identity_required,
    device_token_mismatch,
    pairing_required,
    password_mismatch,
    password_missing,
    rate_limited,
    scope_mismatch,
    token_mismatch,
    token_missing,
)
from .texts import CLOSE_REASON_MAX_BYTES, auth_failure_message, truncate_close_reason

__all__ = [
    "CLOSE_REASON_MAX_BYTES",
    "CONNECT_PARAMS_SCHEMA",
    "MAX_PREAUTH_FRAME_BYTES",
    "REQUEST_FRAME_SCHEMA",
    "Admission",
    "ConnectFrame",
    "ConnectRejection",
    "VerifiedDevice",
    "admit_connect",
    "auth_failure_message",
    "bootstrap_token_invalid",
    "check_browser_copilot",
    "check_browser_origin",
    "check_protocol_range",
    "claims_worker_identity",
    "connect_params_error",
    "decode_node_base64",
    "device_identity_required",
    "device_token_mismatch",
    "pairing_required",
    "parse_first_frame",
    "password_mismatch",
    "password_missing",
    "public_key_bytes",
    "rate_limited",
    "resolve_role",
    "scope_mismatch",
    "token_mismatch",
    "token_missing",
    "truncate_close_reason",
    "validate_connect_params",
    "verify_device_proof",
]
