"""The node's push-to-talk gets its transcript from the gateway's recognizer: speech played
into a real ALSA capture device, recorded by talk.ptt.once, sent by GatewayTranscriber
through an operator session to our gateway (pocketsphinx), and returned to the caller."""

from __future__ import annotations

import asyncio
from pathlib import Path

import numpy as np
import pytest

from openclaw_desktop.config import NodeSettings
from openclaw_desktop.node.context import NodeContext
from openclaw_desktop.node.dispatcher import InvokeDispatcher
from openclaw_desktop.node.handlers.talk import talk_area
from openclaw_desktop.node.registry import CommandRegistry
from openclaw_desktop.sdk import OpenClaw
from openclaw_desktop.voice.transcribe import GatewayTranscriber
from tests.helpers.alsa_mic import PCM_NAME, AlsaTestMic
from tests.helpers.bundled_gateway import TOKEN, bundled_gateway
from tests.helpers.speech import espeak_pcm16

pytestmark = pytest.mark.timeout(120)

SCOPES = ("operator.read", "operator.write", "operator.talk")


async def test_ptt_once_returns_the_gateways_transcript(tmp_path: Path) -> None:
    """ "hello world" said into the microphone comes back as the transcript of ptt.once."""
    settings = NodeSettings(microphone=True, microphone_device=PCM_NAME)
    speech = np.frombuffer(espeak_pcm16("hello world", 16_000), dtype="<i2")
    async with (
        bundled_gateway(tmp_path / "state") as gw,
        OpenClaw.connect(gw.url, token=TOKEN, identity="ephemeral", scopes=SCOPES) as client,
    ):
        ctx = NodeContext(settings=lambda: settings, transcriber=GatewayTranscriber(client))
        area = talk_area(ctx)
        dispatcher = InvokeDispatcher(
            CommandRegistry(area.specs), area.handlers, lambda: settings.toggles()
        )
        with AlsaTestMic(tmp_path, sample_rate=16_000, idle="noise") as mic:
            once = asyncio.ensure_future(dispatcher.dispatch("talk.ptt.once", {"silenceMs": 800}))
            await asyncio.sleep(0.5)
            mic.play(speech)
            result = await asyncio.wait_for(once, 60)
    assert result.ok, result
    assert result.payload["status"] == "transcribed"
    assert result.payload["transcript"] == "hello world"


async def test_without_a_recognizer_the_transcriber_says_so(tmp_path: Path) -> None:
    """A gateway with transcription off: the transcriber raises, so ptt answers UNAVAILABLE
    (the handler turns the exception into that answer)."""
    state = tmp_path / "state"
    state.mkdir(parents=True)
    (state / "talk.json").write_text('{"transcription": {"provider": "none"}}', "utf-8")
    async with (
        bundled_gateway(state) as gw,
        OpenClaw.connect(gw.url, token=TOKEN, identity="ephemeral", scopes=SCOPES) as client,
    ):
        transcriber = GatewayTranscriber(client)
        with pytest.raises(Exception, match="transcription"):
            await transcriber(bytes(32_000), 16_000)
