"""Opening the microphone for voice: the configured input, or the default one when it is
gone (unplugged, renamed), saying so."""

from __future__ import annotations

import logging
from collections.abc import Callable

from openclaw_desktop.devices.audio import MicrophoneStream, find_input
from openclaw_desktop.devices.errors import DeviceError

__all__ = ["open_microphone"]

log = logging.getLogger("openclaw.voice")


async def open_microphone(
    wanted: str | None,
    sample_rate: int,
    *,
    on_fallback: Callable[[str], None] | None = None,
) -> MicrophoneStream:
    """An open 20 ms PCM16 stream at ``sample_rate`` from ``wanted`` (name or index).

    Raises:
        DeviceError: no usable input at all.
    """
    try:
        device = await find_input(wanted)
    except DeviceError as exc:
        if not wanted:
            raise
        note = f"microphone {wanted!r} is not available ({exc}); using the default input"
        log.warning("%s", note)
        if on_fallback is not None:
            on_fallback(note)
        device = await find_input(None)
    stream = MicrophoneStream(device, sample_rate=sample_rate)
    await stream.open()
    return stream
