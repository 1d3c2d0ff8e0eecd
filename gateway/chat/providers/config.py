"""Where the bundled gateway's model providers come from.

Sources, in this order (the first that names a default model wins it):

1. ``<state dir>/providers.json`` (schema below), its ``defaultModel`` else its first model;
2. a local Ollama found on ``127.0.0.1:11434`` (or ``$OLLAMA_HOST``), its first model;
3. ``OPENAI_API_KEY`` / ``OPENAI_BASE_URL`` / ``OPENAI_MODEL`` (no key needed for a loopback
   base URL; the model is ``OPENAI_MODEL``, else the first of ``GET /models``, else
   ``default``);
4. ``ANTHROPIC_API_KEY`` (+ ``ANTHROPIC_BASE_URL``, ``ANTHROPIC_MODEL``);

else offline (``pool`` None). ``providers.json``::

    {
      "defaultModel": "work/gpt-4o-mini",
      "providers": {
        "work": {
          "api": "openai-completions",            // or "anthropic-messages"
          "baseUrl": "https://api.openai.com/v1",
          "apiKey": "sk-..." | "keyring:<name>",  // or "apiKeyEnv": "WORK_KEY"
          "accounts": [{"apiKey": "keyring:a"}, {"apiKeyEnv": "WORK_KEY_2"}],
          "discover": false,                      // add the models of GET {baseUrl}/models
          "headers": {"x-extra": "..."},
          "models": [{"id": "gpt-4o-mini", "name": "GPT-4o mini", "contextWindow": 128000,
                      "maxTokens": 16384, "vision": true, "reasoning": false}]
        }
      }
    }

``accounts`` are tried in order (failover); without it the provider has one account from
``apiKey`` / ``apiKeyEnv`` (or none: local servers). ``keyring:<name>`` is read lazily from
the keyring service ``openclaw-desktop-gateway``, user ``<name>``. Sources never hold secrets.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from gateway.chat.providers.base import ModelRef, Provider, ProviderError
from gateway.chat.providers.sse import ApiKey, Timeouts, is_loopback_url, public_url
from gateway.errors import BundledGatewayError

if TYPE_CHECKING:  # the provider classes load when an account of theirs is built
    from gateway.chat.providers.openai import OpenAIProvider
    from gateway.chat.providers.pool import ProviderPool

__all__ = [
    "KEYRING_SERVICE",
    "PROVIDERS_FILE",
    "ProviderConfigError",
    "ProviderSetup",
    "load_providers",
]

log = logging.getLogger("gateway.providers")

PROVIDERS_FILE = "providers.json"
KEYRING_SERVICE = "openclaw-desktop-gateway"
OLLAMA_DEFAULT = "127.0.0.1:11434"
OPENAI_DEFAULT_MODEL = "gpt-4o-mini"
ANTHROPIC_DEFAULT_MODEL = "claude-sonnet-4-5"
_MAX_FILE_BYTES = 1024 * 1024


class ProviderConfigError(BundledGatewayError, ValueError):
    """``providers.json`` is unreadable or invalid (the message says where and why)."""


class _ModelEntry(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    id: str = Field(min_length=1)
    name: str = ""
    context_window: int = Field(default=128_000, gt=0, alias="contextWindow")
    max_tokens: int = Field(default=4096, gt=0, alias="maxTokens")
    vision: bool = False
    reasoning: bool = False


class _AccountEntry(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    api_key: str | None = Field(default=None, alias="apiKey")
    api_key_env: str | None = Field(default=None, alias="apiKeyEnv")
    label: str | None = None


class _ProviderEntry(_AccountEntry):
    api: Literal["openai-completions", "anthropic-messages"] = "openai-completions"
    base_url: str | None = Field(default=None, alias="baseUrl")
    accounts: list[_AccountEntry] = Field(default_factory=list)
    models: list[_ModelEntry] = Field(default_factory=list)
    discover: bool = False
    headers: dict[str, str] = Field(default_factory=dict)


class _ProvidersFile(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    providers: dict[str, _ProviderEntry] = Field(default_factory=dict)
    default_model: str | None = Field(default=None, alias="defaultModel")


@dataclass
class ProviderSetup:
    """The providers the gateway found: the pool (None = offline), the models, the default
    model, and human-readable lines saying where each came from (no secrets)."""

    pool: ProviderPool | None
    default_model: ModelRef | None
    models: list[ModelRef] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)

    async def aclose(self) -> None:
        """Close every provider's connections."""
        if self.pool is not None:
            await self.pool.aclose()


def _keyring_loader(name: str) -> Callable[[], str | None]:
    def load() -> str | None:
        import keyring  # its backend discovery is slow; only a keyring: key needs it

        value: str | None = keyring.get_password(KEYRING_SERVICE, name)
        return value

    return load


def _api_key(raw: str | None, env_name: str | None, env: Mapping[str, str], where: str) -> ApiKey:
    """An account's key from its config entry (literal, ``keyring:<name>`` or an env var)."""
    if raw is not None and raw.startswith("keyring:"):
        name = raw.removeprefix("keyring:").strip()
        if not name:
            raise ProviderConfigError(f"{where}: 'keyring:' needs a key name")
        return ApiKey(loader=_keyring_loader(name), label=f"keyring:{name}")
    if raw:
        return ApiKey(raw)
    if env_name:
        return ApiKey(env.get(env_name) or None, label=f"${env_name}")
    return ApiKey(None)


def _accounts(
    name: str, entry: _ProviderEntry, env: Mapping[str, str], where: str
) -> tuple[list[tuple[str, ApiKey]], list[str]]:
    """The (label, key) of each account of a provider entry, and notes for the sources.

    Listed ``accounts`` whose ``apiKeyEnv`` is unset are skipped; a provider without
    ``accounts`` keeps its single account even without a key (local servers need none).
    """
    notes: list[str] = []
    if not entry.accounts:
        if entry.api_key_env and not entry.api_key and not env.get(entry.api_key_env):
            notes.append(f"${entry.api_key_env} is not set")
        key = _api_key(entry.api_key, entry.api_key_env, env, where)
        return [(entry.label or name, key)], notes
    keys: list[tuple[str, ApiKey]] = []
    for i, account in enumerate(entry.accounts):
        if account.api_key_env and not account.api_key and not env.get(account.api_key_env):
            notes.append(f"skipped account {i + 1}: ${account.api_key_env} is not set")
            continue
        key = _api_key(account.api_key, account.api_key_env, env, f"{where}.accounts[{i}]")
        keys.append((account.label or f"{name}#{i + 1}", key))
    return keys, notes


def _read_file(path: Path) -> _ProvidersFile | None:
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise ProviderConfigError(f"{path}: cannot read: {exc.strerror}") from None
    if len(data) > _MAX_FILE_BYTES:
        raise ProviderConfigError(f"{path}: larger than {_MAX_FILE_BYTES} bytes")
    try:
        return _ProvidersFile.model_validate(json.loads(data))
    except ValueError as exc:
        if isinstance(exc, ValidationError):
            problems = "; ".join(
                f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors()[:5]
            )
            raise ProviderConfigError(f"{path}: {problems}") from None
        raise ProviderConfigError(f"{path}: not valid JSON: {exc}") from None


class _Builder:
    """Collects providers, models and sources while the sources are read."""

    def __init__(self, timeouts: Timeouts, probe_timeout_s: float) -> None:
        self.timeouts = timeouts
        self.probe_timeout_s = probe_timeout_s
        self.accounts: dict[str, list[Provider]] = {}
        self.models: list[ModelRef] = []
        self.sources: list[str] = []
        self.candidates: list[ModelRef] = []

    def add(self, name: str, providers: list[Provider], models: list[ModelRef]) -> None:
        self.accounts[name] = providers
        self.models.extend(models)
        if models:
            self.candidates.append(models[0])

    async def discover(self, provider: OpenAIProvider) -> list[str]:
        try:
            async with asyncio.timeout(self.probe_timeout_s):
                return await provider.discover_model_ids()
        except (ProviderError, TimeoutError):
            return []


async def _from_file(
    builder: _Builder, state_dir: Path, env: Mapping[str, str]
) -> tuple[_ProvidersFile | None, ModelRef | None]:
    from gateway.chat.providers.anthropic import ANTHROPIC_BASE_URL, AnthropicProvider
    from gateway.chat.providers.openai import OPENAI_BASE_URL, OpenAIProvider

    path = state_dir / PROVIDERS_FILE
    parsed = _read_file(path)
    if parsed is None:
        return None, None
    for name, entry in parsed.providers.items():
        if not name or "/" in name:
            raise ProviderConfigError(f"{path}: provider name {name!r} is empty or has a '/'")
        where = f"{path}: providers.{name}"
        models = [
            ModelRef(
                provider=name,
                model=m.id,
                api=entry.api,
                name=m.name or m.id,
                context_window=m.context_window,
                max_output_tokens=m.max_tokens,
                vision=m.vision,
                reasoning=m.reasoning,
            )
            for m in entry.models
        ]
        keys, notes = _accounts(name, entry, env, where)
        providers: list[Provider] = []
        if entry.api == "anthropic-messages":
            base = entry.base_url or ANTHROPIC_BASE_URL
            providers = [
                AnthropicProvider(
                    name,
                    base_url=base,
                    api_key=key,
                    models=models,
                    headers=entry.headers,
                    timeouts=builder.timeouts,
                    label=label,
                )
                for label, key in keys
            ]
        else:
            base = entry.base_url or OPENAI_BASE_URL
            openai = [
                OpenAIProvider(
                    name,
                    base_url=base,
                    api_key=key,
                    models=models,
                    discover=entry.discover,
                    headers=entry.headers,
                    timeouts=builder.timeouts,
                    label=label,
                )
                for label, key in keys
            ]
            if entry.discover and openai:
                known = {m.model for m in models}
                for model_id in await builder.discover(openai[0]):
                    if model_id not in known:
                        models.append(ModelRef(name, model_id, "openai-completions", name=model_id))
            providers = list(openai)
        note = "".join(f", {n}" for n in notes)
        builder.sources.append(
            f"{PROVIDERS_FILE}: {name} ({entry.api}, {public_url(base)}, "
            f"{len(providers)} account(s), {len(models)} model(s){note})"
        )
        if providers:
            builder.add(name, providers, models)
    default = None
    if parsed.default_model:
        default = _resolve_default(parsed, builder.models, parsed.default_model, path)
    return parsed, default


def _resolve_default(
    parsed: _ProvidersFile, models: list[ModelRef], ref: str, path: Path
) -> ModelRef:
    provider, sep, model = ref.partition("/")
    if not sep or not model:
        raise ProviderConfigError(f"{path}: defaultModel must be 'provider/model', got {ref!r}")
    for known in models:
        if known.provider == provider and known.model == model:
            return known
    entry = parsed.providers.get(provider)
    if entry is None:
        raise ProviderConfigError(f"{path}: defaultModel names unknown provider {provider!r}")
    return ModelRef(provider=provider, model=model, api=entry.api, name=model)


def _ollama_root(env: Mapping[str, str]) -> str:
    host = (env.get("OLLAMA_HOST") or OLLAMA_DEFAULT).strip().rstrip("/")
    if "://" not in host:
        host = f"http://{host}"
    parts = urlsplit(host)
    hostname = parts.hostname or "127.0.0.1"
    if hostname in ("0.0.0.0", "::"):  # a bind-all address: talk to it on loopback
        hostname = "127.0.0.1"
    port = parts.port or 11434
    return f"{parts.scheme}://{hostname}:{port}"


async def _port_answers(root: str, timeout_s: float) -> bool:
    """Whether anything accepts a TCP connection at ``root``'s host and port."""
    parts = urlsplit(root)
    try:
        async with asyncio.timeout(timeout_s):
            _, writer = await asyncio.open_connection(parts.hostname, parts.port)
    except (OSError, TimeoutError):
        return False
    writer.close()
    with contextlib.suppress(OSError):
        await writer.wait_closed()
    return True


async def _probe_ollama(root: str, timeout_s: float) -> list[str] | None:
    """The model names of a running Ollama, or None when nothing answers like one."""
    if not await _port_answers(root, timeout_s):
        return None  # the usual case, decided without loading an HTTP client
    import httpx

    async with httpx.AsyncClient(trust_env=False, timeout=timeout_s) as client:
        try:
            response = await client.get(f"{root}/api/tags")
            if response.status_code == 200:
                found = response.json().get("models")
                if isinstance(found, list):
                    names = [m.get("name") or m.get("model") for m in found if isinstance(m, dict)]
                    return [n for n in names if isinstance(n, str) and n]
            response = await client.get(f"{root}/v1/models")
            if response.status_code == 200:
                data = response.json().get("data")
                if isinstance(data, list):
                    ids = [m.get("id") for m in data if isinstance(m, dict)]
                    return [i for i in ids if isinstance(i, str) and i]
        except (httpx.HTTPError, ValueError, AttributeError):
            return None
    return None


async def _from_ollama(builder: _Builder, env: Mapping[str, str]) -> None:
    from gateway.chat.providers.openai import OpenAIProvider

    root = _ollama_root(env)
    names = await _probe_ollama(root, builder.probe_timeout_s)
    if names is None:
        builder.sources.append(f"ollama: nothing answers on {root}")
        return
    if not names:
        builder.sources.append(f"ollama: {root} runs but has no models (try: ollama pull <model>)")
        return
    models = [ModelRef("ollama", n, "openai-completions", name=n) for n in names]
    provider = OpenAIProvider(
        "ollama",
        base_url=f"{root}/v1",
        models=models,
        discover=True,
        timeouts=builder.timeouts,
        label="ollama",
    )
    builder.add("ollama", [provider], models)
    builder.sources.append(f"ollama: {root} ({len(names)} model(s))")


async def _from_openai_env(builder: _Builder, env: Mapping[str, str]) -> None:
    from gateway.chat.providers.openai import OPENAI_BASE_URL, OpenAIProvider

    key = env.get("OPENAI_API_KEY") or None
    explicit_base = env.get("OPENAI_BASE_URL") or None
    if key is None and explicit_base is None:
        return
    base = (explicit_base or OPENAI_BASE_URL).rstrip("/")
    model_id = env.get("OPENAI_MODEL") or None
    how = "$OPENAI_MODEL"
    if model_id is None and explicit_base is None:
        model_id, how = OPENAI_DEFAULT_MODEL, "built-in default"
    if model_id is None:
        probe = OpenAIProvider("openai", base_url=base, api_key=key, timeouts=builder.timeouts)
        try:
            found = await builder.discover(probe)
        finally:
            await probe.aclose()
        model_id, how = (found[0], "first of GET /models") if found else ("default", "fallback")
    vision = explicit_base is None and model_id.startswith(("gpt-4o", "gpt-4.1", "gpt-5"))
    model = ModelRef("openai", model_id, "openai-completions", name=model_id, vision=vision)
    provider = OpenAIProvider(
        "openai",
        base_url=base,
        api_key=key,
        models=[model],
        timeouts=builder.timeouts,
        label="openai (environment)",
    )
    if key:
        auth = "key from $OPENAI_API_KEY"
    elif is_loopback_url(base):
        auth = "no key (loopback)"
    else:
        auth = "no key: $OPENAI_API_KEY is not set"
    builder.add("openai", [provider], [model])
    builder.sources.append(
        f"environment: openai-compatible {public_url(base)}, {auth}, model {model_id} ({how})"
    )


def _from_anthropic_env(builder: _Builder, env: Mapping[str, str]) -> None:
    from gateway.chat.providers.anthropic import ANTHROPIC_BASE_URL, AnthropicProvider

    key = env.get("ANTHROPIC_API_KEY") or None
    explicit_base = env.get("ANTHROPIC_BASE_URL") or None
    if key is None and not (explicit_base and is_loopback_url(explicit_base)):
        return
    base = explicit_base or ANTHROPIC_BASE_URL
    model_id = env.get("ANTHROPIC_MODEL") or ANTHROPIC_DEFAULT_MODEL
    model = ModelRef(
        "anthropic",
        model_id,
        "anthropic-messages",
        name=model_id,
        vision=True,
        context_window=200_000,
        max_output_tokens=8192,
    )
    provider = AnthropicProvider(
        "anthropic",
        base_url=base,
        api_key=key,
        models=[model],
        timeouts=builder.timeouts,
        label="anthropic (environment)",
    )
    builder.add("anthropic", [provider], [model])
    auth = "key from $ANTHROPIC_API_KEY" if key else "no key (loopback)"
    builder.sources.append(f"environment: anthropic {public_url(base)}, {auth}, model {model_id}")


async def load_providers(
    state_dir: Path,
    env: Mapping[str, str],
    *,
    probe_ollama: bool = True,
    timeouts: Timeouts | None = None,
    probe_timeout_s: float = 0.5,
) -> ProviderSetup:
    """Find the model providers (see the module docstring) and build the pool.

    ``probe_timeout_s`` bounds each probe (Ollama, ``GET /models``). Raises
    ProviderConfigError for an invalid ``providers.json``; nothing else (no provider is
    offline mode). Reads the file synchronously (small, bounded).
    """
    builder = _Builder(timeouts or Timeouts(), probe_timeout_s)
    parsed, default = await _from_file(builder, state_dir, env)
    configured = set(parsed.providers) if parsed is not None else set()
    if probe_ollama and "ollama" not in configured:
        await _from_ollama(builder, env)
    if "openai" not in configured:
        await _from_openai_env(builder, env)
    if "anthropic" not in configured:
        _from_anthropic_env(builder, env)
    if default is None and builder.candidates:
        default = builder.candidates[0]
    if not builder.accounts:
        builder.sources.append("offline: no model provider found")
        return ProviderSetup(pool=None, default_model=None, models=[], sources=builder.sources)
    from gateway.chat.providers.pool import ProviderPool

    return ProviderSetup(
        pool=ProviderPool(builder.accounts),
        default_model=default,
        models=builder.models,
        sources=builder.sources,
    )
