"""Stream a reply and cancel the run once enough of it has arrived.

export OPENCLAW_GATEWAY_URL=ws://127.0.0.1:18789 OPENCLAW_GATEWAY_TOKEN=...
python examples/sdk_stream_and_cancel.py --after 80 "Write a long story about a lobster."
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys

from openclaw_desktop.sdk import OpenClaw

URL = os.environ.get("OPENCLAW_GATEWAY_URL", "ws://127.0.0.1:18789")
TOKEN = os.environ.get("OPENCLAW_GATEWAY_TOKEN")
RUN_TIMEOUT_S = 300


async def stream_then_cancel(message: str, after_chars: int) -> int:
    """Print the reply until ``after_chars`` characters arrived, then cancel the run."""
    async with OpenClaw.connect(URL, token=TOKEN) as oc:
        run = await oc.sessions.send("main", message)
        received = 0
        cancelled = False
        async with asyncio.timeout(RUN_TIMEOUT_S):
            # Keep reading after cancel(): the run ends with a `run.cancelled` event.
            async for event in run.events():
                if event.type != "assistant.delta":
                    continue
                text = str(event.data["text"])
                print(text, end="", flush=True)
                received += len(text)
                if received >= after_chars and not cancelled:
                    cancelled = True
                    stopped = await run.cancel()  # chat.abort for this run only
                    print(f"\n[cancel requested after {received} characters: {stopped}]")
        result = await run.wait(timeout=30)
        if result.status != "cancelled":
            print(f"\n[the run ended before {after_chars} characters]")
        print(f"status: {result.status}")
        # A cancelled run keeps what it said so far.
        print(f"kept: {len(result.text)} characters")
        return 0


def main() -> int:
    """``python examples/sdk_stream_and_cancel.py [--after N] [message...]``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--after", type=int, default=80, help="characters before cancelling")
    parser.add_argument("message", nargs="*", help="what to send")
    args = parser.parse_args()
    message = " ".join(args.message) or "Tell me a long story about a lobster."
    return asyncio.run(stream_then_cancel(message, max(args.after, 1)))


if __name__ == "__main__":
    sys.exit(main())
