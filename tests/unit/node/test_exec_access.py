"""The app's access to this computer's exec approvals document (Settings > *Command
approvals*): through the node's own handlers or the file, a stale base hash is an
:class:`ApprovalsConflict` on both paths, any other refusal an :class:`ApprovalsError`."""

from __future__ import annotations

from pathlib import Path

import pytest

from openclaw_desktop.errors import OpenClawError
from openclaw_desktop.node.context import NodeContext
from openclaw_desktop.node.dispatcher import InvokeDispatcher
from openclaw_desktop.node.exec.access import ApprovalsConflict, ApprovalsError, LocalApprovals
from openclaw_desktop.node.exec.approvals import FILE_NAME, ApprovalsStore
from openclaw_desktop.node.handlers.exec import exec_area
from openclaw_desktop.node.registry import CommandRegistry


def _accesses(path: Path) -> list[LocalApprovals]:
    """The file's own access, and one through the node's handlers (exec commands on)."""
    area = exec_area(NodeContext(exec_approvals_path=path))
    dispatcher = InvokeDispatcher(
        CommandRegistry(area.specs), area.handlers, lambda: {"exec": True}
    )
    return [
        LocalApprovals(ApprovalsStore(path)),
        LocalApprovals(ApprovalsStore(path), dispatcher.dispatch, lambda: True),
    ]


@pytest.mark.parametrize("through_node", [False, True])
async def test_a_stale_base_hash_is_a_conflict_and_writes_nothing(
    tmp_path: Path, through_node: bool
) -> None:
    path = tmp_path / FILE_NAME
    access = _accesses(path)[through_node]
    first = await access.set({"version": 1, "defaults": {"ask": "on-miss"}}, "")
    assert first["file"]["defaults"] == {"ask": "on-miss"}
    written = path.read_bytes()
    with pytest.raises(ApprovalsConflict):
        await access.set({"version": 1, "defaults": {"ask": "always"}}, "stale")
    assert path.read_bytes() == written
    current = await access.get()
    assert current["hash"] == first["hash"]


@pytest.mark.parametrize("through_node", [False, True])
async def test_a_missing_base_hash_is_refused_but_no_conflict(
    tmp_path: Path, through_node: bool
) -> None:
    path = tmp_path / FILE_NAME
    access = _accesses(path)[through_node]
    await access.set({"version": 1}, "")
    with pytest.raises(ApprovalsError) as refused:
        await access.set({"version": 1, "defaults": {"ask": "always"}}, "")
    assert not isinstance(refused.value, ApprovalsConflict)
    assert "base hash required" in str(refused.value)
    assert isinstance(refused.value, OpenClawError)
