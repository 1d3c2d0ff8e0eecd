"""The REAL Control UI (the real gateway's web app) in headless Chromium, pointed at a gateway.

The real ``openclaw`` package ships its Control UI built, as static files under
``dist/control-ui`` (an ``index.html`` single-page app with hashed assets). The real gateway
serves them itself; here :class:`ControlUiServer` serves the same files from a tiny
loopback HTTP server (unknown paths without a file extension get ``index.html``, as an SPA
host does), so the very same web app can be pointed at either gateway: it takes
``?gatewayUrl=<ws url>#token=<token>`` (the real Control UI's remote-gateway handoff) and
asks once whether to switch to that gateway (:func:`open_chat` confirms).

:func:`error_answers` pairs every ``res`` frame with ``ok: false`` that the page received
with the request it answered, from the WebSocket frames Chromium recorded.

Typical use::

    with ControlUiServer.start(install) as web:
        async with Chromium.launch() as browser:
            page = await open_chat(browser, web, gw.url, gw.token)
            await send_message(page, "hello there")
            reply = ...  # final_reply(page), once the run ended
            await page.until(text_contains(longest_line(reply)), timeout=30)
            assert error_answers(page) == []
"""

from __future__ import annotations

import functools
import http.server
import json
import threading
import urllib.parse
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any, Self

from tests.helpers.cdp import Chromium, Page
from tests.helpers.real_openclaw import OpenClawInstall

__all__ = [
    "DEEP_TEXT",
    "ControlUiServer",
    "ErrorAnswer",
    "control_ui_root",
    "error_answers",
    "final_reply",
    "open_chat",
    "requested_methods",
    "send_message",
    "text_contains",
]

#: Every element of the page, shadow roots included (the app is built of web components).
_ALL_ELEMENTS = """(() => { const out = []; const walk = (root) => {
  for (const el of root.querySelectorAll('*')) {
    out.push(el); if (el.shadowRoot) walk(el.shadowRoot);
  }
}; walk(document); return out; })()"""
_COMPOSER = "textarea[aria-label='Chat composer']"


def control_ui_root(install: OpenClawInstall) -> Path:
    """The built Control UI of the real package (``dist/control-ui``)."""
    return install.openclaw_mjs.parent / "dist" / "control-ui"


class _Handler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: no request log on stderr."""

    def send_head(self) -> Any:
        path = Path(self.translate_path(self.path))
        if not path.exists() and not Path(urllib.parse.urlsplit(self.path).path).suffix:
            self.path = "/index.html"
        return super().send_head()


class ControlUiServer:
    """The real Control UI's static files on ``http://127.0.0.1:<port>/``."""

    def __init__(self, server: http.server.ThreadingHTTPServer) -> None:
        self._server = server
        self.port: int = server.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self._thread = threading.Thread(
            target=server.serve_forever, name="control-ui-http", daemon=True
        )

    @classmethod
    def start(cls, install: OpenClawInstall) -> ControlUiServer:
        """Serve the install's Control UI on a free loopback port."""
        root = control_ui_root(install)
        if not (root / "index.html").is_file():
            raise FileNotFoundError(f"no built Control UI under {root}")
        handler = functools.partial(_Handler, directory=str(root))
        web = cls(http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler))
        web._thread.start()
        return web

    def stop(self) -> None:
        """Stop serving and close the socket."""
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(5)

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def chat_url(self, gateway_url: str, token: str) -> str:
        """The chat page handing the app ``gateway_url`` and ``token``."""
        query = urllib.parse.urlencode({"gatewayUrl": gateway_url})
        return f"{self.url}/chat?{query}#token={urllib.parse.quote(token, safe='')}"


#: The page's text, shadow roots included (``innerText`` of the document does not reach
#: into the components' shadow trees).
DEEP_TEXT = f"""(() => {{ const parts = [document.body ? document.body.innerText : ''];
for (const el of {_ALL_ELEMENTS}) {{ if (el.shadowRoot) parts.push(el.shadowRoot.textContent); }}
return parts.join('\\n'); }})()"""


def text_contains(text: str) -> str:
    """A JavaScript expression: the page's text (shadow roots included) contains ``text``."""
    return f"{DEEP_TEXT}.includes({json.dumps(text)})"


def _click_button(prefix: str) -> str:
    return (
        f"(() => {{ const b = {_ALL_ELEMENTS}.find(e => e.tagName === 'BUTTON' && "
        f"e.innerText.trim().startsWith({json.dumps(prefix)})); "
        "if (!b) return null; b.click(); return b.innerText.trim(); })()"
    )


def _focus(selector: str) -> str:
    return (
        f"(() => {{ const t = {_ALL_ELEMENTS}.find(e => e.matches({json.dumps(selector)})); "
        "if (!t) return false; t.focus(); return true; })()"
    )


async def open_chat(
    browser: Chromium, web: ControlUiServer, gateway_url: str, token: str, *, timeout: float = 90
) -> Page:
    """A tab with the Control UI's chat connected to ``gateway_url``: confirms the switch
    to that gateway and waits for the chat composer."""
    page = await browser.new_page()
    await page.goto(web.chat_url(gateway_url, token))
    host = urllib.parse.urlsplit(gateway_url).netloc
    await page.until(_click_button(f"Switch to {host}"), timeout=timeout)
    await page.until(_focus(_COMPOSER), timeout=timeout)
    return page


async def send_message(page: Page, text: str) -> None:
    """Type ``text`` into the chat composer and press Enter, as a user does."""
    if not await page.evaluate(_focus(_COMPOSER)):
        raise RuntimeError("no chat composer on the page")
    await page.call("Input.insertText", {"text": text})
    key = {"key": "Enter", "code": "Enter", "windowsVirtualKeyCode": 13}
    await page.call("Input.dispatchKeyEvent", {"type": "keyDown", "text": "\r", **key})
    await page.call("Input.dispatchKeyEvent", {"type": "keyUp", **key})


@dataclass(frozen=True)
class ErrorAnswer:
    """A request of the page that the gateway answered with an error."""

    method: str
    params: Any
    code: str
    message: str


def _frames(page: Page, direction: str) -> list[dict[str, Any]]:
    out = []
    for frame in page.ws_frames:
        body = frame.json()
        if frame.direction == direction and isinstance(body, dict):
            out.append(body)
    return out


def final_reply(page: Page) -> str | None:
    """The text of the final assistant message of the page's last ``chat.send`` run, as the
    gateway sent it (its ``chat`` event with state ``final``); None before it came."""
    sends = [
        f
        for f in _frames(page, "sent")
        if f.get("type") == "req" and f.get("method") == "chat.send"
    ]
    if not sends:
        return None
    run_id = (sends[-1].get("params") or {}).get("idempotencyKey")
    for event in reversed(_frames(page, "received")):
        payload = event.get("payload") or {}
        if event.get("event") != "chat" or payload.get("runId") != run_id:
            continue
        if payload.get("state") != "final":
            continue
        content = (payload.get("message") or {}).get("content") or []
        if isinstance(content, str):
            return content
        return "".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return None


def requested_methods(page: Page) -> list[str]:
    """Every method the page called, in order (``connect`` included)."""
    return [f["method"] for f in _frames(page, "sent") if f.get("type") == "req"]


def error_answers(page: Page) -> list[ErrorAnswer]:
    """Every error answer the page received, with the request it answered."""
    requests = {f.get("id"): f for f in _frames(page, "sent") if f.get("type") == "req"}
    out = []
    for answer in _frames(page, "received"):
        if answer.get("type") != "res" or answer.get("ok") is not False:
            continue
        request = requests.get(answer.get("id"), {})
        error = answer.get("error") or {}
        out.append(
            ErrorAnswer(
                method=str(request.get("method", "?")),
                params=request.get("params"),
                code=str(error.get("code", "")),
                message=str(error.get("message", "")),
            )
        )
    return out
