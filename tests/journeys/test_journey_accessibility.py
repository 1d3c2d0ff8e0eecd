"""Journey: what a screen reader finds, over Qt's real AT-SPI bridge. The real window on its
own X session, in these states: a chat with a tool card and an error row, each menu of the
menu bar open (and View > Theme), the Settings dialog, the connect screen, the error card of
a wrong token. In each the whole showing accessible tree of the app is walked: every control
a person operates has a name and a sensible role (a combo box, which Qt names by its value,
a description saying what it chooses; an open menu the name of its title), every chat row
its text and a description, no label borrows its group's title without painting it, and no
two buttons side by side share a name. A failure lists the offenders by role and path (the
chain of ``role 'name'`` from the application down)."""

from __future__ import annotations

import asyncio
import contextlib
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from dbus_fast.errors import DBusError

from tests.helpers.atspi import MAX_NODES, SHOWING, AtspiError, Node
from tests.helpers.bundled_gateway import BundledGateway
from tests.helpers.fake_llm import FakeLLM
from tests.helpers.journey_app import Journey, idle
from tests.journeys.conftest import OpenJourney
from tests.journeys.test_journey_menus import pick

pytestmark = pytest.mark.timeout(180)

TOOL_PROMPT = "PREAMBLE CALLTOOL:nodes_list:{}"
FAIL_PROMPT = "FAIL:500 please"
CARD_BUTTONS = ("Edit token", "Retry", "Choose another gateway", "Show details")
#: AT-SPI roles of the controls a person operates (Qt's names for them on the bridge).
ACTIONABLE = frozenset(
    {
        "push button",
        "toggle button",
        "check box",
        "radio button",
        "combo box",
        "text",
        "entry",
        "password text",
        "spin button",
        "list item",
        "menu item",
        "check menu item",
        "radio menu item",
        "page tab",
        "slider",
    }
)
#: Roles that say nothing about what a node is: never right for something showing.
MEANINGLESS = frozenset({"invalid", "unknown", "redundant object"})
#: What else may take the keyboard focus: containers a person moves through, and labels
#: whose text can be selected.
OTHER_FOCUSABLE = frozenset(
    {"list", "table", "tree", "tree table", "popup menu", "menu bar", "page tab list", "label"}
)
#: AT-SPI state bit: the node takes the keyboard focus.
FOCUSABLE = 11


@dataclass(frozen=True)
class Item:
    """One showing node with where it is."""

    node: Node
    role: str
    name: str
    description: str
    path: str
    parent: str
    focusable: bool


async def showing_tree(j: Journey) -> list[Item]:
    """Every showing node of the app (depth first, children in order), with its path. Nodes
    not showing (a hidden page, a closed menu) are skipped with everything under them: a
    person cannot reach them, and the bridge leaves them unnamed until they show."""
    root = await j.root()
    out: list[Item] = []
    stack: list[tuple[Node, str]] = [(root, "")]
    while stack:
        assert len(out) < MAX_NODES, "a runaway accessible tree"
        node, parent = stack.pop()
        try:
            role = await j.atspi.role(node)
            name = await j.atspi.name(node)
            description = await j.atspi.description(node)
            states = await j.atspi.states(node)
            kids = await j.atspi.children(node)
        except (AtspiError, DBusError, TimeoutError):
            continue  # gone while walking (a row replaced)
        if node != root and SHOWING not in states:
            continue
        path = f"{parent} > {role} {name!r}" if parent else f"{role} {name!r}"
        out.append(Item(node, role, name, description, path, parent, FOCUSABLE in states))
        stack.extend((kid, path) for kid in reversed(kids))
    return out


def offenders(items: list[Item]) -> list[str]:
    """What a screen reader could not use: actionable controls without a name, showing
    nodes with a meaningless role (or a focusable one that is not a control or a
    container), chat rows without their text, sibling buttons with the same name."""
    bad: list[str] = []
    for item in items:
        if item.role in ACTIONABLE and not item.name.strip():
            bad.append(f"unnamed {item.role}: {item.path}")
        if item.role in MEANINGLESS:
            bad.append(f"no sensible role ({item.role}): {item.path}")
        elif item.focusable and item.role not in ACTIONABLE | OTHER_FOCUSABLE:
            bad.append(f"focusable, but its role ({item.role}) is no control's: {item.path}")
        if item.role == "combo box" and not item.description.strip():
            # On Linux Qt names a combo box by its current value, whatever its accessible
            # name: only the description can say what it chooses.
            bad.append(f"a combo box that does not say what it chooses: {item.path}")
        title = item.parent.rpartition(" > menu item ")[2]
        if item.role == "popup menu" and title != repr(item.name):
            bad.append(f"a menu not named by its title {title}: {item.path}")
    by_parent: dict[str, list[Item]] = {}
    for item in items:
        if item.role in ("push button", "toggle button"):
            by_parent.setdefault(item.parent, []).append(item)
    for siblings in by_parent.values():
        names = [s.name for s in siblings]
        for dup in sorted({n for n in names if names.count(n) > 1}):
            bad.append(f"{names.count(dup)} sibling buttons named {dup!r}: {siblings[0].parent}")
    return bad


async def borrowed_names(j: Journey, state: str, items: list[Item]) -> list[str]:
    """Labels named like the group they are in: Qt's bridge names an empty label after its
    group box, so a screen reader reads the group's title twice. Such a label must paint
    its own text (read off the screen), or it is an offender."""
    bad = []
    for item in items:
        if item.role != "label" or not item.parent.endswith(f"panel {item.name!r}"):
            continue
        box = await j.atspi.extents(item.node)
        painted = ""
        if box.width > 1 and box.height > 1:
            painted = await j.desktop.read(f"{state}-label", box.x, box.y, box.width, box.height)
        if not set(re.findall(r"\w{3,}", item.name.lower())) & set(
            re.findall(r"\w{3,}", painted.lower())
        ):
            bad.append(f"a label without text of its own, named after its group: {item.path}")
    return bad


async def chat_rows(j: Journey) -> list[tuple[str, str]]:
    """(description, name) of every row of the chat, scrolled into view or not."""
    listing = await j.control("list", "Messages")
    out = []
    for row in await j.atspi.children(listing):
        with contextlib.suppress(AtspiError, DBusError):
            role = await j.atspi.role(row)
            out.append((role, await j.atspi.description(row), await j.atspi.name(row)))
    return [(d, n) for r, d, n in out if r == "list item"]


async def audit(j: Journey, state: str, *expected: tuple[str, str]) -> list[Item]:
    """Walk the tree in ``state``, take a screenshot, and fail listing the offenders; the
    ``expected`` (role, name) controls must be among what was walked."""
    items = await showing_tree(j)
    await j.desktop.screenshot(state)
    roles = sorted({i.role for i in items})
    print(f"{state}: {len(items)} showing nodes; roles: {roles}")
    for item in items:
        if item.role in ACTIONABLE or item.focusable:
            print(f"  {item.role} {item.name!r} ({item.description!r})")
    found = offenders(items) + await borrowed_names(j, state, items)
    if any(i.role == "list" and i.name == "Messages" for i in items):
        found += [
            f"a chat row without its text or description: {d!r} {n!r}"
            for d, n in await chat_rows(j)
            if not n.strip() or not d.strip()
        ]
    assert not found, f"{state}: what a screen reader cannot use:\n" + "\n".join(found)
    walked = {(i.role, i.name) for i in items}
    missing = [control for control in expected if control not in walked]
    assert not missing, f"{state}: not found in the walk: {missing}"
    return items


async def until_gone(j: Journey, role: str, name: str | None = None) -> None:
    """Wait (bounded) until nothing showing has this role (and name)."""
    deadline = time.monotonic() + 10
    while any(i.role == role and name in (None, i.name) for i in await showing_tree(j)):
        assert time.monotonic() < deadline, f"the {role} {name!r} stayed on the screen"
        await asyncio.sleep(0.1)


async def audit_menus(j: Journey, *paths: tuple[str, ...]) -> None:
    """Open each menu (a path from the menu bar: ``("View", "Theme")``) with the mouse,
    audit it, close it with Escape."""
    for path in paths:
        await pick(j, *path)
        title = path[-1]
        items = await audit(j, f"the-{title.lower()}-menu")
        assert any(i.parent.endswith(f"popup menu {title!r}") for i in items), [
            i.path for i in items if "menu" in i.role
        ]
        await j.desktop.key(*["Escape"] * len(path))
        await until_gone(j, "popup menu")


def test_the_audit_names_each_kind_of_offender() -> None:
    """What the walk reports (so an unnamed control cannot pass unseen)."""

    def item(role: str, name: str, parent: str = "frame 'OpenClaw'", focus: bool = True) -> Item:
        path = f"{parent} > {role} {name!r}"
        return Item(Node(":1.1", "/x"), role, name, "", path, parent, focus)

    fine = [item("push button", "Send"), item("push button", "Stop"), item("list", "Messages")]
    assert offenders(fine) == []
    found = offenders(
        [
            *fine,
            item("push button", " "),
            item("check box", ""),
            item("unknown", "x", focus=False),
            item("filler", "focus trap"),
            item("push button", "Connect", "panel 'a'"),
            item("push button", "Connect", "panel 'a'"),
            item("push button", "Connect", "panel 'b'"),
            item("combo box", "off"),
            item("popup menu", "File", "menu bar 'Menu bar' > menu item 'File'", focus=False),
            item("popup menu", "OpenClaw Desktop", "menu bar 'Menu bar' > menu item 'View'"),
        ]
    )
    assert found == [
        "unnamed push button: frame 'OpenClaw' > push button ' '",
        "unnamed check box: frame 'OpenClaw' > check box ''",
        "no sensible role (unknown): frame 'OpenClaw' > unknown 'x'",
        "focusable, but its role (filler) is no control's: frame 'OpenClaw' > filler 'focus trap'",
        "a combo box that does not say what it chooses: frame 'OpenClaw' > combo box 'off'",
        "a menu not named by its title 'View': menu bar 'Menu bar' > menu item 'View' > popup"
        " menu 'OpenClaw Desktop'",
        "2 sibling buttons named 'Connect': panel 'a'",
    ], found


@pytest.fixture
def other_gateway(model: FakeLLM) -> Iterator[BundledGateway]:
    """Another computer's gateway (ours, its own process and token)."""
    env = {"OPENAI_BASE_URL": model.openai_base_url, "OPENAI_MODEL": "fake-model"}
    gateway = BundledGateway.start(env=env)
    try:
        yield gateway
    finally:
        gateway.stop()
        gateway.cleanup()


async def test_every_control_and_message_is_named_over_atspi(
    open_journey: OpenJourney, model: FakeLLM, other_gateway: BundledGateway
) -> None:
    async with open_journey(model=model) as j:
        # The chat: the user's messages, a reply with a tool card, a model error row.
        await j.send(TOOL_PROMPT)
        await j.wait_messages(
            lambda rows: any(r.startswith("FAKE-LLM tool result") for r in rows), "the tool", 60
        )
        await idle(j, 60)
        await j.send(FAIL_PROMPT)
        await j.wait_messages(lambda rows: len(rows) >= 6, "the error row", 60)
        await idle(j, 60)
        await audit(j, "the-chat", ("text", "Message"), ("push button", "Send"))
        await audit_menus(j, ("File",), ("View",), ("View", "Theme"), ("Help",))
        rows = await chat_rows(j)
        print("chat rows:", rows)
        assert ("Your message, sent", TOOL_PROMPT) in rows, rows
        assert ("Your message, sent", FAIL_PROMPT) in rows, rows
        assert any("nodes_list" in name and name != TOOL_PROMPT for _d, name in rows), rows
        assert any(d.startswith("Error") and "HTTP 500" in n for d, n in rows), rows

        # Settings.
        await pick(j, "File", "Settings…")
        await j.control("dialog", "Settings", timeout=20)
        await audit(j, "settings", ("push button", "Save"), ("push button", "Cancel"))
        await j.desktop.key("Escape")
        await until_gone(j, "dialog", "Settings")

        # The connect screen.
        await pick(j, "File", "Connect to another gateway…")
        token = await j.control("text", "Gateway token or password", timeout=20)
        await audit(j, "the-connect-screen", ("text", "Gateway URL"))

        # The error card: the other gateway refuses a wrong token.
        await j.click(token)
        await j.desktop.type("not-the-token")
        url = await j.control("text", "Gateway URL")
        await j.click(url)
        await j.desktop.type(other_gateway.url)
        await j.desktop.key("Return")
        await j.control("push button", "Edit token", timeout=60)
        await audit(j, "the-error-card", *(("push button", name) for name in CARD_BUTTONS))
        assert "not-the-token" not in j.app.output()
