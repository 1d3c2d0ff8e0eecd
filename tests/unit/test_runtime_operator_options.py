"""The operator session's options for a target, built in one place for the window and the
CLI's one-shot calls: the URL (the bundled gateway's when none is given), the token and
whether it goes first, password, pin, and this installation's identity and keyring."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from openclaw_desktop.config import AppPaths
from openclaw_desktop.identity import IdentityStore
from openclaw_desktop.protocol import Role
from openclaw_desktop.runtime import RuntimeTarget, bundled_token, operator_options
from tests.helpers.no_keyring import no_keyring


@pytest.fixture
def paths(tmp_path: Path) -> Iterator[AppPaths]:
    """An installation under the test's folder, its secrets in the file fallback."""
    with no_keyring():
        yield AppPaths.under(tmp_path)


def test_a_given_gateway_with_the_flags_of_this_run(paths: AppPaths) -> None:
    async def trust(_prompt: object) -> bool:
        return False

    target = RuntimeTarget(
        url="wss://gateway.example:18789",
        token="typed",
        token_first=True,
        password="pw",
        tls_fingerprint="ab" * 32,
    )
    options = operator_options(paths, target, trust)
    assert (options.url, options.role) == ("wss://gateway.example:18789", Role.OPERATOR)
    assert (options.shared_token, options.shared_token_first) == ("typed", True)
    assert (options.password, options.tls_fingerprint) == ("pw", "ab" * 32)
    assert options.trust_callback is trust
    assert options.signer is not None and options.credentials is not None
    identity = IdentityStore(paths.identity_file).load_or_create()
    assert options.signer.device_id == identity.device_id
    # Scopes, caps, reconnecting and waiting for pairing are the caller's.
    assert (options.scopes, options.caps, options.reconnect) == ((), (), True)
    assert options.wait_for_pairing is False


def test_the_bundled_gateway_and_no_token_to_put_first(paths: AppPaths) -> None:
    options = operator_options(paths, RuntimeTarget(port=19_999, token_first=True))
    assert options.url == "ws://127.0.0.1:19999"
    assert (options.shared_token, options.shared_token_first) == (None, False)
    assert options.password is None and options.trust_callback is None


def test_the_bundled_token_is_read_from_its_file(paths: AppPaths) -> None:
    assert bundled_token(paths) is None  # no file
    paths.gateway_token_file.parent.mkdir(parents=True, exist_ok=True)
    paths.gateway_token_file.write_text("  \n", encoding="utf-8")
    assert bundled_token(paths) is None  # empty
    paths.gateway_token_file.write_text("secret-token\n", encoding="utf-8")
    assert bundled_token(paths) == "secret-token"
