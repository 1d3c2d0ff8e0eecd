"""Device pairing decisions and closing a device's connections (:class:`DevicePairing`)."""

from __future__ import annotations

import asyncio
from typing import Any

from gateway.errors import invalid_request
from gateway.hub import Hub, now_ms
from gateway.state import ApprovalKind, GatewayState
from openclaw_desktop.protocol import CloseCode, EventName

__all__ = ["DevicePairing"]


class DevicePairing:
    """Approves and rejects pending device pairing requests (each told to every operator as
    ``device.pair.resolved``) and closes a device's sockets in the background."""

    def __init__(self, state: GatewayState, hub: Hub) -> None:
        self.state = state
        self.hub = hub
        self._background: set[asyncio.Task[None]] = set()

    def approve(self, request_id: str, *, approved_via: ApprovalKind) -> dict[str, Any]:
        """Approve a pending device pairing request."""
        now = now_ms()
        request = self.state.pairing.resolve(request_id, "approved", now, approved_via=approved_via)
        if request is None:
            raise invalid_request("unknown requestId")
        device = self.state.devices.get(request.device_id)
        if device is None:
            raise invalid_request("unknown requestId")
        self.hub.broadcast(
            EventName.DEVICE_PAIR_RESOLVED,
            {
                "requestId": request_id,
                "deviceId": request.device_id,
                "decision": "approved",
                "ts": now,
            },
        )
        return device.to_wire()

    def reject(self, request_id: str) -> None:
        """Reject a pending device pairing request."""
        now = now_ms()
        request = self.state.pairing.resolve(request_id, "rejected", now)
        if request is not None:
            self.hub.broadcast(
                EventName.DEVICE_PAIR_RESOLVED,
                {
                    "requestId": request_id,
                    "deviceId": request.device_id,
                    "decision": "rejected",
                    "ts": now,
                },
            )

    def disconnect(
        self,
        device_id: str,
        reason: str,
        *,
        role: str | None = None,
        code: int = CloseCode.POLICY_VIOLATION,
    ) -> None:
        """Close the device's connections (only ``role``'s, when given) in the background,
        after whatever they were sent so far, including the response being answered now (a
        device that revokes its own token still gets the answer), went out."""
        targets = [
            p
            for p in self.hub.peers.values()
            if p.device_id == device_id and (role is None or p.role == role)
        ]
        if not targets:
            return

        async def close_all() -> None:
            await asyncio.sleep(0)  # let the current request's response be queued first
            await asyncio.gather(
                *(peer.close(code, reason) for peer in targets), return_exceptions=True
            )

        task = asyncio.get_running_loop().create_task(close_all(), name="disconnect-device")
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def drain(self, timeout: float) -> None:
        """Wait (bounded) for background work such as pending disconnects."""
        if self._background:
            await asyncio.wait(set(self._background), timeout=timeout)
        for task in list(self._background):
            task.cancel()
