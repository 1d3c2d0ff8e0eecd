"""mDNS on loopback for tests: make multicast work on 127.0.0.1 (or say why not), and
record what a GatewayBrowser sees.

Linux loops multicast sent with ``IP_MULTICAST_IF=127.0.0.1`` back to local members even
though ``lo`` has no MULTICAST flag, so this normally needs no setup. :func:`loopback_multicast`
checks with a raw UDP probe first; if the probe fails and we are root, it runs
``ip link set lo multicast on`` (undone afterwards) and probes again; otherwise it skips,
saying what failed. Under CI (the ``CI`` environment variable set, as every CI service does)
it fails instead of skipping: CI runs as root, so zeroconf must work there, and a skipped
discovery test would let the requirement pass silently. Use it from a module-scoped fixture.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import shutil
import socket
import struct
import subprocess
from collections.abc import Iterator

import pytest

from openclaw_desktop.discovery import ChangeKind, GatewayEndpoint

__all__ = ["LOOPBACK", "Recorder", "loopback_multicast", "running_in_ci"]

LOOPBACK = ["127.0.0.1"]


def running_in_ci() -> bool:
    """Whether ``CI`` is set (to anything but empty, ``0``, ``false`` or ``no``)."""
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def _probe_loopback_multicast(timeout: float = 1.0) -> str | None:
    """Send one datagram to an mDNS-style group on 127.0.0.1; None if it comes back."""
    group = "224.0.0.251"
    receiver = socket.socket(socket.AF_INET, socket.SOCK_DGRAM, socket.IPPROTO_UDP)
    sender = socket.socket(socket.AF_INET, socket.SOCK_DGRAM, socket.IPPROTO_UDP)
    try:
        receiver.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        receiver.bind(("", 0))
        port = receiver.getsockname()[1]
        membership = socket.inet_aton(group) + socket.inet_aton("127.0.0.1")
        receiver.setsockopt(socket.IPPROTO_IP, socket.IP_ADD_MEMBERSHIP, membership)
        sender.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_IF, socket.inet_aton("127.0.0.1"))
        sender.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_LOOP, 1)
        sender.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_TTL, struct.pack("b", 1))
        token = secrets.token_bytes(8)
        sender.sendto(token, (group, port))
        receiver.settimeout(timeout)
        while True:
            data, _ = receiver.recvfrom(64)
            if data == token:
                return None
    except TimeoutError:
        return "a multicast datagram sent on 127.0.0.1 did not come back"
    except OSError as exc:
        return f"multicast on 127.0.0.1 failed: {exc}"
    finally:
        receiver.close()
        sender.close()


def _lo_multicast_flag(on: bool) -> None:
    subprocess.run(
        ["ip", "link", "set", "lo", "multicast", "on" if on else "off"],
        check=True,
        capture_output=True,
        timeout=10,
    )


def _lo_state() -> str:
    """``lo``'s UP/MULTICAST flags in this network namespace, for the skip message."""
    try:
        import fcntl  # POSIX only

        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
            request = struct.pack("16sH", b"lo", 0)
            flags = struct.unpack("16sH", fcntl.ioctl(sock, 0x8913, request))[1]  # SIOCGIFFLAGS
    except (ImportError, OSError):
        return "lo flags unknown"
    up = "yes" if flags & 0x1 else "no"
    multicast = "yes" if flags & 0x1000 else "no"
    return f"lo UP={up} MULTICAST={multicast}"


@contextlib.contextmanager
def loopback_multicast() -> Iterator[None]:
    """Make sure multicast works on loopback, or skip saying exactly what failed (fail
    under CI: see :func:`running_in_ci`)."""
    problem = _probe_loopback_multicast()
    changed = False
    if problem is not None:
        if hasattr(os, "geteuid") and os.geteuid() == 0 and shutil.which("ip"):
            _lo_multicast_flag(True)
            changed = True
            problem = _probe_loopback_multicast()
            attempt = "even after `ip link set lo multicast on`"
        else:
            attempt = "not root (or no `ip`), so `ip link set lo multicast on` was not tried"
    if problem is not None:
        state = _lo_state()
        if changed:
            _lo_multicast_flag(False)
        message = f"mDNS on loopback unavailable: {problem}; {attempt}; {state}"
        if running_in_ci():
            pytest.fail(f"{message} (CI is set, so this fails rather than skips)")
        pytest.skip(message)
    try:
        yield
    finally:
        if changed:
            _lo_multicast_flag(False)


class Recorder:
    """Collects browser changes and waits for a specific one."""

    def __init__(self) -> None:
        self.events: list[tuple[ChangeKind, GatewayEndpoint]] = []
        self._changed = asyncio.Event()

    def __call__(self, kind: ChangeKind, endpoint: GatewayEndpoint) -> None:
        self.events.append((kind, endpoint))
        self._changed.set()

    async def wait_for(self, kind: ChangeKind, name: str, within: float) -> GatewayEndpoint:
        async with asyncio.timeout(within):
            while True:
                for seen_kind, endpoint in self.events:
                    if seen_kind == kind and endpoint.name == name:
                        return endpoint
                self._changed.clear()
                await self._changed.wait()
