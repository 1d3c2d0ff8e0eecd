"""Frames: request, response, event and cancel, plus ErrorShape and the JSON codec.

Decoding is done once per frame with orjson into plain dicts, then checked against the frame
shapes with cheap type checks (:func:`decode_frame`). The pydantic models below describe the
same shapes for validation where speed does not matter (tests, the gateway's bad-input path).

Nesting is bounded by :data:`~openclaw_desktop.protocol.version.MAX_FRAME_DEPTH` in both
directions: :func:`encode_frame` refuses a deeper frame with :class:`FrameEncodeError`, and
the gateway answers a deeper request with ``INVALID_REQUEST`` (:func:`exceeds_depth`).
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

import orjson
from pydantic import Field

from openclaw_desktop.protocol.base import ClosedModel, OpenModel
from openclaw_desktop.protocol.methods.schema import REQUIRED
from openclaw_desktop.protocol.version import MAX_FRAME_DEPTH

__all__ = [
    "CancelFrame",
    "ErrorShape",
    "EventFrame",
    "Frame",
    "FrameDecodeError",
    "FrameEncodeError",
    "RequestFrame",
    "ResponseFrame",
    "StateVersion",
    "decode_frame",
    "encode_frame",
    "error_shape",
    "exceeds_depth",
    "unparsed_frame_id",
]


class FrameDecodeError(ValueError):
    """Bytes that are not a protocol frame. ``kind`` names the problem for logs."""

    def __init__(self, kind: str, detail: str) -> None:
        super().__init__(kind, detail)
        self.kind = kind
        self.detail = detail

    def __str__(self) -> str:
        return f"{self.kind}: {self.detail}"


class FrameEncodeError(ValueError):
    """A frame that cannot go on the wire: nested deeper than ``limit`` levels, or holding a
    value JSON has no form for. ``kind`` is ``too-deep`` or ``unencodable``."""

    def __init__(self, kind: str, detail: str) -> None:
        super().__init__(kind, detail)
        self.kind = kind
        self.detail = detail

    def __str__(self) -> str:
        return f"{self.kind}: {self.detail}"


class ErrorShape(OpenModel):
    """``{code, message, details?, retryable?, retryAfterMs?}``."""

    code: str
    message: str
    details: Any = None
    retryable: bool | None = None
    retry_after_ms: int | None = Field(default=None, ge=0)


class StateVersion(OpenModel):
    """``{presence, health}`` counters carried by state events."""

    presence: int = 0
    health: int = 0


class RequestFrame(ClosedModel):
    """``{type:"req", id, method, params?, traceparent?, expectedProfileId?}``: the real
    gateway's closed request frame schema is derived from it (``type`` is required on the
    wire; the model fills it in)."""

    type: Annotated[Literal["req"], REQUIRED] = "req"
    id: str = Field(min_length=1)
    method: str = Field(min_length=1)
    params: Any = None
    traceparent: str | None = Field(default=None, max_length=128)
    expected_profile_id: str | None = Field(default=None, min_length=1, max_length=128)


class ResponseFrame(ClosedModel):
    """``{type:"res", id, ok, payload?, error?}``."""

    type: Literal["res"] = "res"
    id: str
    ok: bool
    payload: Any = None
    error: ErrorShape | None = None


class EventFrame(ClosedModel):
    """``{type:"event", event, payload?, seq?, stateVersion?, recipientProfileId?}``."""

    type: Literal["event"] = "event"
    event: str = Field(min_length=1)
    payload: Any = None
    seq: int | None = Field(default=None, ge=0)
    state_version: StateVersion | None = None
    recipient_profile_id: str | None = None


class CancelFrame(ClosedModel):
    """``{type:"cancel", id}``: abort a pending request.

    Additive, and not understood everywhere: our bundled gateway aborts the request, but the
    real gateway 2026.9.6 has no ``cancel`` frame type. It answers the frame with
    ``{type:"res", id, ok:false, error:{code:"INVALID_REQUEST", message:"invalid request
    frame"}}`` under the cancelled request's id and keeps running the original request, whose
    own answer may still arrive later. Clients must expect both answers for a cancelled id
    (the session core drops them as ``LateResponse``).
    """

    type: Literal["cancel"] = "cancel"
    id: str = Field(min_length=1)


Frame = RequestFrame | ResponseFrame | EventFrame | CancelFrame


def exceeds_depth(value: Any, limit: int = MAX_FRAME_DEPTH) -> bool:
    """Whether ``value`` nests more than ``limit`` levels of lists and dicts (``value``
    itself counting as level 1 when it is one). Iterative: any depth is safe to ask about."""
    if limit < 1:
        return isinstance(value, dict | list)
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict):
            children: Any = node.values()
        elif isinstance(node, list):
            children = node
        else:
            continue
        for child in children:
            if isinstance(child, dict | list):
                if depth >= limit:
                    return True
                stack.append((child, depth + 1))
    return False


def encode_frame(frame: dict[str, Any]) -> bytes:
    """Serialise a frame dict to UTF-8 JSON bytes.

    Raises:
        FrameEncodeError: the frame nests deeper than
            :data:`~openclaw_desktop.protocol.version.MAX_FRAME_DEPTH` (``too-deep``), or
            holds something JSON cannot represent (``unencodable``).
    """
    try:
        data = orjson.dumps(frame)
    except orjson.JSONEncodeError as exc:
        if exceeds_depth(frame):
            raise FrameEncodeError("too-deep", _too_deep_text()) from None
        raise FrameEncodeError("unencodable", str(exc)) from None
    # Only a frame with more brackets than the limit can be nested that deep.
    if data.count(b"[") + data.count(b"{") > MAX_FRAME_DEPTH and exceeds_depth(frame):
        raise FrameEncodeError("too-deep", _too_deep_text())
    return data


def _too_deep_text() -> str:
    return f"nested deeper than {MAX_FRAME_DEPTH} levels"


def error_shape(
    code: str,
    message: str,
    details: Any = None,
    *,
    retryable: bool | None = None,
    retry_after_ms: int | None = None,
) -> dict[str, Any]:
    """An ErrorShape dict, leaving out absent fields."""
    out: dict[str, Any] = {"code": code, "message": message}
    if details is not None:
        out["details"] = details
    if retryable is not None:
        out["retryable"] = retryable
    if retry_after_ms is not None:
        out["retryAfterMs"] = retry_after_ms
    return out


def _expect(cond: bool, kind: str, detail: str) -> None:
    if not cond:
        raise FrameDecodeError(kind, detail)


def decode_frame(data: str | bytes) -> dict[str, Any]:
    """Parse one WebSocket message into a frame dict with its required fields checked.

    Raises:
        FrameDecodeError: not UTF-8 (``encoding``), not JSON (``json``), not an object,
            unknown ``type`` (``unknown-type``) or a required field missing or mistyped
            (``invalid-frame``).
    """
    try:
        obj = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        if isinstance(data, bytes):
            try:
                data.decode("utf-8")
            except UnicodeDecodeError as bad:
                raise FrameDecodeError("encoding", f"not UTF-8 at byte {bad.start}") from None
        raise FrameDecodeError("json", str(exc)) from None
    _expect(isinstance(obj, dict), "invalid-frame", "frame is not a JSON object")
    kind = obj.get("type")
    if kind == "event":
        _expect(
            isinstance(obj.get("event"), str) and obj["event"] != "",
            "invalid-frame",
            "event frame without an event name",
        )
        seq = obj.get("seq")
        _expect(
            seq is None or (type(seq) is int and seq >= 0),
            "invalid-frame",
            "event seq is not a non-negative integer",
        )
    elif kind == "res":
        _expect(isinstance(obj.get("id"), str), "invalid-frame", "response without a string id")
        _expect(isinstance(obj.get("ok"), bool), "invalid-frame", "response without a boolean ok")
        err = obj.get("error")
        _expect(
            err is None or isinstance(err, dict), "invalid-frame", "response error is not an object"
        )
    elif kind == "req":
        _expect(
            isinstance(obj.get("id"), str) and obj["id"] != "",
            "invalid-frame",
            "request without an id",
        )
        _expect(
            isinstance(obj.get("method"), str) and obj["method"] != "",
            "invalid-frame",
            "request without a method",
        )
    elif kind == "cancel":
        _expect(
            isinstance(obj.get("id"), str) and obj["id"] != "",
            "invalid-frame",
            "cancel without an id",
        )
    else:
        raise FrameDecodeError("unknown-type", f"unknown frame type {kind!r}")
    frame: dict[str, Any] = obj
    return frame


#: Frames too deep to parse are scanned for their id only up to this size (the scan is a
#: Python loop over strings and brackets: bounded, so a flood of brackets costs little).
MAX_ID_SCAN_BYTES = 1024 * 1024
_TOKENS = re.compile(rb'"(?:[^"\\]|\\.)*"|[\[\]{}:,]')


def unparsed_frame_id(data: str | bytes) -> str | None:
    """The top-level string ``id`` of an object frame the parser refused for its depth
    (deeper than orjson's 1,024 levels), found by scanning its strings and brackets only;
    None when there is none, the frame is not an object or is over
    :data:`MAX_ID_SCAN_BYTES`. As ``JSON.parse``, the last ``id`` wins."""
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    if len(raw) > MAX_ID_SCAN_BYTES or not raw.lstrip().startswith(b"{"):
        return None
    found: str | None = None
    depth, key, after_colon, expect_key = 0, None, False, False
    for match in _TOKENS.finditer(raw):
        token = match.group()
        if token in (b"{", b"["):
            depth += 1
            expect_key = token == b"{" and depth == 1
            after_colon = False
        elif token in (b"}", b"]"):
            depth -= 1
            after_colon = False
        elif depth != 1:
            continue
        elif token == b",":
            expect_key, after_colon = True, False
        elif token == b":":
            after_colon, expect_key = True, False
        elif expect_key:
            key, expect_key = token, False
        elif after_colon and key == b'"id"':
            try:
                value = orjson.loads(token)
            except orjson.JSONDecodeError:
                value = None
            found = value if isinstance(value, str) else found
            after_colon = False
        else:
            after_colon = False
    return found
