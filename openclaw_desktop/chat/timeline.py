"""The chat window's state as a pure reducer: SDK events and ``chat.history`` in, a list of
timeline items out (no Qt, no I/O), so the UI only renders and tests need no display.

* a sent message appears at once (``sending``), or ``queued`` while another run goes on;
  until its run starts it stays below everything the running reply adds. Steered, it takes
  its place when its own run ends (both gateways end it as the running turn takes it in),
  or, where that end was missed, when the run that takes it in starts its next message;
* every assistant message of a run is its own item, in transcript order (text before a tool
  call, the card, the text after it), keyed as in :mod:`openclaw_desktop.chat.items`;
* tool calls become cards that fill in when their result arrives (arguments are counted,
  never shown; output previews are redacted);
* ``chat.history`` gives the same items (:mod:`openclaw_desktop.chat.history`); merging it
  after a reconnect keeps what only the live stream knows (a message still streaming, a
  send not yet stored, a reply the gateway cut before storing it) and duplicates nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from openclaw_desktop.chat.history import from_history
from openclaw_desktop.chat.items import (
    INTERRUPTED,
    ChatItem,
    ItemStatus,
    ToolCard,
    arg_count,
    assistant_key,
    preview,
    tool_images,
)
from openclaw_desktop.chat.tool_summary import describe_call
from openclaw_desktop.sdk.events import Event

__all__ = ["ChatItem", "ChatTimeline", "ItemStatus", "ToolCard"]

#: Local items that history does not know yet and must survive a merge.
_LIVE = frozenset({"sending", "waiting", "queued", "streaming", "failed", "interrupted"})
#: User messages that stay below a running reply until their run (or message) starts.
_FLOATING = frozenset({"sending", "waiting", "queued"})
_TERMINAL = frozenset({"run.completed", "run.cancelled", "run.failed", "run.timed_out"})


@dataclass
class _RunState:
    """Where the live stream of one run is."""

    index: int = 0  # the assistant message text now goes to
    highest: int = -1
    tools_since_text: bool = False  # for gateways that do not number their messages
    numbered: bool = False


class ChatTimeline:
    """The items of one session, in display order."""

    def __init__(self, session_key: str) -> None:
        self.session_key = session_key
        self.items: list[ChatItem] = []
        self._by_key: dict[str, ChatItem] = {}
        self.active_run: str | None = None
        self._runs: dict[str, _RunState] = {}
        #: Keys of user messages kept at the bottom (see the module docstring).
        self._floating: list[str] = []
        #: Steered message's run id -> the run that takes it in.
        self._steered: dict[str, str] = {}
        self._stop_requested: set[str] = set()
        #: Runs the last history page showed ended, until their live end arrives.
        self._closed: set[str] = set()
        #: A numbered run's final text (its messages joined), until the run ends.
        self._said: dict[str, str] = {}

    # ------------------------------------------------------------------ helpers
    def _insert(self, item: ChatItem, *, floating: bool = False) -> ChatItem:
        """Add ``item`` above the floating messages (or, floating, at the very end)."""
        existing = self._by_key.get(item.key)
        if existing is not None:
            return existing
        if floating or not self._floating:
            self.items.append(item)
        else:
            self.items.insert(self._first_floating(), item)
        self._by_key[item.key] = item
        if floating:
            self._floating.append(item.key)
        return item

    def _first_floating(self) -> int:
        keys = set(self._floating)
        return next((i for i, it in enumerate(self.items) if it.key in keys), len(self.items))

    def _settle(self, key: str) -> None:
        """A floating message takes its place: above the others still floating."""
        if key not in self._floating:
            return
        self._floating.remove(key)
        item = self._by_key[key]
        self.items.remove(item)
        self.items.insert(self._first_floating(), item)

    def get(self, key: str) -> ChatItem | None:
        """An item by its key."""
        return self._by_key.get(key)

    def of_run(self, run_id: str, role: str | None = None) -> list[ChatItem]:
        """The items of one run (its user message, replies, cards, error), in order."""
        return [i for i in self.items if i.run_id == run_id and (role is None or i.role == role)]

    def reply(self, run_id: str) -> ChatItem | None:
        """The run's latest assistant text (the answer once the run is over)."""
        replies = self.of_run(run_id, "assistant")
        return replies[-1] if replies else None

    def results_in_history(self, run_id: str) -> bool:
        """Whether a tool of the run returned a result whose images only ``chat.history``
        holds: neither gateway sends a tool result's image data live (the real one leaves
        ``{type: image, bytes, omitted: true}``, ours leaves the block out), so a run whose
        tool cards finished without a picture reads the history again when it ends."""
        return any(
            i.tool is not None and i.tool.status != "running" and not i.images
            for i in self.of_run(run_id, "tool")
        )

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
        item = ChatItem(
            f"{run_id}:user",
            "user",
            text,
            status,
            run_id,
            timestamp=now_ms,
            images=list(images or []),
            files=list(files or []),
        )
        item = self._insert(item, floating=item.key not in self._by_key)
        if self.active_run is None:
            self.active_run = run_id
        return item

    def steered(self, run_id: str) -> None:
        """A queued message was injected into the running turn: it takes its place when
        that run's next message starts."""
        item = self._by_key.get(f"{run_id}:user")
        if item is not None:
            item.status = "sent"
            if self.active_run and self.active_run != run_id:
                self._steered[run_id] = self.active_run

    def stop_requested(self, run_id: str | None = None) -> None:
        """The user pressed Stop (on ``run_id``, else on the running reply): its end is
        shown as stopped, where an end nobody here asked for is an interruption."""
        target = run_id or self.active_run
        if target:
            self._stop_requested.add(target)

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
            self._settle(item.key)
        self._insert(ChatItem(f"{run_id}:error", "error", reason, "failed", run_id))
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
        if not run_id:
            return None
        if kind == "assistant.delta" and run_id in self._closed:
            if not isinstance(event.data.get("messageIndex"), int):
                # The whole run's text (the real gateway's last coalesced chat delta, sent
                # after it stored the reply) for a run the history shows ended: the history
                # already has every message of it, and this text belongs to none of them.
                return None
            self._closed.discard(run_id)  # a numbered message: the run went on after all
        if kind in ("run.started", "assistant.delta", "tool.call.started"):
            self._started(run_id)
        if kind == "assistant.delta":
            return self._delta(run_id, event)
        if kind == "stream.reset":
            cumulative = event.data.get("cumulative")
            item = self.reply(run_id)
            if item is not None and isinstance(cumulative, str) and cumulative:
                item.text = cumulative
            return item
        if kind == "assistant.message":
            return self._message(run_id, event)
        if kind in _TERMINAL:
            return self._finish(run_id, kind, event)
        if kind.startswith("tool.call."):
            return self._tool(run_id, kind, event)
        if kind == "run.started":
            return self._by_key.get(f"{run_id}:user")
        return None

    def _started(self, run_id: str) -> None:
        user = self._by_key.get(f"{run_id}:user")
        if user is not None:
            if user.status in ("sending", "queued", "waiting"):
                user.status = "sent"
            self._settle(user.key)
            self._steered.pop(run_id, None)
        self.active_run = run_id

    def _state(self, run_id: str) -> _RunState:
        state = self._runs.get(run_id)
        if state is None:
            state = self._runs[run_id] = _RunState()
        return state

    def _text_item(self, run_id: str, index: int, ts: int) -> ChatItem:
        key = assistant_key(run_id, index)
        item = self._by_key.get(key)
        if item is not None:
            return item
        # A new message of the run: the earlier ones are complete, and messages steered
        # into this run were taken in before it.
        for earlier in self.of_run(run_id, "assistant"):
            if earlier.status == "streaming":
                earlier.status = "done"
        for steered, target in list(self._steered.items()):
            if target == run_id:
                del self._steered[steered]
                self._settle(f"{steered}:user")
        return self._insert(ChatItem(key, "assistant", "", "streaming", run_id, timestamp=ts))

    def _delta(self, run_id: str, event: Event) -> ChatItem:
        state = self._state(run_id)
        index = event.data.get("messageIndex")
        if isinstance(index, int):
            if not state.numbered and state.highest >= 0:
                # Joined text of ``chat`` deltas (their agent events were missed): the
                # numbered message supersedes it.
                stale = self._by_key.get(assistant_key(run_id, state.index))
                fresh = assistant_key(run_id, index)
                if stale is not None and stale.status == "streaming" and stale.key != fresh:
                    self.items.remove(stale)
                    del self._by_key[stale.key]
            state.numbered = True
        else:  # no numbers: text after a tool call starts the next message
            index = (
                state.index + 1 if state.tools_since_text and state.highest >= 0 else state.index
            )
        state.index, state.tools_since_text = index, False
        state.highest = max(state.highest, index)
        item = self._text_item(run_id, index, event.ts)
        item.status = "streaming"
        cumulative = event.data.get("cumulative")
        if isinstance(cumulative, str) and (cumulative or event.data.get("replace")):
            item.text = cumulative
        elif event.data.get("replace"):
            item.text = str(event.data.get("text") or "")
        else:
            item.text += str(event.data.get("text") or "")
        return item

    def _message(self, run_id: str, event: Event) -> ChatItem | None:
        """The run's final text. Where messages are numbered it adds nothing (the real
        gateway's is the whole reply, its messages joined); otherwise it completes the
        message that streamed, or is the reply of a run that streamed none."""
        text = str(event.data.get("text") or "")
        state = self._runs.get(run_id)
        if self.reply(run_id) is None:
            if not text:
                return None
            item = self._text_item(run_id, state.index if state else 0, event.ts)
        elif state is not None and not state.numbered and state.highest >= 0:
            item = self._text_item(run_id, state.index, event.ts)
        else:
            self._said[run_id] = text  # a stopped run's partial is used when it ends
            return None
        if text:
            item.text = text
        return item

    def _stopped_text(self, run_id: str, text: str) -> None:
        """A stopped reply's partial text, as the gateway kept it: it may hold more than
        was streamed (the real gateway stores text it had not sent yet). It completes the
        last message (the real gateway's has the earlier messages joined before it) and
        never rewrites what was shown."""
        replies = self.of_run(run_id, "assistant")
        if not replies:
            return
        last = replies[-1]
        joined = "\n\n".join(r.text for r in replies[:-1] if r.text)
        if joined and text.startswith(joined + "\n\n"):
            text = text[len(joined) + 2 :]
        if last.status == "streaming" and len(text) > len(last.text) and text.startswith(last.text):
            last.text = text

    def _finish(self, run_id: str, kind: str, event: Event) -> ChatItem | None:
        if run_id in self._steered and kind == "run.completed":
            # Both gateways end a steered message's own run when the running turn takes it
            # in: it takes its place now, above whatever that turn adds next (a tool call
            # without text too).
            del self._steered[run_id]
            self._settle(f"{run_id}:user")
            return self._by_key.get(f"{run_id}:user")
        if self.active_run == run_id:
            self.active_run = None
        self._runs.pop(run_id, None)
        self._closed.discard(run_id)
        said = self._said.pop(run_id, "")
        if kind == "run.cancelled" and said:
            self._stopped_text(run_id, said)
        for steered, target in list(self._steered.items()):
            if target == run_id:  # taken in after its last message: it stays where it is
                del self._steered[steered]
                self._settle(f"{steered}:user")
        requested = run_id in self._stop_requested
        self._stop_requested.discard(run_id)
        interrupted = event.data.get("errorKind") == "interrupted" or (
            kind == "run.cancelled" and not requested
        )
        status: ItemStatus = "done"
        if interrupted:
            status = "interrupted"
        elif kind == "run.cancelled":
            status = "aborted"
        elif kind in ("run.failed", "run.timed_out"):
            status = "failed"
        changed: ChatItem | None = None
        for item in self.of_run(run_id):
            if item.role == "assistant" and item.status == "streaming":
                item.status = status
                changed = item
        if interrupted or kind in ("run.failed", "run.timed_out"):
            reason = INTERRUPTED if interrupted else event.data.get("errorMessage")
            error = ChatItem(
                f"{run_id}:error", "error", str(reason or "the run failed"), "failed", run_id
            )
            error.timestamp = event.ts
            return self._insert(error)
        return changed

    def _tool(self, run_id: str, kind: str, event: Event) -> ChatItem:
        call_id = str(event.data.get("toolCallId") or "")
        key = f"{run_id}:tool:{call_id}"
        item = self._by_key.get(key)
        state = self._state(run_id)
        if item is None:
            for text in self.of_run(run_id, "assistant"):
                if text.status == "streaming":
                    text.status = "done"  # the message's text is complete once it calls
            card = ToolCard(call_id, str(event.data.get("name") or "tool"))
            item = self._insert(
                ChatItem(key, "tool", "", "streaming", run_id, tool=card, timestamp=event.ts)
            )
        state.tools_since_text = True
        assert item.tool is not None
        if kind == "tool.call.started":
            item.tool.arg_count = arg_count(event.data.get("args"))
            item.tool.summary = describe_call(item.tool.name, event.data.get("args"))
        elif kind == "tool.call.delta":
            item.tool.preview = preview(event.data.get("partial"))
        else:
            item.tool.status = "failed" if kind == "tool.call.failed" else "completed"
            item.tool.preview = preview(event.data.get("result"))
            result = event.data.get("result")
            item.images = tool_images(result.get("content") if isinstance(result, dict) else None)
            item.status = "done"
        return item

    # ------------------------------------------------------------------ history
    def merge_history(self, messages: list[dict[str, Any]]) -> None:
        """Reconcile with ``chat.history`` (after connecting or reconnecting): every history
        message appears once, in history order; what only the live stream knows stays,
        after its run's last item (or at the end): a message still streaming, a reply the
        gateway cut before storing it (marked interrupted once the history shows its run
        ended), a send not stored yet, an error of a send."""
        view = from_history(messages)
        merged: list[ChatItem] = []
        for item in view.items:
            live = self._by_key.get(item.key)
            if live is not None and live.role == "assistant" and not item.text:
                item.text = live.text
            merged.append(item)
        known = {i.key for i in merged}
        tail: list[ChatItem] = []
        going = {*self._runs, *self._steered, *(self._steered.values()), self.active_run}
        first = next((n for n, i in enumerate(self.items) if i.key in known), 0)
        for position, item in enumerate(self.items):
            if item.key in known:
                continue
            if position < first and item.key not in self._floating:
                continue  # above the page: older than anything the history shows
            if item.status not in _LIVE and not (item.role == "user" and item.run_id in going):
                continue  # history is the truth for what it no longer shows
            run = view.runs.get(item.run_id or "")
            if item.role == "assistant" and run is not None and run.ended is not None:
                if run.last_text:
                    continue  # the run's end is in the history, with its text
                # The history lost the reply the gateway cut: it stays, marked.
                item.status = "interrupted" if item.status == "streaming" else item.status
            if item.role == "user" and item.key not in self._floating:
                tail.append(item)
                continue
            after = max(
                (n for n, m in enumerate(merged) if item.run_id and m.run_id == item.run_id),
                default=None,
            )
            if after is None or item.key in self._floating:
                tail.append(item)
            else:
                merged.insert(after + 1, item)
        merged += tail
        self.items = merged
        self._by_key = {i.key: i for i in merged}
        self._floating = [k for k in self._floating if k in self._by_key and k not in known]
        self._steered = {s: t for s, t in self._steered.items() if f"{s}:user" not in known}
        waiting = set(self._steered.values())  # a run with a steer to take in goes on
        self._closed = set()  # (only this page's: bounded)
        for run_id, run in view.runs.items():
            state = self._runs.get(run_id)
            if run.ended is not None and run_id not in waiting:
                self._closed.add(run_id)
                self._said.pop(run_id, None)
                self._runs.pop(run_id, None)
                if self.active_run == run_id:
                    self.active_run = None
            elif state is not None:
                state.highest = max(state.highest, run.messages - 1)
