"""Test helpers for apps built on the OpenClaw SDK (``sdk-testing``).

* :class:`TestGateway`: the bundled gateway as a child process on a free 127.0.0.1 port,
  its default model a scripted :class:`FakeLLM` (``async with TestGateway() as gw``).
* :class:`FakeLLM`: the scripted fake model server on its own (OpenAI- and
  Anthropic-compatible; the prompt's script words decide the answer).
* pytest fixtures in :mod:`openclaw_desktop.sdk.testing.pytest_plugin`, opted into with
  ``pytest_plugins = ["openclaw_desktop.sdk.testing.pytest_plugin"]`` (this package does not
  import pytest; the plugin module does).

The names are imported on first use, so ``python -m openclaw_desktop.sdk.testing.fake_model``
runs the fake model without importing it twice.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from openclaw_desktop.lazy import lazy_getattr

if TYPE_CHECKING:
    from openclaw_desktop.sdk.testing.fake_model import FakeLLM, RecordedRequest
    from openclaw_desktop.sdk.testing.gateway import MODEL_REF, TestGateway, TestGatewayError

__all__ = ["MODEL_REF", "FakeLLM", "RecordedRequest", "TestGateway", "TestGatewayError"]

_HOMES = {
    "FakeLLM": "fake_model",
    "RecordedRequest": "fake_model",
    "MODEL_REF": "gateway",
    "TestGateway": "gateway",
    "TestGatewayError": "gateway",
}


__getattr__ = lazy_getattr(__name__, _HOMES)
