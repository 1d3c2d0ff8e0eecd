"""Capture golden protocol frames from the real OpenClaw gateway into tests/fixtures/protocol.

Starts the real gateway (the interop harness, ``tests/helpers/real_openclaw.py``: npm
``openclaw`` 2026.9.6 under ``~/.cache/openclaw-interop``) with manual pairing on loopback,
and the fake model server (:mod:`tests.helpers.fake_llm`) for one chat turn, runs the
scenario of :mod:`tests.helpers.golden_capture` over raw websockets, redacts secrets
and writes one JSON file per capture plus ``capture.json`` (gateway version and build, date,
command). Takes about a minute (most of it waiting for the gateway's 30 s ``tick``).

Run from the repository root::

    .venv/bin/python -m tools.capture_golden [--out tests/fixtures/protocol]

Then review ``git diff tests/fixtures/protocol`` and run
``tests/unit/protocol/test_protocol_golden.py``. The files it does not write (see the README
there) are kept as they are.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import json
import sys
from pathlib import Path

from tests.helpers.fake_llm import FakeLLM
from tests.helpers.golden_capture import CAPTURE_FILES, GATEWAY_ALLOW, capture_all, redact
from tests.helpers.real_openclaw import GatewayFactory, ensure_installed

DEFAULT_OUT = Path("tests/fixtures/protocol")
COMMAND = ".venv/bin/python -m tools.capture_golden"


def write_json(path: Path, value: object) -> None:
    """Write ``value`` as the fixtures are formatted: one-space indent, UTF-8, final newline."""
    path.write_text(json.dumps(value, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    """Capture and write; returns the exit status."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="fixture folder")
    args = parser.parse_args(argv)
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)

    factory = GatewayFactory(ensure_installed())
    try:
        with FakeLLM() as llm:
            gw = factory(manual_pairing=True, allow=GATEWAY_ALLOW, fake_llm_port=llm.port)
            capture = asyncio.run(
                capture_all(
                    gw.url, gw.token, lambda rid: gw.cli("devices", "approve", rid), chat=True
                )
            )
        redacted = redact(capture.files, capture, state_dir=gw.state_dir)
    finally:
        factory.close()

    for name in CAPTURE_FILES:
        write_json(out / name, redacted[name])
        print(f"wrote {out / name}")
    manifest = {
        "gateway": {"package": "openclaw", "version": capture.gateway_version},
        "buildId": capture.gateway_build,
        "capturedAt": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d"),
        "command": COMMAND,
        "files": CAPTURE_FILES,
        "notes": capture.notes,
    }
    write_json(out / "capture.json", manifest)
    for note in capture.notes:
        print(f"note: {note}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
