"""Bad handshakes against the REAL gateway, compared with what our handshake functions answer.

Every row of :data:`tests.helpers.handshake_cases.CASES` is sent with raw websockets to one
real gateway (token auth, manual pairing); the ``res`` error (code, message, full details with
``requestId`` masked) and the close code and reason must equal what
:func:`tests.helpers.handshake_cases.predict` derives from ``gateway.handshake``.

A second test runs the real gateway's own params validator (from the installed package) on
thousands of generated params and compares its text with :func:`connect_params_error`.
"""

from __future__ import annotations

import copy
import json
import random
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from gateway.handshake import connect_params_error
from tests.helpers.handshake_cases import CASES, HandshakeCase, predict, run_over_socket
from tests.helpers.real_openclaw import (
    GatewayFactory,
    OpenClawInstall,
    RealGateway,
    ensure_installed,
)

pytestmark = pytest.mark.timeout(300)


@pytest.fixture(scope="module")
def install() -> OpenClawInstall:
    """The real OpenClaw install."""
    return ensure_installed()


@pytest.fixture(scope="module")
def gateway(install: OpenClawInstall) -> Iterator[RealGateway]:
    """One real gateway shared by every row: token auth, unpaired devices need approval."""
    factory = GatewayFactory(install)
    try:
        yield factory(manual_pairing=True)
    finally:
        factory.close()


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
async def test_real_gateway_answers_like_our_handshake(
    gateway: RealGateway, case: HandshakeCase
) -> None:
    """The real gateway's answer to a bad first frame equals ours."""
    real, ctx, data = await run_over_socket(gateway.url, case, token=gateway.token)

    ours = predict(ctx, data)

    assert ours == real, f"{case.name}: {case.note}"


# ------------------------------------------------------------------ the params validator
_ORACLE = """
const m = await import(process.argv[1]);
const validate = m[process.argv[2]], format = m[process.argv[3]];
let input = "";
for await (const chunk of process.stdin) input += chunk;
const texts = JSON.parse(input).map((p) => (validate(p) ? null : format(validate.errors)));
console.log(JSON.stringify(texts));
"""
_BASE: dict[str, Any] = {
    "minProtocol": 4,
    "maxProtocol": 4,
    "client": {
        "id": "cli",
        "version": "1",
        "platform": "linux",
        "mode": "cli",
        "buildId": "b",
        "timeZone": "UTC",
    },
    "role": "operator",
    "scopes": ["operator.read"],
    "caps": ["tool-events"],
    "commands": ["a.b"],
    "permissions": {"camera": True},
    "pathEnv": "/bin",
    "locale": "en",
    "modelCatalog": {"agentId": "a"},
    "workerRuns": {
        "bundleHash": "a" * 64,
        "openclawVersion": "1",
        "protocolFeatures": ["x"],
        "bundlePrewarm": 2,
    },
    "device": {"id": "d", "publicKey": "k", "signature": "s", "signedAt": 5, "nonce": "n"},
    "auth": {"token": "t", "deviceToken": "dt"},
}
_ODD: list[Any] = [
    None,
    True,
    0,
    -1,
    1.5,
    4.0,
    "",
    " ",
    "x",
    "\u0301",
    "e\u0301" * 65,
    "a" * 130,
    [],
    [1],
    ["", "a"],
    ["a", "a"],
    {},
    {"x": 1},
    2**60,
    "\U0001f1fa\U0001f1f8" * 40,
    ["x"] * 70,
    {"shortId": ""},
    {"shortId": "s", "bogus": 1},
    {"a": 1, "b\nc": "x", "": 2},
    {"0": 1, "2": False},
]


def _validator_module(install: OpenClawInstall) -> tuple[Path, str, str] | None:
    """The dist module with the params validator, and the export names of it and its formatter."""
    dist = install.openclaw_mjs.parent / "dist"
    for path in sorted(dist.glob("src-*.mjs")):
        text = path.read_text("utf-8")
        if "const validateConnectParams = " not in text:
            continue
        exports = re.search(r"export \{([^}]*)\};?\s*$", text)
        exported: dict[str, str] = {}
        for part in exports.group(1).split(",") if exports else []:
            local, separator, name = part.strip().partition(" as ")
            if separator:
                exported[local] = name
        if {"validateConnectParams", "formatValidationErrors"} <= exported.keys():
            return path, exported["validateConnectParams"], exported["formatValidationErrors"]
    return None


def _mutants(count: int, seed: int) -> list[Any]:
    rng = random.Random(seed)
    paths: list[tuple[str, ...]] = []

    def walk(node: Any, path: tuple[str, ...]) -> None:
        paths.append(path)
        if isinstance(node, dict):
            for key, value in node.items():
                walk(value, (*path, key))

    walk(_BASE, ())
    out: list[Any] = [copy.deepcopy(_BASE), None, [], "x"]
    for _ in range(count):
        params = copy.deepcopy(_BASE)
        for _ in range(rng.randint(1, 5)):
            path = rng.choice(paths[1:])
            parent: Any = params
            for key in path[:-1]:
                parent = parent.get(key) if isinstance(parent, dict) else None
            if not isinstance(parent, dict):
                continue
            roll = rng.random()
            if roll < 0.2:
                parent.pop(path[-1], None)
            elif roll < 0.35:
                parent[
                    rng.choice(["bogus", "1", "10", "", " ", "a\nb", f"x{rng.randint(0, 9)}"])
                ] = None
            else:
                parent[path[-1]] = copy.deepcopy(rng.choice(_ODD))
        out.append(params)
    return out


def test_params_text_matches_the_real_validator(install: OpenClawInstall) -> None:
    """Our params error text equals the real validator's on generated bad params."""
    found = _validator_module(install)
    if found is None:
        pytest.skip("the installed build does not export the params validator as expected")
    module, validate_name, format_name = found
    cases = json.loads(json.dumps(_mutants(2000, seed=7)))
    result = subprocess.run(
        [
            str(install.node_bin),
            "--input-type=module",
            "-e",
            _ORACLE,
            module.as_uri(),
            validate_name,
            format_name,
        ],
        input=json.dumps(cases),
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    real = json.loads(result.stdout)

    ours = [connect_params_error(params) for params in cases]

    mismatches = [(c, r, o) for c, r, o in zip(cases, real, ours, strict=True) if r != o]
    assert not mismatches, mismatches[:3]
