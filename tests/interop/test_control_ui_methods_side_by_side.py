"""The Control UI methods (gateway.methods.control_ui) side by side with the real gateway.

The same calls (good and bad params) go to the real gateway 2026.9.6 and to ours, each with
its own fake model; for a refused call the error code and message must be the same, for an
answered one the result must have the same keys (values differ: hosts, ids, times), and
where both answer an empty catalogue, the same empty value. Known, intended differences
(features the real gateway has and ours does not) are listed in :data:`DIFFERENT` with the
reason, and checked to still differ, so that a closed gap is noticed.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from openclaw_desktop.errors import GatewayError
from tests.helpers.chat_trace import bundled_with_fake_llm, chat_operator
from tests.helpers.fake_llm import FakeLLM
from tests.helpers.real_openclaw import GatewayFactory, OpenClawInstall

pytestmark = pytest.mark.timeout(300)

UNUSED = "never-used-ui-key"
#: (method, params) in call order. No call creates a session (``chat.startup`` runs last:
#: ours creates the session row a page is read from, the real one does not).
CALLS: list[tuple[str, dict[str, Any]]] = [
    ("agent.identity.get", {"bogus": 1}),
    ("agent.identity.get", {"agentId": ""}),
    ("agent.identity.get", {"agentId": "other"}),
    ("agent.identity.get", {}),
    ("agent.identity.get", {"sessionKey": "main"}),
    ("board.get", {}),
    ("board.get", {"sessionKey": ""}),
    ("board.get", {"sessionKey": "main"}),
    ("board.get", {"sessionKey": "main", "agentId": "nope"}),
    ("chat.metadata", {"sessionKey": "main", "authProfileId": "x"}),
    ("chat.metadata", {"bogus": 1}),
    ("chat.metadata", {}),
    ("chat.metadata", {"agentId": "main", "sessionKey": "agent:main:main"}),
    ("chat.startup", {}),
    ("chat.startup", {"sessionKey": "main", "bogus": 1}),
    ("chat.startup", {"shortId": "x", "agentId": "main"}),
    ("chat.startup", {"sessionKey": "main", "limit": 0}),
    ("controlUi.sessionPullRequests.subscribe", {}),
    ("controlUi.sessionPullRequests.subscribe", {"sessionKeys": "x"}),
    ("controlUi.sessionPullRequests.subscribe", {"sessionKeys": ["a"], "bogus": 1}),
    ("controlUi.sessionPullRequests.subscribe", {"sessionKeys": []}),
    # Read by hand: null is not an absent list, keys trimmed as JavaScript trims (U+FEFF is
    # blank, U+001F is not), repeats dropped, each refresh key one of the keys.
    ("controlUi.sessionPullRequests.subscribe", {"sessionKeys": [], "refreshSessionKeys": None}),
    (
        "controlUi.sessionPullRequests.subscribe",
        {"sessionKeys": [" a ", "a"], "refreshSessionKeys": ["a"]},
    ),
    (
        "controlUi.sessionPullRequests.subscribe",
        {"sessionKeys": ["a"], "refreshSessionKeys": ["b"]},
    ),
    ("controlUi.sessionPullRequests.subscribe", {"sessionKeys": [" \ufeff"]}),
    ("controlUi.sessionPullRequests.subscribe", {"sessionKeys": ["\x1f"]}),
    ("controlUi.sessionPullRequests.subscribe", {"sessionKeys": ["x" * 513]}),
    ("mentions.list", {"x": 1}),
    ("mentions.list", {}),
    ("plugin.surface.refresh", {}),
    ("plugin.surface.refresh", {"surface": "canvas"}),
    ("plugin.surface.refresh", {"surface": "nope"}),
    ("plugin.surface.refresh", {"surface": " \ufeff"}),
    ("plugin.surface.refresh", {"surface": 5}),
    ("plugin.surface.refresh", {"surface": " nope2 ", "observedUrl": 5}),
    ("plugins.controlUi.list", {"x": 1}),
    ("plugins.controlUi.list", {}),
    ("progressCard.get", {}),
    ("progressCard.get", {"sessionKey": "main"}),
    ("projects.list", {"includeObserved": "x"}),
    ("question.list", {"x": 1}),
    ("question.list", {}),
    ("session.discussion.info", {}),
    ("session.discussion.info", {"sessionKey": "main"}),
    ("session.members.listEvidence", {}),
    ("session.members.listEvidence", {"sessionKey": UNUSED}),
    ("sessions.branches.list", {}),
    ("sessions.branches.list", {"sessionKey": "main"}),
    ("sessions.catalog.list", {"x": 1}),
    ("sessions.catalog.list", {"limitPerHost": 0}),
    ("sessions.companion.state", {}),
    ("sessions.companion.state", {"sessionKey": "main"}),
    ("sessions.github.options", {}),
    ("sessions.github.options", {"sessionKey": UNUSED}),
    ("sessions.groups.defaults", {"x": 1}),
    ("sessions.groups.defaults", {}),
    ("sessions.groups.list", {"x": 1}),
    ("sessions.groups.list", {}),
    ("sessions.observer.visibility", {}),
    ("sessions.observer.visibility", {"visible": "x"}),
    ("sessions.observer.visibility", {"visible": False}),
    ("sessions.viewers.set", {}),
    ("sessions.viewers.set", {"sessionKeys": [" "]}),
    ("sessions.viewers.set", {"sessionKeys": ["main", "agent:main:other"]}),
    ("sessions.viewers.set", {"sessionKeys": []}),
    ("system.info", {"x": 1}),
    ("system.info", {}),
    ("taskSuggestions.list", {"x": 1}),
    ("taskSuggestions.list", {}),
    ("tasks.list", {"status": "bogus"}),
    ("tasks.list", {"limit": 0}),
    ("tasks.list", {"sortBy": "x"}),
    ("tasks.list", {"status": ["queued", "running"], "limit": 200}),
    ("update.status", {"x": 1}),
    ("users.prefs.get", {"keys": "x"}),
    ("users.prefs.get", {"keys": [""]}),
    ("users.prefs.get", {"keys": ["a", "a"]}),
    ("chat.history", {"sessionKey": "main", "maxBytes": 10}),
    ("chat.startup", {"sessionKey": "main", "limit": 80, "maxBytes": 262144}),
]
#: Calls whose answers differ on purpose, with why.
DIFFERENT = {
    # The real gateway hosts a canvas for its web app; ours hosts no plugin surface.
    ("plugin.surface.refresh", '{"surface": "canvas"}'): "no canvas host",
    # The real gateway keeps a mention inbox per verified user profile (its web app's owner
    # device has one, this client none: refused); ours has no profiles, and answers every
    # operator its empty inbox (as the real one answers its web app).
    ("mentions.list", "{}"): "no user profiles",
}
#: Results compared by value (both sides have nothing to list), not only by keys.
EMPTY_BY_VALUE = frozenset(
    {
        "board.get",
        "progressCard.get",
        "session.discussion.info",
        "sessions.branches.list",
        "sessions.companion.state",
        "sessions.groups.defaults",
        "sessions.groups.list",
        "sessions.observer.visibility",
        "sessions.viewers.set",
        "taskSuggestions.list",
        "tasks.list",
        "question.list",
        "controlUi.sessionPullRequests.subscribe",
    }
)

Answer = tuple[str, Any]


async def run_calls(url: str, token: str) -> dict[tuple[str, str], Answer]:
    """Every call of CALLS on one gateway: ("ok", result) or ("error", (code, message))."""
    out: dict[tuple[str, str], Answer] = {}
    async with chat_operator(url, token) as conn:
        for method, params in CALLS:
            key = (method, json.dumps(params))
            try:
                out[key] = ("ok", await conn.request(method, params, timeout_s=30))
            except GatewayError as exc:
                out[key] = ("error", (exc.code, exc.message))
    return out


async def _both(install: OpenClawInstall, root: Path) -> tuple[dict[Any, Answer], ...]:
    factory = GatewayFactory(install)
    with FakeLLM() as real_llm, FakeLLM() as our_llm:
        try:

            async def real_side() -> dict[tuple[str, str], Answer]:
                gw = await asyncio.to_thread(factory, fake_llm_port=real_llm.port)
                return await run_calls(gw.url, gw.token)

            async def our_side() -> dict[tuple[str, str], Answer]:
                async with bundled_with_fake_llm(our_llm.port, root) as gw:
                    return await run_calls(gw.url, gw.token)

            real, ours = await asyncio.gather(real_side(), our_side())
        finally:
            await asyncio.to_thread(factory.close)
    return real, ours


@pytest.fixture(scope="module")
def answers(
    openclaw_install: OpenClawInstall, tmp_path_factory: pytest.TempPathFactory
) -> tuple[dict[Any, Answer], ...]:
    """(real, ours): every call's answer on each gateway."""
    root = tmp_path_factory.mktemp("control-ui-methods")

    async def both() -> tuple[dict[Any, Answer], ...]:
        async with asyncio.timeout(280):
            return await _both(openclaw_install, root)

    return asyncio.run(both())


def _comparable(key: tuple[str, str]) -> bool:
    return key not in DIFFERENT


@pytest.mark.parametrize(
    "call", [(m, json.dumps(p)) for m, p in CALLS if _comparable((m, json.dumps(p)))], ids=str
)
def test_same_answer(call: tuple[str, str], answers: tuple[dict[Any, Answer], ...]) -> None:
    """Refused alike (same code and message), or answered alike (same result keys; the
    same value for an empty catalogue)."""
    real, ours = answers[0][call], answers[1][call]
    assert ours[0] == real[0], (ours, real)
    if real[0] == "error":
        assert ours[1] == real[1]
        return
    assert isinstance(ours[1], dict) and isinstance(real[1], dict)
    if call[0] in EMPTY_BY_VALUE:
        assert ours[1] == real[1]
    elif call[0] == "system.info":
        # Node.js-only facts (its event loop and V8 heap) are not reported by ours.
        assert set(ours[1]) <= set(real[1])
        assert set(real[1]) - set(ours[1]) <= {"eventLoop", "processMemory", "lanAddress"}
    else:
        assert set(ours[1]) <= set(real[1]), set(ours[1]) - set(real[1])


@pytest.mark.parametrize("call", sorted(DIFFERENT), ids=str)
def test_known_differences_still_differ(
    call: tuple[str, str], answers: tuple[dict[Any, Answer], ...]
) -> None:
    """Each listed difference is still there (remove it from DIFFERENT once closed)."""
    real, ours = answers[0][call], answers[1][call]
    assert real != ours, DIFFERENT[call]
