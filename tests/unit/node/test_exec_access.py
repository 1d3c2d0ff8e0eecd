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


@pytest.fixture(params=["file", "through-node"])
def access(request: pytest.FixtureRequest, tmp_path: Path) -> LocalApprovals:
    """The file's own access, or one through the node's handlers (exec commands on)."""
    path = tmp_path / FILE_NAME
    if request.param == "file":
        return LocalApprovals(ApprovalsStore(path))
    area = exec_area(NodeContext(exec_approvals_path=path))
    dispatcher = InvokeDispatcher(
        CommandRegistry(area.specs), area.handlers, lambda: {"exec": True}
    )
    return LocalApprovals(ApprovalsStore(path), dispatcher.dispatch, lambda: True)


async def test_a_stale_base_hash_is_a_conflict_and_writes_nothing(
    access: LocalApprovals, tmp_path: Path
) -> None:
    path = tmp_path / FILE_NAME
    first = await access.set({"version": 1, "defaults": {"ask": "on-miss"}}, "")
    assert first["file"]["defaults"] == {"ask": "on-miss"}
    written = path.read_bytes()
    with pytest.raises(ApprovalsConflict):
        await access.set({"version": 1, "defaults": {"ask": "always"}}, "stale")
    assert path.read_bytes() == written
    current = await access.get()
    assert current["hash"] == first["hash"]


async def test_a_missing_base_hash_is_refused_but_no_conflict(access: LocalApprovals) -> None:
    await access.set({"version": 1}, "")
    with pytest.raises(ApprovalsError) as refused:
        await access.set({"version": 1, "defaults": {"ask": "always"}}, "")
    assert not isinstance(refused.value, ApprovalsConflict)
    assert "base hash required" in str(refused.value)
    assert isinstance(refused.value, OpenClawError)
