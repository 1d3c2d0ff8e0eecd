"""A fake OpenAI-compatible audio server on 127.0.0.1 (real HTTP, a thread of its own):

* ``POST /v1/audio/transcriptions``: parses the multipart form for real (``email`` parser),
  checks that ``file`` is a PCM16 mono WAV and that ``model`` is set, records the upload
  and answers ``{"text": <transcript>}`` (``transcript`` is settable; it may be a callable
  taking the upload);
* ``POST /v1/audio/speech``: parses the JSON body, records it and answers with a 440 Hz
  tone in the asked ``response_format`` (``pcm``: 24 kHz PCM16; ``wav``; anything else: some
  bytes with an ``audio/mpeg`` type).

A request that breaks the contract gets HTTP 400 and is recorded in :attr:`problems`.
"""

from __future__ import annotations

import email.parser
import email.policy
import io
import json
import threading
import wave
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Self

import numpy as np

__all__ = ["FakeAudioAPI", "Upload", "tone_pcm16"]


def tone_pcm16(seconds: float = 0.25, rate: int = 24000) -> bytes:
    """A 440 Hz tone as PCM16 mono."""
    t = np.arange(int(rate * seconds)) / rate
    return (8000 * np.sin(2 * np.pi * 440 * t)).astype("<i2").tobytes()


@dataclass
class Upload:
    """One transcription upload as the server understood it."""

    fields: dict[str, str]
    sample_rate: int
    samples: int
    authorization: str | None
    pcm16: bytes = b""


@dataclass
class FakeAudioAPI:
    """Start with ``with FakeAudioAPI() as api:``; :attr:`base_url` ends in ``/v1``."""

    transcript: str | Callable[[Upload], str] = "fake transcript"
    uploads: list[Upload] = field(default_factory=list)
    speech_requests: list[dict[str, Any]] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    status: int = 200
    _server: ThreadingHTTPServer | None = None
    _thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def __enter__(self) -> Self:
        api = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:  # quiet
                return

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length)
                try:
                    if self.path == "/v1/audio/transcriptions":
                        status, kind, data = api._transcribe(self.headers, body)
                    elif self.path == "/v1/audio/speech":
                        status, kind, data = api._speech(self.headers, body)
                    else:
                        status, kind, data = 404, "text/plain", b"no such path"
                except ValueError as exc:
                    api.problems.append(str(exc))
                    status, kind, data = 400, "application/json", b'{"error":"bad request"}'
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        assert self._server is not None and self._thread is not None
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def _transcribe(self, headers: Any, body: bytes) -> tuple[int, str, bytes]:
        content_type = headers.get("Content-Type", "")
        if not content_type.startswith("multipart/form-data"):
            raise ValueError(f"transcription upload is {content_type!r}, not multipart")
        head = f"Content-Type: {content_type}\r\nMIME-Version: 1.0\r\n\r\n".encode()
        message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(head + body)
        fields: dict[str, str] = {}
        wav: bytes | None = None
        for part in message.iter_parts():
            name = part.get_param("name", header="content-disposition")
            payload = part.get_payload(decode=True)
            if not isinstance(payload, bytes):
                raise ValueError(f"form part {name!r} has no body")
            if name == "file":
                wav = payload
                if part.get_filename() is None:
                    raise ValueError("the file part has no filename")
            elif isinstance(name, str):
                fields[name] = payload.decode("utf-8")
        if wav is None:
            raise ValueError("no file part")
        if not fields.get("model"):
            raise ValueError("no model field")
        with wave.open(io.BytesIO(wav), "rb") as reader:
            if reader.getnchannels() != 1 or reader.getsampwidth() != 2:
                raise ValueError("the WAV is not PCM16 mono")
            upload = Upload(
                fields,
                reader.getframerate(),
                reader.getnframes(),
                headers.get("Authorization"),
                reader.readframes(reader.getnframes()),
            )
        self.uploads.append(upload)
        if self.status != 200:
            return self.status, "application/json", b'{"error":{"message":"scripted failure"}}'
        text = self.transcript(upload) if callable(self.transcript) else self.transcript
        return 200, "application/json", json.dumps({"text": text}).encode()

    def _speech(self, headers: Any, body: bytes) -> tuple[int, str, bytes]:
        request = json.loads(body)
        if not isinstance(request, dict) or not request.get("input") or not request.get("model"):
            raise ValueError("speech request without input or model")
        request["__authorization"] = headers.get("Authorization")
        self.speech_requests.append(request)
        if self.status != 200:
            return self.status, "application/json", b'{"error":{"message":"scripted failure"}}'
        fmt = request.get("response_format", "mp3")
        if fmt == "pcm":
            return 200, "audio/pcm", tone_pcm16()
        if fmt == "wav":
            out = io.BytesIO()
            with wave.open(out, "wb") as writer:
                writer.setnchannels(1)
                writer.setsampwidth(2)
                writer.setframerate(24000)
                writer.writeframes(tone_pcm16())
            return 200, "audio/wav", out.getvalue()
        return 200, "audio/mpeg", b"ID3fake-mp3-bytes"
