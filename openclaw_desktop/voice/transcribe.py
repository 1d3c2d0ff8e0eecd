"""A finished recording to text through a gateway transcription session: how this
computer's node answers ``talk.ptt.*`` with a transcript when the app also has an operator
session (the node itself may not open talk sessions)."""

from __future__ import annotations

import asyncio

from openclaw_desktop.protocol.audio import resample_pcm16
from openclaw_desktop.sdk import OpenClaw
from openclaw_desktop.voice.talk_session import AudioContract, TalkSession, parse_event

__all__ = ["GatewayTranscriber"]

#: 20 ms of the session's default format (pcm16, 24 kHz, 2 bytes a sample).
_FRAME_BYTES = 960
#: How long the final transcript may take after the session is closed.
FINAL_TIMEOUT_S = 30.0


class GatewayTranscriber:
    """``await transcriber(pcm16, rate)`` -> the text (``""`` when nothing was heard).

    Raises:
        OpenClawError: the gateway has no recognizer (the node then answers UNAVAILABLE).
    """

    def __init__(self, client: OpenClaw) -> None:
        self.client = client

    async def __call__(self, pcm: bytes, sample_rate: int) -> str:
        contract = AudioContract()
        audio = resample_pcm16(pcm, sample_rate, contract.sample_rate)
        session = await TalkSession.open(self.client, audio=contract)
        done: list[str] = []
        try:
            for start in range(0, len(audio), _FRAME_BYTES):
                await session.send_pcm(audio[start : start + _FRAME_BYTES])
            await session.close()
            async with asyncio.timeout(FINAL_TIMEOUT_S):
                while True:
                    event = await session.next_event(FINAL_TIMEOUT_S)
                    kind, text, _payload = parse_event(event or {"type": "session.closed"})
                    if kind == "session.closed":
                        break
                    if kind == "transcript.done":
                        done.append(text)
        finally:
            await session.aclose()
        return " ".join(t for t in done if t)
