"""Journey: model text with markup is shown as text. The fake model echoes a prompt holding
``<node>``, ``<b>x</b>``, an ``<img>`` and a Markdown image ``![pixel](…)`` that both point
at a local HTTP server (a tracking pixel): the reply shows the tags literally and the Markdown
image as the words ``[image: pixel]`` (read off the screen by OCR, and through AT-SPI), and
rendering it never fetches the picture (the server records every request: there is none)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from tests.helpers.fake_llm import FakeLLM
from tests.helpers.journey_app import read_row
from tests.journeys.conftest import OpenJourney

pytestmark = pytest.mark.timeout(240)


#: A real 1x1 PNG: a renderer that did fetch it would get a picture it could show.
PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c489"
    "0000000d49444154789c63f8cfc0f01f00050001ff89993d1d0000000049454e44ae426082"
)


class _Pixel(BaseHTTPRequestHandler):
    seen: list[str]

    def _answer(self) -> None:
        self.seen.append(f"{self.command} {self.path}")
        self.send_response(200)
        self.send_header("Content-Type", "image/png")
        self.send_header("Content-Length", str(len(PNG)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(PNG)

    def do_GET(self) -> None:
        self._answer()

    def do_HEAD(self) -> None:
        self._answer()

    def log_message(self, format: str, *args: object) -> None:
        return None


@pytest.fixture
def pixel_server() -> Iterator[tuple[int, list[str]]]:
    """A tracking-pixel server on loopback: (port, the paths it was asked for)."""
    seen: list[str] = []
    handler = type("Pixel", (_Pixel,), {"seen": seen})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, name="pixel", daemon=True)
    thread.start()
    try:
        yield server.server_address[1], seen
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


def squeezed(text: str) -> str:
    return "".join(text.split())


async def test_markup_in_a_reply_is_shown_as_text_and_fetches_nothing(
    open_journey: OpenJourney, model: FakeLLM, pixel_server: tuple[int, list[str]]
) -> None:
    port, seen = pixel_server
    picture = f'<img src="http://127.0.0.1:{port}/p.png">'
    markdown = f"![pixel](http://127.0.0.1:{port}/m.png)"
    prompt = f"Tags: <node> and <b>x</b> then {picture} and {markdown} end"
    async with open_journey(model=model) as j:
        await j.send(prompt)
        rows = await j.wait_messages(
            lambda rows: any(r.endswith(f"{prompt}") and "FAKE-LLM" in r for r in rows),
            "the whole reply",
        )
        reply = next(r for r in rows if r.startswith("FAKE-LLM"))
        assert reply.endswith(prompt)  # what a screen reader reads
        await asyncio.sleep(1.0)  # any fetch the row's rendering started has arrived by now
        painted = squeezed(await read_row(j, "FAKE-LLM", "the-reply"))
        assert seen == [], f"rendering the reply fetched {seen}"
        assert "<node>and<b>x</b>then" in painted, painted
        assert "<imgsrc=" in painted, painted
        assert "and[image:pixel]end" in painted, painted
