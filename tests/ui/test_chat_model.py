"""The chat list model shows the newest rows of a long session and more on demand, and
announces only the rows that changed (a streaming reply repaints one row, not all)."""

from __future__ import annotations

from typing import Any

import pytest
from PySide6.QtCore import QModelIndex
from PySide6.QtWidgets import QApplication, QListView

from openclaw_desktop.chat import ChatItem, ChatTimeline
from openclaw_desktop.sdk.normalize import Normalizer
from tests.helpers.transcripts import CallPlan, MessagePlan, RunPlan, session_steps, transcript
from ui.widgets.chat_delegate import ChatDelegate
from ui.widgets.chat_model import ITEM_ROLE, WINDOW, ChatListModel


def timeline(n: int) -> ChatTimeline:
    """A session with ``n`` finished messages."""
    chat = ChatTimeline("main")
    chat.items = [ChatItem(f"m{i}", "assistant", f"message {i}") for i in range(n)]
    return chat


def test_a_long_session_shows_its_newest_rows_first() -> None:
    """5,000 messages: the last WINDOW rows; earlier ones come in pages, oldest last."""
    chat = timeline(5000)
    model = ChatListModel(chat)
    assert model.refresh() is True
    assert model.rowCount() == WINDOW and model.hidden_before == 5000 - WINDOW
    assert model.index(0).data(ITEM_ROLE).key == f"m{5000 - WINDOW}"
    assert model.show_earlier(200) == 200
    assert model.rowCount() == WINDOW + 200
    assert model.index(0).data(ITEM_ROLE).key == f"m{5000 - WINDOW - 200}"
    while model.show_earlier():
        pass
    assert model.rowCount() == 5000 and model.hidden_before == 0


def test_only_changed_rows_are_announced(qapp: QApplication) -> None:
    """A delta changes one row: one dataChanged for that row; a new message inserts one."""
    chat = timeline(50)
    model = ChatListModel(chat)
    model.refresh()
    changes: list[tuple[int, int]] = []
    inserts: list[tuple[int, int]] = []
    model.dataChanged.connect(lambda a, b, *_: changes.append((a.row(), b.row())))
    model.rowsInserted.connect(lambda _p, a, b: inserts.append((a, b)))
    assert model.refresh() is False, "nothing changed"
    chat.items[-1].text += " and more"
    assert model.refresh() is True
    assert changes == [(49, 49)] and inserts == []
    chat.items.append(ChatItem("m50", "user", "hi"))
    assert model.refresh() is True
    assert inserts == [(50, 50)] and len(changes) == 1


def test_a_shrunk_timeline_resets(qapp: QApplication) -> None:
    """Fewer items than shown (a session reset): the model starts over from the end."""
    chat = timeline(400)
    model = ChatListModel(chat)
    model.refresh()
    resets: list[bool] = []
    model.modelReset.connect(lambda: resets.append(True))
    chat.items = chat.items[:10]
    assert model.refresh() is True and resets == [True]
    assert model.rowCount() == 10 and model.hidden_before == 0
    assert model.item(10) is None and model.data(QModelIndex()) is None


def test_the_view_lays_out_only_the_window(qapp: QApplication) -> None:
    """A view of a 5,000-message session asks the delegate about WINDOW rows, not 5,000."""
    chat = timeline(5000)
    model = ChatListModel(chat)
    model.refresh()
    asked: set[str] = set()

    class Counting(ChatDelegate):
        def sizeHint(self, option, index):  # type: ignore[no-untyped-def]  # noqa: N802
            asked.add(index.data(ITEM_ROLE).key)
            return super().sizeHint(option, index)

    view = QListView()
    view.setModel(model)
    view.setItemDelegate(Counting(view))
    view.resize(600, 400)
    view.show()
    view.doItemsLayout()
    QApplication.processEvents()
    assert 0 < len(asked) <= WINDOW
    view.close()


def test_a_history_merged_into_a_shown_session_is_windowed_too(qapp: QApplication) -> None:
    """Rows already shown, then 5,000 more arrive at once: only the newest WINDOW remain."""
    chat = timeline(3)
    model = ChatListModel(chat)
    model.refresh()
    chat.items = timeline(5000).items
    assert model.refresh() is True
    assert model.rowCount() == WINDOW and model.hidden_before == 5000 - WINDOW


# ---------------------------------------------------------------- one row per message
def rows(model: ChatListModel) -> list[str]:
    """What the rows of the view show, top to bottom (a tool card as ``[card: <name>]``:
    its wording is the card's own business)."""
    model.refresh()
    out = []
    for r in range(model.rowCount()):
        item = model.index(r).data(ITEM_ROLE)
        text = str(model.index(r).data())
        out.append(f"[card: {item.tool.name}]" if item.tool is not None else text)
    return out


def lived(flavor: str, plans: list[Any]) -> tuple[ChatTimeline, list[dict[str, Any]]]:
    """A timeline fed with the runs' live events (the window's path: normalizer, reducer),
    and the history they left."""
    chat = ChatTimeline("agent:main:main")
    normalizer = Normalizer()
    steps = session_steps(plans, flavor)  # type: ignore[arg-type]
    for step in steps:
        if step[0] == "send":
            chat.send(step[1], step[2])
        elif step[0] == "steer":
            chat.send(step[1], step[2])
            chat.steered(step[1])
        elif step[0] == "stop":
            chat.stop_requested(step[1])
        elif step[0] == "frame":
            for event in normalizer.feed(step[1], step[2], 0):
                chat.apply(event)
    return chat, transcript(steps)


NODES = CallPlan("call_1", "nodes_list", {}, '{"nodes": []}')
TEXT_TOOL_FINAL = RunPlan(
    "r1",
    "TEXTTOOL check the nodes",
    (
        MessagePlan(("Let me check ", "the nodes first."), (NODES,)),
        MessagePlan(("The end.",)),
    ),
)


@pytest.mark.parametrize("flavor", ["real", "bundled"])
def test_text_before_a_tool_then_the_answer_live_and_after_a_restart(
    qapp: QApplication, flavor: str
) -> None:
    """The rows of issue 15's screenshot, in order, while streaming and after a restart."""
    chat, history = lived(flavor, [TEXT_TOOL_FINAL])
    expected = [
        "TEXTTOOL check the nodes",
        "Let me check the nodes first.",
        "[card: nodes_list]",
        "The end.",
    ]
    assert rows(ChatListModel(chat)) == expected
    restarted = ChatTimeline("agent:main:main")
    restarted.merge_history(history)
    assert rows(ChatListModel(restarted)) == expected


def test_rows_follow_the_stream_as_it_arrives(qapp: QApplication) -> None:
    """Row by row: the first text, its card below it, the answer below the card; a message
    steered in meanwhile stays last until the next message starts, then sits above it."""
    chat = ChatTimeline("agent:main:main")
    model = ChatListModel(chat)
    normalizer = Normalizer()
    plan = RunPlan(
        "r1",
        "look around",
        (MessagePlan(("Looking.",), (NODES,)), MessagePlan(("Found nothing.",))),
        steers={1: (("s1", "and the weather?"),)},
    )
    seen: list[list[str]] = []
    for step in session_steps([plan], "real"):
        if step[0] == "send":
            chat.send(step[1], step[2])
        elif step[0] == "steer":
            chat.send(step[1], step[2])
            chat.steered(step[1])
        elif step[0] == "frame":
            for event in normalizer.feed(step[1], step[2], 0):
                chat.apply(event)
        shown = rows(model)
        if not seen or seen[-1] != shown:
            seen.append(shown)
    card = "[card: nodes_list]"
    assert [
        "look around",
        "Looking.",
        card,
        "and the weather?",
    ] in seen
    assert seen[-1] == ["look around", "Looking.", card, "and the weather?", "Found nothing."]


def test_stopped_and_interrupted_replies_say_which(qapp: QApplication) -> None:
    """Stop pressed: "(stopped)". The gateway killed mid-reply: the partial text stays,
    "(interrupted)", and a row says why."""
    stopped = RunPlan("r1", "a poem", (MessagePlan(("Roses are",)),), "aborted")
    cut = RunPlan("r2", "a story", (MessagePlan(("Once upon",)),), "interrupted", checkpoint=4)
    chat, history = lived("bundled", [stopped, cut])
    chat.merge_history(history)  # back online: the restarted gateway's record of the cut
    assert rows(ChatListModel(chat)) == [
        "a poem",
        "Roses are (stopped)",
        "a story",
        "Once (interrupted)",
        "interrupted: the gateway stopped",
    ]


def test_a_reply_reads_the_same_live_and_from_a_history_that_kept_its_trailing_space(
    qapp: QApplication,
) -> None:
    """The real gateway streams a reply trimmed and stores it as the model wrote it
    (``"... slow19 "``): the row is the same text either way."""
    live = ChatTimeline("main")
    live.items = [ChatItem("r1:assistant", "assistant", "slow0 slow19", "done", "r1")]
    stored = ChatTimeline("main")
    stored.items = [ChatItem("r1:assistant", "assistant", "slow0 slow19 \n", "done", "r1")]
    assert rows(ChatListModel(live)) == rows(ChatListModel(stored)) == ["slow0 slow19"]
