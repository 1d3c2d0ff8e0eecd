"""Fixtures shared by the bundled gateway's integration tests."""

from __future__ import annotations

import pytest

AMBIENT_PROVIDER_VARS = (
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "OPENAI_MODEL",
    "ANTHROPIC_API_KEY",
    "OLLAMA_HOST",
)
"""The environment a gateway would read providers from besides ``providers.json``."""


@pytest.fixture
def no_ambient_providers(monkeypatch: pytest.MonkeyPatch) -> None:
    """Only the providers a test configures (never the developer's own keys); a module
    asks for it with ``pytest.mark.usefixtures("no_ambient_providers")``."""
    for name in AMBIENT_PROVIDER_VARS:
        monkeypatch.delenv(name, raising=False)
