"""The chat window's state as a pure reducer: SDK events and ``chat.history`` in, a list of
timeline items out (no Qt, no I/O), so the UI only renders and tests need no display.

* a sent message appears at once (``sending``), or ``queued`` while another run goes on;
* the reply streams into one assistant item per run;
* tool calls become cards that fill in when their result arrives (arguments are counted,
  never shown; output previews are redacted);
* after a reconnect, ``chat.history`` is merged without duplicates: items are matched by the
  message id or, for our own sends, by the ``<runId>:user`` idempotency key.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from openclaw_desktop.chat.redact import redact, strip_control
from openclaw_desktop.sdk.events import Event
from openclaw_desktop.sdk.normalize import message_text

__all__ = ["ChatItem", "ChatTimeline", "ItemStatus", "ToolCard"]

ItemStatus = Literal[
    "sending", "waiting", "queued", "sent", "streaming", "done", "aborted", "failed"
]
PREVIEW_CHARS = 400
#: Local items that history does not know yet and must survive a merge.
_LIVE = frozenset({"sending", "waiting", "queued", "streaming", "failed"})


@dataclass
class ToolCard:
    """One tool call as a card."""

    call_id: str
    name: str
    status: Literal["running", "completed", "failed"] = "running"
    arg_count: int = 0
    preview: str = ""


@dataclass
class ChatItem:
    """One row of the chat."""

    key: str
    role: Literal["user", "assistant", "tool", "note", "error"]
    text: str = ""
    status: ItemStatus = "done"
    run_id: str | None = None
    message_id: str | None = None
    tool: ToolCard | None = None
    timestamp: int = 0
    #: Inline images ``{mimeType, data}`` (base64), shown under the text.
    images: list[dict[str, Any]] = field(default_factory=list)
    #: Attached files, as ``name (size)`` labels.
    files: list[str] = field(default_factory=list)


def _preview(result: Any) -> str:
    if isinstance(result, dict):
        content = result.get("content")
        if isinstance(content, list):
            text = "\n".join(
                str(b.get("text", "")) for b in content if isinstance(b, dict) and "text" in b
            )
        else:
            text = str(result.get("text") or "")
    else:
        text = "" if result is None else str(result)
    text = redact(strip_control(text))
    return text if len(text) <= PREVIEW_CHARS else text[: PREVIEW_CHARS - 1] + "…"


def _images(content: Any) -> list[dict[str, Any]]:
    """The image blocks of a message's content (``{type: image, data, mimeType}``)."""
    if not isinstance(content, list):
        return []
    return [
        {"mimeType": str(b.get("mimeType") or "image/png"), "data": b["data"]}
        for b in content
        if isinstance(b, dict) and b.get("type") == "image" and isinstance(b.get("data"), str)
    ]


_FILE_HEAD = "[attached file "


def _user_content(content: Any) -> tuple[str, list[str]]:
    """A user message's own text and its attached files' labels (file text is not shown)."""
    if isinstance(content, str):
        return content, []
    texts = [b for b in content or [] if isinstance(b, dict) and b.get("type") == "text"]
    own = [
        str(b.get("text", "")) for b in texts if not str(b.get("text", "")).startswith(_FILE_HEAD)
    ]
    files = [
        str(b["text"]).split("\n", 1)[0][len(_FILE_HEAD) : -1]
        for b in texts
        if str(b.get("text", "")).startswith(_FILE_HEAD)
    ]
    return "\n".join(own), files


def _arg_count(args: Any) -> int:
    return len(args) if isinstance(args, dict) else 0


class ChatTimeline:
    """The items of one session, in display order."""

    def __init__(self, session_key: str) -> None:
        self.session_key = session_key
        self.items: list[ChatItem] = []
        self._by_key: dict[str, ChatItem] = {}
        self.active_run: str | None = None

    # ------------------------------------------------------------------ helpers
    def _add(self, item: ChatItem) -> ChatItem:
        existing = self._by_key.get(item.key)
        if existing is not None:
            return existing
        self.items.append(item)
        self._by_key[item.key] = item
        return item

    def get(self, key: str) -> ChatItem | None:
        """An item by its key."""
        return self._by_key.get(key)

    @property
    def queued(self) -> list[ChatItem]:
        """Messages waiting for the running turn to end (each can be steered)."""
        return [i for i in self.items if i.status == "queued"]

    # ------------------------------------------------------------------ local actions
    def send(
        self,
        run_id: str,
        text: str,
        *,
        now_ms: int = 0,
        images: list[dict[str, Any]] | None = None,
        files: list[str] | None = None,
    ) -> ChatItem:
        """The user's message, shown at once; queued while another run goes on."""
        status: ItemStatus = "queued" if self.active_run else "sending"
        item = self._add(
            ChatItem(
                f"{run_id}:user",
                "user",
                text,
                status,
                run_id,
                timestamp=now_ms,
                images=list(images or []),
                files=list(files or []),
            )
        )
        if self.active_run is None:
            self.active_run = run_id
        return item

    def steered(self, run_id: str) -> None:
        """A queued message was injected into the running turn."""
        item = self._by_key.get(f"{run_id}:user")
        if item is not None:
            item.status = "sent"

    def waiting(self, run_id: str) -> None:
        """The gateway is away: the message waits and goes out when it is back."""
        item = self._by_key.get(f"{run_id}:user")
        if item is not None:
            item.status = "waiting"

    def failed_send(self, run_id: str, reason: str) -> None:
        """The gateway refused a send: the message stays, marked, with the reason."""
        item = self._by_key.get(f"{run_id}:user")
        if item is not None:
            item.status = "failed"
        self._add(ChatItem(f"{run_id}:error", "error", reason, "failed", run_id))
        if self.active_run == run_id:
            self.active_run = None

    # ------------------------------------------------------------------ events
    def apply(self, event: Event) -> ChatItem | None:
        """Fold one SDK event in; returns the item that changed, if any."""
        if event.session_key is not None and not event.session_key.endswith(
            self.session_key.split(":")[-1]
        ):
            return None
        run_id = event.run_id or ""
        kind = event.type
        if kind in ("run.started", "assistant.delta") and run_id:
            user = self._by_key.get(f"{run_id}:user")
            if user is not None and user.status in ("sending", "queued"):
                user.status = "sent"
            self.active_run = run_id
        if kind == "assistant.delta":
            item = self._assistant(run_id, event.ts)
            item.status = "streaming"
            cumulative = event.data.get("cumulative")
            if isinstance(cumulative, str) and cumulative:
                item.text = cumulative
            elif event.data.get("replace"):
                item.text = str(event.data.get("text") or "")
            else:
                item.text += str(event.data.get("text") or "")
            return item
        if kind == "stream.reset":
            item = self._assistant(run_id, event.ts)
            cumulative = event.data.get("cumulative")
            if isinstance(cumulative, str) and cumulative:
                item.text = cumulative
            return item
        if kind == "assistant.message":
            item = self._assistant(run_id, event.ts)
            item.text = str(event.data.get("text") or "")
            return item
        if kind in ("run.completed", "run.cancelled", "run.failed", "run.timed_out"):
            return self._finish(run_id, kind, event)
        if kind.startswith("tool.call."):
            return self._tool(run_id, kind, event)
        return None

    def _assistant(self, run_id: str, ts: int) -> ChatItem:
        return self._add(
            ChatItem(f"{run_id}:assistant", "assistant", "", "streaming", run_id, timestamp=ts)
        )

    def _finish(self, run_id: str, kind: str, event: Event) -> ChatItem | None:
        if self.active_run == run_id:
            self.active_run = None
        item = self._by_key.get(f"{run_id}:assistant")
        status: ItemStatus = {"run.completed": "done", "run.cancelled": "aborted"}.get(
            kind, "failed"
        )  # type: ignore[assignment]
        if item is not None:
            item.status = status
        if kind in ("run.failed", "run.timed_out"):
            reason = str(event.data.get("errorMessage") or "the run failed")
            return self._add(
                ChatItem(f"{run_id}:error", "error", reason, "failed", run_id, timestamp=event.ts)
            )
        return item

    def _tool(self, run_id: str, kind: str, event: Event) -> ChatItem:
        call_id = str(event.data.get("toolCallId") or "")
        key = f"{run_id}:tool:{call_id}"
        item = self._by_key.get(key)
        if item is None:
            card = ToolCard(call_id, str(event.data.get("name") or "tool"))
            item = self._add(
                ChatItem(key, "tool", "", "streaming", run_id, tool=card, timestamp=event.ts)
            )
        assert item.tool is not None
        if kind == "tool.call.started":
            item.tool.arg_count = _arg_count(event.data.get("args"))
        elif kind == "tool.call.delta":
            item.tool.preview = _preview(event.data.get("partial"))
        else:
            item.tool.status = "failed" if kind == "tool.call.failed" else "completed"
            item.tool.preview = _preview(event.data.get("result"))
            result = event.data.get("result")
            item.images = _images(result.get("content") if isinstance(result, dict) else None)
            item.status = "done"
        return item

    # ------------------------------------------------------------------ history
    def merge_history(self, messages: list[dict[str, Any]]) -> None:
        """Reconcile with ``chat.history`` (after connecting or reconnecting): every history
        message appears once, in history order, and live items it does not know yet (a
        reply still streaming) stay after it."""
        merged: list[ChatItem] = []
        seen: set[str] = set()
        calls: dict[str, ChatItem] = {}
        for message in messages:
            for item in self._from_history(message, calls):
                if item.key in seen:
                    continue
                seen.add(item.key)
                live = self._by_key.get(item.key)
                if live is not None and item.role == "assistant" and live.status == "streaming":
                    item = live
                merged.append(item)
        for item in self.items:
            if item.key not in seen and item.status in _LIVE:
                merged.append(item)
                seen.add(item.key)
        self.items = merged
        self._by_key = {i.key: i for i in merged}

    def _from_history(self, message: dict[str, Any], calls: dict[str, ChatItem]) -> list[ChatItem]:
        meta = message.get("__openclaw") if isinstance(message.get("__openclaw"), dict) else {}
        assert isinstance(meta, dict)
        role = message.get("role")
        ts = int(message.get("timestamp") or 0)
        mid = str(meta.get("id") or "")
        run_id = meta.get("runId")
        if role == "user":
            ikey = str(message.get("idempotencyKey") or meta.get("idempotencyKey") or "")
            rid = ikey[: -len(":user")] if ikey.endswith(":user") else None
            content = message.get("content")
            text, files = _user_content(content)
            return [
                ChatItem(
                    f"{rid}:user" if rid else f"msg:{mid}",
                    "user",
                    text,
                    "sent",
                    rid,
                    mid,
                    timestamp=ts,
                    images=_images(content),
                    files=files,
                )
            ]
        if role == "assistant":
            out: list[ChatItem] = []
            content = message.get("content") if isinstance(message.get("content"), list) else []
            assert isinstance(content, list)
            for block in content:
                if isinstance(block, dict) and block.get("type") == "toolCall":
                    call_id = str(block.get("id"))
                    card = ToolCard(
                        call_id,
                        str(block.get("name")),
                        "running",
                        _arg_count(block.get("arguments")),
                    )
                    item = ChatItem(
                        f"{run_id}:tool:{call_id}", "tool", "", "streaming", run_id, mid, card, ts
                    )
                    calls[call_id] = item
                    out.append(item)
            text = message_text(message)
            stop = message.get("stopReason")
            if text or stop != "toolUse":
                status: ItemStatus = "aborted" if stop == "aborted" else "done"
                role_name: Literal["assistant", "note"] = "assistant" if run_id else "note"
                key = f"{run_id}:assistant" if run_id else f"msg:{mid}"
                out.append(
                    ChatItem(
                        key,
                        role_name,
                        text,
                        status,
                        run_id,
                        mid,
                        timestamp=ts,
                        images=_images(content),
                    )
                )
            return out
        if role == "toolResult":
            answered = calls.get(str(message.get("toolCallId")))
            if answered is not None and answered.tool is not None:
                answered.tool.status = "failed" if message.get("isError") else "completed"
                answered.tool.preview = _preview(message)
                answered.images = _images(message.get("content"))
                answered.status = "done"
        return []
