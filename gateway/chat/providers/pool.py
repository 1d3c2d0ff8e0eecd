"""Accounts and failover: one pool of ordered accounts per provider name.

:meth:`ProviderPool.stream` tries the first healthy account of the request's provider and,
when it fails with an error that another account may not have (``ProviderError.fails_over``)
*before any event was yielded*, the next one. Once output has started the error is re-raised:
a half-answer is never spliced with another account's answer. Accounts that failed with
``rate_limit`` cool down (Retry-After, else 60 s), with ``auth`` until restart.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from gateway.chat.providers.base import (
    CompletionRequest,
    ModelRef,
    Provider,
    ProviderError,
    StreamEvent,
)

__all__ = ["DEFAULT_COOLDOWN_S", "AccountStatus", "ProviderPool"]

log = logging.getLogger("gateway.providers")

#: Cool-down of a rate-limited account that sent no Retry-After.
DEFAULT_COOLDOWN_S = 60.0


@dataclass(frozen=True)
class AccountStatus:
    """What ``models.authStatus`` may show about one account (no secrets)."""

    provider: str
    account: str
    #: ``ok``, ``cooldown`` (rate limited) or ``auth_failed`` (until restart).
    state: str
    #: Seconds until the account is tried again (``cooldown`` only).
    retry_in_s: float | None = None
    last_error: str | None = None


class _Account:
    def __init__(self, provider: Provider, label: str) -> None:
        self.provider = provider
        self.label = label
        self.until = 0.0
        self.last_error: ProviderError | None = None


class ProviderPool:
    """Ordered accounts per provider name, with failover and cool-downs.

    ``accounts`` maps a provider name (the ``provider`` of :class:`ModelRef`) to its accounts
    in the order they are tried. ``clock`` is monotonic seconds (tests pass their own).
    """

    def __init__(
        self,
        accounts: Mapping[str, Sequence[Provider]],
        *,
        clock: Callable[[], float] = time.monotonic,
        default_cooldown_s: float = DEFAULT_COOLDOWN_S,
    ) -> None:
        self._groups: dict[str, list[_Account]] = {}
        for name, providers in accounts.items():
            group = [
                _Account(p, getattr(p, "label", "") or f"{name}#{i + 1}")
                for i, p in enumerate(providers)
            ]
            if group:
                self._groups[name] = group
        self._clock = clock
        self._default_cooldown_s = default_cooldown_s
        #: How many times a call moved on to another account.
        self.failovers = 0

    @property
    def provider_names(self) -> list[str]:
        """The provider names, in configuration order."""
        return list(self._groups)

    def status(self) -> list[AccountStatus]:
        """The health of every account."""
        now = self._clock()
        out: list[AccountStatus] = []
        for name, group in self._groups.items():
            for account in group:
                error = account.last_error
                if account.until == math.inf:
                    state, retry = "auth_failed", None
                elif account.until > now:
                    state, retry = "cooldown", round(account.until - now, 1)
                else:
                    state, retry = "ok", None
                out.append(
                    AccountStatus(
                        provider=name,
                        account=account.label,
                        state=state,
                        retry_in_s=retry,
                        last_error=error.message if error is not None else None,
                    )
                )
        return out

    async def list_models(self) -> list[ModelRef]:
        """Every provider's models (from its first account that answers), without duplicates."""
        seen: set[str] = set()
        models: list[ModelRef] = []
        for group in self._groups.values():
            for account in group:
                try:
                    found = await account.provider.list_models()
                except ProviderError as exc:
                    log.warning("listing models of %s failed: %s", account.label, exc.message)
                    continue
                for model in found:
                    if model.ref not in seen:
                        seen.add(model.ref)
                        models.append(model)
                break
        return models

    def _cool_down(self, account: _Account, error: ProviderError) -> None:
        account.last_error = error
        if error.kind == "auth":
            account.until = math.inf
        elif error.kind == "rate_limit":
            wait = error.retry_after_s
            account.until = self._clock() + (wait if wait is not None else self._default_cooldown_s)

    async def stream(self, request: CompletionRequest) -> AsyncIterator[StreamEvent]:
        """Stream one turn through the first account that works (see the module docstring).

        Raises ProviderError: ``bad_request`` for an unknown provider; the last error when
        every account failed or is cooling down.
        """
        name = request.model.provider
        group = self._groups.get(name)
        if not group:
            raise ProviderError(
                "bad_request", f"no provider named {name!r} is configured", provider=name
            )
        last: ProviderError | None = None
        tried = 0
        for account in group:
            if account.until > self._clock():
                last = account.last_error or last
                continue
            if tried:
                self.failovers += 1
                log.warning("provider %s: failing over to account %s", name, account.label)
            tried += 1
            started = False
            events = account.provider.stream(request)
            try:
                async for event in events:
                    started = True
                    yield event
                account.last_error = None
                return
            except ProviderError as exc:
                if started or not exc.fails_over:
                    raise
                self._cool_down(account, exc)
                log.warning(
                    "provider %s: account %s failed (%s): %s",
                    name,
                    account.label,
                    exc.kind,
                    exc.message,
                )
                last = exc
            finally:
                await _close(events)
        if last is None:  # pragma: no cover - a non-empty group always sets it
            last = ProviderError("unavailable", f"{name}: no account available", provider=name)
        if not tried:
            raise ProviderError(
                last.kind,
                f"{name}: every account is cooling down; last error: {last.message}",
                provider=name,
                model=request.model.model,
                http_status=last.http_status,
                retry_after_s=last.retry_after_s,
                transport=last.transport,
            )
        raise last

    async def aclose(self) -> None:
        """Close every account."""
        for group in self._groups.values():
            for account in group:
                await account.provider.aclose()


async def _close(events: AsyncIterator[Any]) -> None:
    """Close a provider's stream (async generators hold a connection until closed)."""
    aclose = getattr(events, "aclose", None)
    if aclose is not None:
        await aclose()
