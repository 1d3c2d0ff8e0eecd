"""Reading and compare-and-swapping this computer's exec approvals document from the app
(Settings > *Command approvals*), Qt-free.

The app edits the SAME document its node serves: with the node's exec commands on, through
the node's own ``system.execApprovals.get`` / ``set`` handlers (the ones a gateway reaches
with ``exec.approvals.node.*``), so they share one lock and one compare-and-swap; with them
off (nobody else can write it then), through an :class:`ApprovalsStore` of the same file.
A save carries the hash the document had when it was loaded: if it changed in between,
:class:`ApprovalsConflict` says so and nothing is overwritten; a value the node refuses is
an :class:`ApprovalsError` and nothing is written (the store writes atomically).
"""

from __future__ import annotations

import asyncio
import os
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from openclaw_desktop.devices.errors import DeviceError
from openclaw_desktop.errors import OpenClawError
from openclaw_desktop.node.exec.approvals import CHANGED, ApprovalsChanged, ApprovalsStore
from openclaw_desktop.node.exec.env import child_env
from openclaw_desktop.node.exec.policy import resolve_executable
from openclaw_desktop.node.handlers.exec import approvals_path
from openclaw_desktop.node.results import InvokeResult
from openclaw_desktop.protocol import NodeErrorCode

if TYPE_CHECKING:
    from openclaw_desktop.node import NodeHost

__all__ = [
    "ApprovalsAccess",
    "ApprovalsConflict",
    "ApprovalsError",
    "Dispatch",
    "LocalApprovals",
    "node_approvals",
    "resolve_entry_pattern",
]

_GLOB = re.compile(r"[*?\[]")
#: How the node's dispatcher answers a ``set`` whose base hash is stale (an
#: :class:`ApprovalsChanged` turned into a result).
_CHANGED = InvokeResult.error(NodeErrorCode.INVALID_REQUEST, CHANGED)


class ApprovalsError(OpenClawError):
    """The node refused the document (or could not store it); nothing was written."""


class ApprovalsConflict(ApprovalsError):
    """The document changed since it was loaded (its hash is not the base hash any more)."""


class ApprovalsAccess(Protocol):
    """Reads and compare-and-swaps the node's approvals document (the ``get``/``set``
    payload: ``{path, exists, hash, file}``, the socket token left out)."""

    async def get(self) -> dict[str, Any]:
        """The document now."""
        ...

    async def set(self, file: dict[str, Any], base_hash: str) -> dict[str, Any]:
        """Replace it if its hash is still ``base_hash``.

        Raises:
            ApprovalsConflict: it changed meanwhile.
            ApprovalsError: the node refused it.
        """
        ...


Dispatch = Callable[[str, Any], Awaitable[InvokeResult]]


@dataclass
class LocalApprovals:
    """:class:`ApprovalsAccess` of this computer: the node's own handlers while its exec
    commands are on (``serving()``), else the document's file through ``store``."""

    store: ApprovalsStore
    dispatch: Dispatch | None = None
    serving: Callable[[], bool] = lambda: False

    async def get(self) -> dict[str, Any]:
        """The ``system.execApprovals.get`` payload."""
        if self.dispatch is not None and self.serving():
            return self._payload(await self.dispatch("system.execApprovals.get", {}))
        try:  # read only: opening Settings does not create the file (a save does)
            return (await asyncio.to_thread(self.store.read)).redacted()
        except DeviceError as exc:
            raise ApprovalsError(exc.message) from exc

    async def set(self, file: dict[str, Any], base_hash: str) -> dict[str, Any]:
        """The ``system.execApprovals.set`` payload."""
        if self.dispatch is not None and self.serving():
            params = {"file": file, "baseHash": base_hash}
            return self._payload(await self.dispatch("system.execApprovals.set", params))
        try:
            return (await self.store.replace(file, base_hash)).redacted()
        except ApprovalsChanged as exc:
            raise ApprovalsConflict(exc.message) from exc
        except DeviceError as exc:
            raise ApprovalsError(exc.message) from exc

    @staticmethod
    def _payload(result: InvokeResult) -> dict[str, Any]:
        if result.ok and isinstance(result.payload, dict):
            return result.payload
        message = result.error_message or "the node gave no document"
        if (result.error_code, result.error_message) == (
            _CHANGED.error_code,
            _CHANGED.error_message,
        ):
            raise ApprovalsConflict(message)
        raise ApprovalsError(message)


def node_approvals(node: NodeHost | None) -> LocalApprovals:
    """The approvals access of this computer's node (its document when no node runs)."""
    access = LocalApprovals(ApprovalsStore(approvals_path(node.ctx if node else None)))
    if node is not None:  # the node's own handlers while it serves the document
        access.dispatch = node.dispatcher.dispatch
        access.serving = lambda: node.ctx.settings().exec
    return access


def resolve_entry_pattern(text: str, env: dict[str, str] | None = None) -> str:
    """The allowlist pattern for what the user typed: a path glob as typed, else the absolute
    path the binary (a path, or a name on the node's ``PATH``) resolves to.

    Raises:
        ValueError: empty, a relative glob, not found, or not an executable file.
    """
    typed = text.strip()
    if not typed:
        raise ValueError("Type or pick the program to allow (a path, or a name on PATH).")
    if _GLOB.search(typed):
        if not typed.startswith(("/", "~")):
            raise ValueError(
                f"A pattern must be an absolute path glob (like /usr/bin/*), not {typed!r}."
            )
        return typed
    resolved = resolve_executable(typed, None, env if env is not None else child_env())
    if resolved is None:
        raise ValueError(f"No program {typed!r} on this computer.")
    if not os.access(resolved, os.X_OK):
        raise ValueError(f"{resolved} is not an executable program.")
    return resolved
