"""Where providers come from: environment, providers.json, the keyring, a local Ollama."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import keyring
import pytest
from keyrings.alt.file import PlaintextKeyring

from gateway.chat.providers import (
    KEYRING_SERVICE,
    CompletionRequest,
    ModelRef,
    ProviderConfigError,
    ProviderError,
    ProviderSetup,
    TextDelta,
    Timeouts,
    load_providers,
)
from tests.helpers.fake_llm import FakeLLM
from tests.helpers.ports import free_port

SHORT = Timeouts(connect=2.0, read=2.0, write=2.0)


@pytest.fixture
def fake() -> Iterator[FakeLLM]:
    """A fake model server (sk-bad gets 401)."""
    with FakeLLM(key_status={"sk-bad": 401}) as server:
        yield server


@pytest.fixture
def plaintext_keyring(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """A keyrings.alt plaintext file backend below tmp_path; the old backend is restored."""
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    backend = PlaintextKeyring()
    backend.file_path = str(tmp_path / "keyring" / "keyring_pass.cfg")
    previous = keyring.get_keyring()
    keyring.set_keyring(backend)
    try:
        yield
    finally:
        keyring.set_keyring(previous)


def no_ollama() -> dict[str, str]:
    """An environment whose Ollama address has nothing listening."""
    return {"OLLAMA_HOST": f"127.0.0.1:{free_port()}"}


async def load(state: Path, env: dict[str, str], **kw: Any) -> ProviderSetup:
    """load_providers with short timeouts."""
    return await load_providers(state, env, timeouts=SHORT, **kw)


async def ask(setup: ProviderSetup, model: ModelRef | None = None, text: str = "hi") -> str:
    """The streamed text of one turn through the setup's pool."""
    assert setup.pool is not None
    target = model or setup.default_model
    assert target is not None
    request = CompletionRequest(
        model=target, system="", messages=[{"role": "user", "content": text}]
    )
    return "".join([e.text async for e in setup.pool.stream(request) if isinstance(e, TextDelta)])


def write_providers(state: Path, data: dict[str, Any]) -> None:
    """Write providers.json."""
    state.mkdir(parents=True, exist_ok=True)
    (state / "providers.json").write_text(json.dumps(data), encoding="utf-8")


async def test_loopback_base_url_needs_no_key_and_finds_the_model(
    tmp_path: Path, fake: FakeLLM
) -> None:
    """OPENAI_BASE_URL on loopback alone: no key, model = first of GET /models, it works."""
    setup = await load(tmp_path, {"OPENAI_BASE_URL": fake.openai_base_url, **no_ollama()})
    try:
        assert setup.default_model is not None
        assert setup.default_model.ref == "openai/fake-model"
        assert (await ask(setup)).startswith("FAKE-LLM reply")
    finally:
        await setup.aclose()
    assert "authorization" not in fake.requests[-1].headers
    text = "\n".join(setup.sources)
    assert "no key (loopback)" in text
    assert "first of GET /models" in text
    assert "nothing answers" in text  # the Ollama probe found nothing


async def test_openai_env_key_and_model(tmp_path: Path, fake: FakeLLM) -> None:
    """OPENAI_API_KEY and OPENAI_MODEL are used; the key never shows in the sources."""
    env = {
        "OPENAI_BASE_URL": fake.openai_base_url,
        "OPENAI_API_KEY": "sk-env-secret",
        "OPENAI_MODEL": "chosen",
    }
    setup = await load(tmp_path, env, probe_ollama=False)
    try:
        assert setup.default_model is not None
        assert setup.default_model.ref == "openai/chosen"
        await ask(setup)
    finally:
        await setup.aclose()
    assert fake.requests[-1].api_key == "sk-env-secret"
    assert fake.requests[-1].body["model"] == "chosen"
    assert [r.path for r in fake.requests] == ["/v1/chat/completions"]  # no discovery needed
    assert "sk-env-secret" not in "\n".join(setup.sources)


async def test_openai_base_url_down_falls_back_to_default_model(tmp_path: Path) -> None:
    """An OPENAI_BASE_URL with nothing behind it still configures model 'default'."""
    env = {"OPENAI_BASE_URL": f"http://127.0.0.1:{free_port()}/v1"}
    setup = await load(tmp_path, env, probe_ollama=False)
    try:
        assert setup.default_model is not None
        assert setup.default_model.ref == "openai/default"
        with pytest.raises(ProviderError) as info:
            await ask(setup)
        assert info.value.kind == "unavailable"
    finally:
        await setup.aclose()


async def test_anthropic_env(tmp_path: Path, fake: FakeLLM) -> None:
    """ANTHROPIC_API_KEY with a base URL and model from the environment."""
    env = {
        "ANTHROPIC_API_KEY": "sk-ant-secret",
        "ANTHROPIC_BASE_URL": fake.base_url,
        "ANTHROPIC_MODEL": "claude-fake",
    }
    setup = await load(tmp_path, env, probe_ollama=False)
    try:
        assert setup.default_model is not None
        assert setup.default_model.ref == "anthropic/claude-fake"
        assert setup.default_model.api == "anthropic-messages"
        assert (await ask(setup)).startswith("FAKE-LLM reply")
    finally:
        await setup.aclose()
    assert fake.requests[-1].path == "/v1/messages"
    assert fake.requests[-1].api_key == "sk-ant-secret"
    assert "sk-ant-secret" not in "\n".join(setup.sources)


async def test_nothing_found_is_offline(tmp_path: Path) -> None:
    """No file, no env, no Ollama: offline, and the sources say so."""
    setup = await load(tmp_path, no_ollama())
    assert setup.pool is None
    assert setup.default_model is None
    assert setup.models == []
    assert "offline" in setup.sources[-1]


async def test_ollama_auto_detect_wins_over_env(tmp_path: Path, fake: FakeLLM) -> None:
    """A local Ollama (at $OLLAMA_HOST) is detected and preferred over the OpenAI env."""
    env = {
        "OLLAMA_HOST": f"127.0.0.1:{fake.port}",
        "OPENAI_API_KEY": "sk-x",
        "OPENAI_BASE_URL": fake.openai_base_url,
        "OPENAI_MODEL": "other",
    }
    setup = await load(tmp_path, env)
    try:
        assert setup.default_model is not None
        assert setup.default_model.ref == "ollama/fake-model"
        assert [m.ref for m in setup.models] == [
            "ollama/fake-model",
            "ollama/fake-model-2",
            "openai/other",
        ]
        assert (await ask(setup)).startswith("FAKE-LLM reply")
        assert setup.pool is not None
        assert [m.ref for m in await setup.pool.list_models()][:2] == [
            "ollama/fake-model",
            "ollama/fake-model-2",
        ]
    finally:
        await setup.aclose()
    assert fake.requests[0].path == "/api/tags"
    assert any(r.path == "/v1/chat/completions" and r.api_key is None for r in fake.requests)
    assert any(line.startswith("ollama: http://127.0.0.1:") for line in setup.sources)


async def test_providers_file_accounts_and_default_model(
    tmp_path: Path, fake: FakeLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    """providers.json: ordered accounts fail over, defaultModel wins over Ollama, unset
    apiKeyEnv accounts are skipped and named, secrets stay out of the sources."""
    write_providers(
        tmp_path,
        {
            "defaultModel": "work/big",
            "providers": {
                "work": {
                    "api": "openai-completions",
                    "baseUrl": fake.openai_base_url,
                    "accounts": [
                        {"apiKey": "sk-bad"},
                        {"apiKeyEnv": "UNSET_KEY"},
                        {"apiKeyEnv": "WORK_KEY"},
                    ],
                    "models": [
                        {"id": "small", "name": "Small"},
                        {"id": "big", "contextWindow": 32000, "maxTokens": 2000, "vision": True},
                    ],
                }
            },
        },
    )
    env = {"WORK_KEY": "sk-work-good", "OLLAMA_HOST": f"127.0.0.1:{fake.port}"}
    setup = await load(tmp_path, env)
    try:
        assert setup.default_model == ModelRef(
            "work",
            "big",
            "openai-completions",
            name="big",
            context_window=32000,
            max_output_tokens=2000,
            vision=True,
        )
        assert (await ask(setup)).startswith("FAKE-LLM reply")
        assert setup.pool is not None
        assert setup.pool.failovers == 1
    finally:
        await setup.aclose()
    chats = [r for r in fake.requests if r.path == "/v1/chat/completions"]
    assert [r.api_key for r in chats] == ["sk-bad", "sk-work-good"]
    text = "\n".join(setup.sources)
    assert "work (openai-completions" in text
    assert "2 account(s)" in text
    assert "$UNSET_KEY is not set" in text
    assert "sk-" not in text


async def test_providers_file_without_default_uses_its_first_model(
    tmp_path: Path, fake: FakeLLM
) -> None:
    """Without defaultModel the file's first model is the default; discover adds models."""
    write_providers(
        tmp_path,
        {
            "providers": {
                "lab": {
                    "baseUrl": fake.openai_base_url,
                    "discover": True,
                    "models": [{"id": "pinned"}],
                }
            }
        },
    )
    setup = await load(tmp_path, {"OPENAI_API_KEY": "sk-x"}, probe_ollama=False)
    try:
        assert setup.default_model is not None
        assert setup.default_model.ref == "lab/pinned"
        refs = [m.ref for m in setup.models]
        assert refs[:3] == ["lab/pinned", "lab/fake-model", "lab/fake-model-2"]
        assert "openai/gpt-4o-mini" in refs  # the env provider is there too
    finally:
        await setup.aclose()


async def test_keyring_key_is_read_lazily(
    tmp_path: Path, fake: FakeLLM, plaintext_keyring: None
) -> None:
    """``apiKey: keyring:<name>`` is read from the keyring at the first call, not at load."""
    write_providers(
        tmp_path,
        {
            "providers": {
                "kr": {
                    "baseUrl": fake.openai_base_url,
                    "apiKey": "keyring:work",
                    "models": [{"id": "m"}],
                }
            }
        },
    )
    setup = await load(tmp_path, {}, probe_ollama=False)
    try:
        keyring.set_password(KEYRING_SERVICE, "work", "sk-from-keyring")
        assert (await ask(setup)).startswith("FAKE-LLM reply")
    finally:
        await setup.aclose()
    assert fake.requests[-1].api_key == "sk-from-keyring"
    assert "sk-from-keyring" not in "\n".join(setup.sources)


async def test_missing_keyring_key_is_a_clear_auth_error(
    tmp_path: Path, fake: FakeLLM, plaintext_keyring: None
) -> None:
    """A keyring name without a stored key fails the call as auth, naming the key, not
    touching the server."""
    write_providers(
        tmp_path,
        {
            "providers": {
                "kr": {
                    "baseUrl": fake.openai_base_url,
                    "apiKey": "keyring:absent",
                    "models": [{"id": "m"}],
                }
            }
        },
    )
    setup = await load(tmp_path, {}, probe_ollama=False)
    try:
        with pytest.raises(ProviderError) as info:
            await ask(setup)
    finally:
        await setup.aclose()
    assert info.value.kind == "auth"
    assert "keyring:absent" in info.value.message
    assert fake.requests == []


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("{not json", "not valid JSON"),
        ('{"providers": {"x": {"api": "grpc"}}}', "providers.x.api"),
        ('{"providers": {"x": {"models": [{"id": "m", "contextWindow": -1}]}}}', "contextWindow"),
        ('{"providers": {}, "defaultModel": "nope/m"}', "unknown provider 'nope'"),
        ('{"providers": {"x": {}}, "defaultModel": "justmodel"}', "provider/model"),
        ('{"providers": {"x": {"apiKey": "keyring:"}}}', "needs a key name"),
        ('{"providers": {"a/b": {}}}', "has a '/'"),
        ('{"provider": {}}', "provider"),
    ],
)
async def test_invalid_providers_file_is_a_clear_error(
    tmp_path: Path, content: str, expected: str
) -> None:
    """A broken providers.json raises ProviderConfigError naming the file and the problem."""
    (tmp_path / "providers.json").write_text(content, encoding="utf-8")
    with pytest.raises(ProviderConfigError) as info:
        await load(tmp_path, {}, probe_ollama=False)
    assert "providers.json" in str(info.value)
    assert expected in str(info.value)
