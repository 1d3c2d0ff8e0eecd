"""The scopes a connection without a device identity keeps (a pure rule, as the reference).

A device-less operator admitted with the shared token or password is "scope-limited": its
requested scopes are dropped, so it may call only what needs no scope (``health``), which is
what ``openclaw gateway probe`` reports as ``connected_no_operator_scope``. Two local clients
keep what they asked for, when no browser ``Origin`` came with them: the CLI
(``cli``/``cli``) and a backend (``gateway-client``/``backend``). Without auth (``none``)
nothing is dropped."""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["SCOPE_KEEPING_CLIENTS", "deviceless_scopes"]

#: ``(client.id, client.mode)`` of the local clients that keep their scopes without a device.
SCOPE_KEEPING_CLIENTS = frozenset({("cli", "cli"), ("gateway-client", "backend")})
_SHARED_SECRET = frozenset({"token", "password"})


def deviceless_scopes(
    requested: Sequence[str],
    *,
    client_id: str,
    client_mode: str,
    auth_method: str,
    local: bool,
    has_origin: bool,
) -> list[str]:
    """The scopes granted to a device-less connection that asked for ``requested``."""
    if auth_method not in _SHARED_SECRET:
        return list(requested)
    if local and not has_origin and (client_id, client_mode) in SCOPE_KEEPING_CLIENTS:
        return list(requested)
    return []
