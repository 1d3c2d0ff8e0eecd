"""Unit tests: which gateway a launch uses and when it asks first
(:mod:`openclaw_desktop.known_gateways`), on real files in a temporary folder."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from openclaw_desktop.config import AppPaths
from openclaw_desktop.identity import CredentialStore, gateway_key, open_secret_store
from openclaw_desktop.known_gateways import (
    ConnectTarget,
    KnownGateways,
    LastGateway,
    SavedGateways,
    first_run,
    launch_target,
    remember_bundled_choice,
)
from openclaw_desktop.runtime import RuntimeTarget
from tests.helpers.no_keyring import no_keyring


def test_the_first_run_asks_until_a_gateway_was_chosen(tmp_path: Path) -> None:
    """No known gateways file and no URL: ask. Choosing this computer's gateway writes an
    empty list (it is not listed), after which the next launch does not ask."""
    paths = AppPaths.under(tmp_path / "openclaw")
    assert first_run(RuntimeTarget(), paths)
    assert not first_run(RuntimeTarget(url="ws://127.0.0.1:1"), paths), "the URL was given"
    remember_bundled_choice(paths)
    assert KnownGateways(paths.known_gateways_file).load() == []
    assert not first_run(RuntimeTarget(), paths)
    KnownGateways(paths.known_gateways_file).add("lab", "ws://127.0.0.1:2")
    remember_bundled_choice(paths)  # never empties a list that has entries
    assert [g.url for g in KnownGateways(paths.known_gateways_file).load()] == ["ws://127.0.0.1:2"]


def test_the_last_choice_is_used_and_never_holds_the_token(tmp_path: Path) -> None:
    """A remote choice comes back as that URL on the launch's bundled port; its token
    stays out of the file."""
    paths = AppPaths.under(tmp_path / "openclaw")
    chosen = ConnectTarget(url="wss://127.0.0.1:3", token="secret-token", name="lab")
    LastGateway(paths.last_gateway_file).save(chosen)
    assert "secret-token" not in paths.last_gateway_file.read_text(encoding="utf-8")
    launched = launch_target(RuntimeTarget(port=19999), paths)
    assert isinstance(launched, ConnectTarget)
    assert (launched.url, launched.name, launched.port, launched.token) == (
        "wss://127.0.0.1:3",
        "lab",
        19999,
        None,
    )


@pytest.fixture
def file_secrets() -> Iterator[None]:
    """Secrets in the installation's file, never the developer's keyring."""
    with no_keyring():
        yield


@pytest.mark.usefixtures("file_secrets")
def test_saved_gateways_remember_and_forget_in_one_place(tmp_path: Path) -> None:
    """A remote choice is listed first (renamed when known), this computer's is not listed
    but ends the first run; the connected one is the next launch's; forgetting drops the
    entry and the gateway's pin and tokens."""
    paths = AppPaths.under(tmp_path / "openclaw")
    saved = SavedGateways.of(paths)
    assert saved.remember(RuntimeTarget()) == []
    assert not first_run(RuntimeTarget(), paths)
    saved.remember(ConnectTarget(url="wss://10.0.0.7:1", name="Studio"))
    saved.remember(ConnectTarget(url="ws://127.0.0.1:2"))
    listed = saved.remember(ConnectTarget(url="wss://10.0.0.7:1", name="Lab"))
    assert [(g.name, g.url) for g in listed] == [
        ("Lab", "wss://10.0.0.7:1"),
        ("ws://127.0.0.1:2", "ws://127.0.0.1:2"),
    ]
    saved.remember_connected(ConnectTarget(url="wss://10.0.0.7:1", token="tok", name="Lab"))
    assert LastGateway(paths.last_gateway_file).load() == listed[0]

    store = CredentialStore(open_secret_store(paths.secrets_file))
    key = gateway_key("wss://10.0.0.7:1")
    store.save_shared_token(key, "secret")
    assert store.known_gateways() == [key]
    assert [g.url for g in saved.forget("wss://10.0.0.7:1")] == ["ws://127.0.0.1:2"]
    assert CredentialStore(open_secret_store(paths.secrets_file)).known_gateways() == []
    assert [g.url for g in saved.load()] == ["ws://127.0.0.1:2"]
