"""List the gateway's nodes and ask the first one that can for its device info.

export OPENCLAW_GATEWAY_URL=ws://127.0.0.1:18789 OPENCLAW_GATEWAY_TOKEN=...
python examples/sdk_nodes.py
"""

from __future__ import annotations

import asyncio
import json
import os
import sys

from openclaw_desktop.errors import GatewayError
from openclaw_desktop.sdk import OpenClaw

URL = os.environ.get("OPENCLAW_GATEWAY_URL", "ws://127.0.0.1:18789")
TOKEN = os.environ.get("OPENCLAW_GATEWAY_TOKEN")


async def show_nodes() -> int:
    """Print every node, then ``device.info`` of the first connected node that has it."""
    async with OpenClaw.connect(URL, token=TOKEN) as oc:
        nodes = await oc.nodes.list()
        print(f"{len(nodes)} node(s)")
        for node in nodes:
            state = "connected" if node.get("connected") else "offline"
            name = node.get("displayName") or node["nodeId"]
            print(f"- {name} ({state}, {len(node.get('commands') or [])} commands)")

        # A node only runs the commands it advertises (and the gateway allows).
        able = [
            n for n in nodes if n.get("connected") and "device.info" in (n.get("commands") or [])
        ]
        if not able:
            print("No connected node offers device.info.")
            return 0
        node = able[0]
        try:
            info = await oc.nodes.invoke(node["nodeId"], "device.info", {}, timeout_ms=15_000)
        except GatewayError as exc:  # the node or the gateway refused
            print(f"device.info failed: {exc}")
            return 1
        print(f"device.info from {node.get('displayName') or node['nodeId']}:")
        print(json.dumps(info, indent=2, sort_keys=True))
        return 0


def main() -> int:
    """``python examples/sdk_nodes.py``."""
    return asyncio.run(show_nodes())


if __name__ == "__main__":
    sys.exit(main())
