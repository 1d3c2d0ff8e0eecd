"""Dictation through a network stall: how many microphone frames are dropped.

The microphone is a real ALSA capture device fed at real-time pace (the test microphone),
captured by PortAudio into :class:`~openclaw_desktop.devices.audio.MicrophoneStream`'s
bounded drop-oldest queue and streamed by :class:`~openclaw_desktop.voice.Dictation` to our
gateway through a loopback TCP proxy that stops forwarding for ``stall`` seconds mid-way
(a Wi-Fi hiccup). At most 4 appends are in flight, so during the stall the frames wait in
the queue (250 frames, 5 s); a longer stall drops the oldest, never the newest.

    QT_QPA_PLATFORM=offscreen .venv/bin/python -m bench.voice_stall [--stalls 0,2,8]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import tempfile
import time
from pathlib import Path
from typing import Any

from openclaw_desktop.sdk import OpenClaw
from openclaw_desktop.voice import AudioContract, Dictation, open_microphone
from tests.helpers.alsa_mic import AlsaTestMic
from tests.helpers.bundled_gateway import TOKEN, bundled_gateway

SCOPES = ("operator.read", "operator.write", "operator.talk")


class StallingProxy:
    """Forwards TCP both ways; :meth:`stall` holds the bytes (not the connection)."""

    def __init__(self, target_port: int) -> None:
        self.target_port = target_port
        self.flowing = asyncio.Event()
        self.flowing.set()
        self.server: asyncio.Server | None = None

    async def start(self) -> int:
        self.server = await asyncio.start_server(self._client, "127.0.0.1", 0)
        return int(self.server.sockets[0].getsockname()[1])

    async def _pipe(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(ConnectionError):
            while data := await reader.read(65536):
                await self.flowing.wait()
                writer.write(data)
                await writer.drain()
        writer.close()

    async def _client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.target_port)
        await asyncio.gather(self._pipe(reader, up_writer), self._pipe(up_reader, writer))

    async def stall(self, seconds: float) -> None:
        self.flowing.clear()
        await asyncio.sleep(seconds)
        self.flowing.set()

    async def aclose(self) -> None:
        if self.server is not None:
            self.server.close()


async def one(stall_s: float, root: Path) -> dict[str, Any]:
    """Dictate 12 s of microphone audio with a stall of ``stall_s`` after 3 s."""
    async with bundled_gateway(root / f"state-{stall_s}") as gw:
        proxy = StallingProxy(gw.port)
        port = await proxy.start()
        url = f"ws://127.0.0.1:{port}"
        mic_dir = root / f"mic-{stall_s}"
        mic_dir.mkdir()
        with AlsaTestMic(mic_dir, sample_rate=24_000, idle="noise"):
            async with OpenClaw.connect(
                url, token=TOKEN, identity="ephemeral", scopes=SCOPES, timeout=60
            ) as client:
                dictation = Dictation(
                    client,
                    lambda rate: open_microphone(None, rate),
                    audio=AudioContract("pcm16", 24_000),
                )
                stop = asyncio.Event()
                started = time.monotonic()
                running = asyncio.ensure_future(dictation.run(stop))
                await asyncio.sleep(3)
                if stall_s:
                    await proxy.stall(stall_s)
                await asyncio.sleep(max(0.0, 12 - (time.monotonic() - started)))
                stop.set()
                result = await asyncio.wait_for(running, 60)
        await proxy.aclose()
    return {
        "stall_s": stall_s,
        "frames_sent": result.frames_sent,
        "frames_dropped": result.frames_dropped,
        "errors": result.errors,
    }


async def run(stalls: list[float]) -> list[dict[str, Any]]:
    root = Path(tempfile.mkdtemp(prefix="bench-voice-stall-"))
    return [await one(s, root) for s in stalls]


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--stalls", default="0,2,8", help="stall lengths in seconds")
    parser.add_argument("--json", type=Path, help="also write the results here")
    args = parser.parse_args()
    rows = asyncio.run(run([float(s) for s in args.stalls.split(",")]))
    print("| network stall | frames sent (12 s at 50/s) | frames dropped |")
    print("|---|---|---|")
    for row in rows:
        print(f"| {row['stall_s']:g} s | {row['frames_sent']} | {row['frames_dropped']} |")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
