"""Journey: a person sends a message whose reply streams slowly, types a second message while
it streams (it waits, queued) and clicks **Steer** with the mouse. The window then shows, each
once and in this order: the first message, the first reply (whole: not vanished, not
overwritten by the next one), the steered message, and the reply that answers it, below it.
After quitting and launching the app again, the history shows the same rows. Once on the
bundled gateway (restarted with the app), once on the real OpenClaw gateway (which keeps
running; the owner approves this computer's node in the window first, as it asks)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from tests.helpers.fake_llm import FakeLLM
from tests.helpers.journey_app import Journey, idle
from tests.journeys.conftest import OpenJourney, OpenRealJourney

pytestmark = pytest.mark.timeout(300)

FIRST = "SLOW:250 tell me a long story"
STEERED = "and mind the weather"
#: What the fake answers to ``SLOW:<ms>``: 20 chunks.
SLOW_REPLY = "".join(f"slow{i} " for i in range(20)).strip()


def positions(rows: list[str]) -> list[int] | None:
    """Where the four rows are (first message, first reply, steered message, its answer),
    or None while one is missing. Each must be there once."""
    kinds: list[Callable[[str], bool]] = [
        lambda r: r == FIRST,
        lambda r: r.strip() == SLOW_REPLY,
        lambda r: r == STEERED,
        lambda r: r.startswith("FAKE-LLM reply #") and r.endswith(STEERED),
    ]
    found = []
    for kind in kinds:
        hits = [i for i, r in enumerate(rows) if kind(r)]
        if not hits:
            return None
        assert len(hits) == 1, f"a row shown {len(hits)} times: {rows}"
        found.append(hits[0])
    return found


async def _steer_then_restart(j: Journey, *, remote: bool) -> None:
    await j.send(FIRST)
    await j.wait_messages(lambda rows: any(r.startswith("slow0") for r in rows), "streaming", 90)
    await j.send(STEERED)
    await j.wait_messages(
        lambda rows: any(r.startswith(STEERED + " (queued") for r in rows), "queued", 20
    )
    await j.desktop.screenshot("queued-while-streaming")
    streaming = await j.messages()
    assert any(r.startswith("slow") and r.strip() != SLOW_REPLY for r in streaming), (
        f"the first reply ended before Steer could be clicked: {streaming}"
    )
    await j.click(await j.control("push button", "Steer"))
    steered = await j.wait_messages(lambda rows: STEERED in rows, "the steered message sent", 20)
    await j.desktop.screenshot("steered")
    replying = [i for i, r in enumerate(steered) if r.startswith("slow")]
    assert len(replying) == 1, f"the first reply is not shown once: {steered}"
    assert steered.index(FIRST) < replying[0] < steered.index(STEERED), steered
    await j.wait_messages(lambda rows: positions(rows) is not None, "all four rows", 120)
    await idle(j, 90)
    live = await j.messages()
    await j.desktop.screenshot("live")
    where = positions(live)
    assert where is not None and where == sorted(where), f"out of order: {live}"

    await j.click(await j.control("text", "Message"))
    await j.desktop.key("ctrl+q")
    assert await j.wait_exit(30) == 0, j.app.output()[-3000:]
    if not remote:
        j.app.wait_gateway_gone()
    j.app.start()
    j.relaunched()
    after = await j.wait_messages(
        lambda rows: positions(rows) is not None, "the history after a restart", 90
    )
    await j.desktop.screenshot("after-a-restart")
    assert after == live


async def test_steer_while_a_reply_streams_live_and_after_a_restart(
    open_journey: OpenJourney, model: FakeLLM
) -> None:
    """On the bundled gateway the app starts (and starts again after the restart)."""
    async with open_journey(model=model) as j:
        await _steer_then_restart(j, remote=False)


@pytest.mark.interop
@pytest.mark.timeout(420)
async def test_steer_while_a_reply_streams_on_the_real_gateway(
    open_on_real_gateway: OpenRealJourney,
) -> None:
    """The same person, the same window, the real OpenClaw gateway behind it."""
    async with open_on_real_gateway() as j:
        await _steer_then_restart(j, remote=True)
