"""Send one message, print the reply as it streams in, then the run's result.

Works against the real OpenClaw gateway and the bundled one alike::

    export OPENCLAW_GATEWAY_URL=ws://127.0.0.1:18789
    export OPENCLAW_GATEWAY_TOKEN=...        # `openclaw-desktop gateway token` for ours
    python examples/sdk_chat.py "What can you do?"
"""

from __future__ import annotations

import asyncio
import os
import sys

from openclaw_desktop.sdk import OpenClaw

URL = os.environ.get("OPENCLAW_GATEWAY_URL", "ws://127.0.0.1:18789")
TOKEN = os.environ.get("OPENCLAW_GATEWAY_TOKEN")
#: Give up on a run that takes longer than this (seconds); it goes on in the gateway.
RUN_TIMEOUT_S = 300


async def chat(message: str) -> int:
    """Send ``message`` to the ``main`` session and print everything the run says."""
    async with OpenClaw.connect(URL, token=TOKEN) as oc:
        # send() returns as soon as the gateway accepted the message; the run goes on.
        run = await oc.sessions.send("main", message)
        async with asyncio.timeout(RUN_TIMEOUT_S):
            async for event in run.events():  # ends after the run's terminal event
                if event.type == "assistant.delta":
                    if event.data["replace"]:  # the gateway rewrote the text so far
                        print("\n" + event.data["cumulative"], end="", flush=True)
                    else:
                        print(event.data["text"], end="", flush=True)
                elif event.type == "tool.call.started":
                    print(f"\n[tool {event.data['name']}]", flush=True)
                elif event.type == "stream.reset":
                    print("\n[reconnected: some text may be missing]", flush=True)
        print()
        # The envelope: status, the final text, this run's transcript messages, usage.
        result = await run.wait(timeout=30)
        print(f"status: {result.status}")
        print(f"messages: {len(result.messages)}")
        print(f"tokens: {result.usage.input_tokens} in, {result.usage.output_tokens} out")
        if result.error:
            print(f"error: {result.error}")
        return 0 if result.status == "completed" else 1


def main() -> int:
    """``python examples/sdk_chat.py [message...]``."""
    message = " ".join(sys.argv[1:]) or "Hello! What can you do?"
    return asyncio.run(chat(message))


if __name__ == "__main__":
    sys.exit(main())
