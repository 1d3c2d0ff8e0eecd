"""The wire-name enums of :mod:`openclaw_desktop.protocol.enums`: every :class:`Method` and
:class:`EventName` member is named by one rule from its wire name, :class:`Method` is kept
in wire-name order, :class:`EventName` names exactly the event table
(:mod:`openclaw_desktop.protocol.events`) in its order, and :class:`OperatorScope` holds the
real gateway's ten operator scopes."""

from __future__ import annotations

import re
from enum import StrEnum

import pytest

from openclaw_desktop.protocol import EventName, Method, OperatorScope
from openclaw_desktop.protocol.events import EVENTS, UNADVERTISED_EVENTS, event_names

_CAMEL_HUMP = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


def member_name(wire: str) -> str:
    """The enum member name of a wire name: camelCase split, dots and dashes made ``_``,
    upper case (``node.pluginTools.update`` -> ``NODE_PLUGIN_TOOLS_UPDATE``)."""
    return re.sub(r"[.\-]", "_", _CAMEL_HUMP.sub("_", wire)).upper()


@pytest.mark.parametrize(
    ("wire", "name"),
    [
        ("node.pluginTools.update", "NODE_PLUGIN_TOOLS_UPDATE"),
        ("system-presence", "SYSTEM_PRESENCE"),
        ("controlUi.sessionPullRequests.subscribe", "CONTROL_UI_SESSION_PULL_REQUESTS_SUBSCRIBE"),
        ("chat.send_timing", "CHAT_SEND_TIMING"),
        ("node.hostStats", "NODE_HOST_STATS"),
        ("health", "HEALTH"),
    ],
)
def test_the_naming_rule(wire: str, name: str) -> None:
    """The rule on the shapes of wire names there are: camelCase, dashes, underscores."""
    assert member_name(wire) == name


@pytest.mark.parametrize("enum", [Method, EventName])
def test_every_member_is_named_by_the_rule(enum: type[StrEnum]) -> None:
    """No member is named by hand: each one's name is its wire name under the rule."""
    wrong = {m.name: m.value for m in enum if m.name != member_name(m.value)}
    assert wrong == {}


def test_methods_are_in_wire_name_order() -> None:
    """Sorted by wire name, so a new method has one place to go."""
    values = [m.value for m in Method]
    assert values == sorted(values)


def test_event_names_are_the_event_table() -> None:
    """EventName names exactly the events the gateway sends, in the advertised order then
    the unadvertised ones, and the table is keyed by its members."""
    assert [m.value for m in EventName] == [*EVENTS, *UNADVERTISED_EVENTS]
    assert all(isinstance(key, EventName) for key in [*EVENTS, *UNADVERTISED_EVENTS])


def test_advertised_event_names_are_plain_strings() -> None:
    """``hello-ok.features.events`` holds the wire strings themselves."""
    names = event_names()
    assert names == [m.value for m in EventName if m.value in EVENTS]
    assert all(type(name) is str for name in names)


def test_operator_scopes_are_the_real_gateways_ten() -> None:
    """The scope list of the real gateway's connect schema, sessions scopes included."""
    assert {m.value for m in OperatorScope} == {
        "operator.admin",
        "operator.approvals",
        "operator.pairing",
        "operator.questions",
        "operator.read",
        "operator.sessions.read",
        "operator.sessions.write",
        "operator.talk",
        "operator.talk.secrets",
        "operator.write",
    }
