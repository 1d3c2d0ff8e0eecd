"""The recorded params rejections (``tests/fixtures/gateway/real-params-rejections.json``)
side by side: the REAL gateway still answers each case exactly as recorded, and OUR gateway
answers the same except the cases the offline test lists as known to differ
(:data:`tests.unit.gateway.methods.test_gw_params_models.KNOWN_DIFFERENT`).

The fixture is what the offline test holds the schemas derived from
:mod:`openclaw_desktop.protocol.methods` to; this test keeps it true to the real gateway.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from openclaw_desktop.identity import DeviceIdentity
from tests.helpers.bundled_gateway import BundledGateway, RawClient
from tests.helpers.real_openclaw import RealGateway
from tests.unit.gateway.methods.test_gw_params_models import REJECTIONS, _known_different

pytestmark = pytest.mark.timeout(300)

SCOPES = ["operator.read", "operator.write", "operator.admin", "operator.pairing"]
SCOPES += ["operator.talk"]


async def _answers(url: str, token: str) -> list[Any]:
    """Each case's answer on one connection: ``{"ok": true}`` or the error."""
    client = await RawClient.open(url)
    try:
        hello = await client.connect(
            DeviceIdentity.generate(), scopes=SCOPES, auth={"token": token}
        )
        assert hello["ok"] is True, hello
        out: list[Any] = []
        for case in REJECTIONS:
            res = await client.call(case["method"], case["params"], timeout=20)
            out.append({"ok": True} if res["ok"] else res["error"])
        return out
    finally:
        await client.close()


def test_recorded_rejections_side_by_side(real: RealGateway, ours: BundledGateway) -> None:
    """The real gateway's answers are the recorded ones; ours equal them where not listed."""
    theirs = asyncio.run(_answers(real.url, real.token))
    assert theirs == [case["answer"] for case in REJECTIONS]
    mine = asyncio.run(_answers(ours.url, ours.token))
    for case, a, b in zip(REJECTIONS, theirs, mine, strict=True):
        if _known_different(case["method"], case["params"]):
            assert a != b, case
        else:
            assert a == b, case
