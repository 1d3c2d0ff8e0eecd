"""Exceptions raised by the gateway's persistent state.

The tree::

    StateError                      root: anything the state store cannot do
     ├── StateCorruptError          the database (or the shared-token file) is unreadable, is not
     │                              ours, or fails its integrity check; it is never recreated
     │                              silently, because that would unpair every device
     ├── StateVersionError          the database was written by a newer schema than this build
     ├── StateBusyError             another connection held the write lock past the busy timeout
     ├── UnknownDeviceError         no paired device (or no approved role) for the id; a LookupError
     ├── UnknownRequestError        no live pending request with that id; a LookupError
     └── ScopeNotApprovedError      a token asked for scopes the device was never approved for;
                                    a ValueError

Every exception keeps structured attributes and computes ``str()`` from them.
"""

from __future__ import annotations

from pathlib import Path

from gateway.errors import BundledGatewayError

__all__ = [
    "ScopeNotApprovedError",
    "StateBusyError",
    "StateCorruptError",
    "StateError",
    "StateVersionError",
    "UnknownDeviceError",
    "UnknownRequestError",
]


class StateError(BundledGatewayError):
    """Root of every error raised by :mod:`gateway.state`."""

    def __init__(self, detail: str) -> None:
        super().__init__(detail)
        self.detail = detail

    def __str__(self) -> str:
        return self.detail


class StateCorruptError(StateError):
    """The file exists but cannot be used as gateway state.

    Attributes:
        path: The offending file.
        detail: What was wrong with it.
    """

    def __init__(self, path: Path, detail: str) -> None:
        super().__init__(detail)
        self.path = path

    def __str__(self) -> str:
        return (
            f"gateway state {self.path} is unusable ({self.detail}); it was left untouched: "
            "move it aside to start with empty state (every device will have to pair again)"
        )


class StateVersionError(StateError):
    """The database schema is newer than this build understands.

    Attributes:
        path: The database file.
        found: The schema version in the file.
        supported: The newest version this build can migrate to.
    """

    def __init__(self, path: Path, found: int, supported: int) -> None:
        super().__init__(f"schema version {found} > {supported}")
        self.path = path
        self.found = found
        self.supported = supported

    def __str__(self) -> str:
        return (
            f"gateway state {self.path} has schema version {self.found}, but this build only "
            f"knows versions up to {self.supported}; run a newer build or move the file aside"
        )


class StateBusyError(StateError):
    """Another connection kept the database locked for longer than the busy timeout.

    Attributes:
        path: The database file.
        timeout_ms: How long the write waited.
    """

    def __init__(self, path: Path, timeout_ms: int) -> None:
        super().__init__(f"database locked for more than {timeout_ms} ms")
        self.path = path
        self.timeout_ms = timeout_ms

    def __str__(self) -> str:
        return (
            f"gateway state {self.path} stayed locked by another connection for more than "
            f"{self.timeout_ms} ms (is a second gateway using the same state directory?)"
        )


class UnknownDeviceError(StateError, LookupError):
    """The device is not paired, or is paired without the role the operation needs.

    Attributes:
        device_id: The device.
        role: The role that was required, if any.
    """

    def __init__(self, device_id: str, role: str | None = None) -> None:
        super().__init__(device_id)
        self.device_id = device_id
        self.role = role

    def __str__(self) -> str:
        if self.role is None:
            return f"device {self.device_id} is not paired"
        return f"device {self.device_id} is not paired for role {self.role!r}"


class UnknownRequestError(StateError, LookupError):
    """No pending request with this id, or it expired.

    Attributes:
        request_id: The id asked for.
    """

    def __init__(self, request_id: str) -> None:
        super().__init__(request_id)
        self.request_id = request_id

    def __str__(self) -> str:
        return f"no pending request {self.request_id!r} (unknown or expired)"


class ScopeNotApprovedError(StateError, ValueError):
    """A token was asked to carry a scope outside the device's approved scopes.

    Attributes:
        device_id: The device.
        role: The token's role.
        scope: The first scope that is not approved.
    """

    def __init__(self, device_id: str, role: str, scope: str) -> None:
        super().__init__(scope)
        self.device_id = device_id
        self.role = role
        self.scope = scope

    def __str__(self) -> str:
        return (
            f"scope {self.scope!r} was never approved for device {self.device_id} "
            f"(role {self.role!r})"
        )
