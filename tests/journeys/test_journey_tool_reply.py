"""Journey: a reply with text before a tool call and a final answer after it. While it
streams and once it is done, the window shows the user's message, the first text, the tool's
card and the final answer, each once and in that order; after quitting and launching the app
again, the history shows exactly the same rows. Once on the bundled gateway (restarted with
the app), once on the real OpenClaw gateway (which keeps running; the owner approves this
computer's node in the window first, as the real gateway asks)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from openclaw_desktop.sdk.testing.fake_model_script import PREAMBLE_TEXT
from tests.helpers.fake_llm import FakeLLM
from tests.helpers.journey_app import Journey, idle
from tests.journeys.conftest import OpenJourney, OpenRealJourney

pytestmark = pytest.mark.timeout(300)

PROMPT = "PREAMBLE CALLTOOL:nodes_list:{}"
#: On the real gateway: its own ``ls`` tool on the agent's workspace.
REAL_PROMPT = 'PREAMBLE CALLTOOL:ls:{"path":"."}'


def positions(rows: list[str], prompt: str = PROMPT) -> list[int] | None:
    """Where the four rows are (user, first text, tool card, final answer), or None while
    one is missing. Each must be there once."""
    tool = prompt.split(":")[1]

    def final(row: str) -> bool:
        return row.startswith("FAKE-LLM tool result")

    kinds: list[Callable[[str], bool]] = [
        lambda r: r == prompt,
        lambda r: r == PREAMBLE_TEXT,
        lambda r: tool in r and r not in (prompt, PREAMBLE_TEXT) and not final(r),
        final,
    ]
    found = []
    for kind in kinds:
        hits = [i for i, r in enumerate(rows) if kind(r)]
        if not hits:
            return None
        assert len(hits) == 1, f"a row shown {len(hits)} times: {rows}"
        found.append(hits[0])
    return found


async def _live_then_restart(j: Journey, prompt: str, *, remote: bool) -> None:
    await j.send(prompt)
    await j.wait_messages(lambda rows: PREAMBLE_TEXT in rows, "the text before the tool", 90)
    await j.desktop.screenshot("the-first-text")
    await j.wait_messages(lambda rows: positions(rows, prompt) is not None, "all four rows", 120)
    await idle(j, 90)
    live = await j.messages()
    await j.desktop.screenshot("live")
    where = positions(live, prompt)
    assert where is not None and where == sorted(where), f"out of order: {live}"

    await j.click(await j.control("text", "Message"))
    await j.desktop.key("ctrl+q")
    assert await j.wait_exit(30) == 0, j.app.output()[-3000:]
    if not remote:
        j.app.wait_gateway_gone()
    j.app.start()
    j.relaunched()
    after = await j.wait_messages(
        lambda rows: positions(rows, prompt) is not None, "the history after a restart", 90
    )
    await j.desktop.screenshot("after-a-restart")
    assert after == live


async def test_text_then_tool_then_final_answer_live_and_after_a_restart(
    open_journey: OpenJourney, model: FakeLLM
) -> None:
    """On the bundled gateway the app starts (and starts again after the restart)."""
    async with open_journey(model=model) as j:
        await _live_then_restart(j, PROMPT, remote=False)


@pytest.mark.interop
@pytest.mark.timeout(420)
async def test_text_then_tool_then_final_answer_on_the_real_gateway(
    open_on_real_gateway: OpenRealJourney,
) -> None:
    """The same person, the same window, the real OpenClaw gateway behind it."""
    async with open_on_real_gateway() as j:
        await _live_then_restart(j, REAL_PROMPT, remote=True)
