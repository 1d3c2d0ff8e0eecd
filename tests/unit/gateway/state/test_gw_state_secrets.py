"""The shared-token file, the meta table, the error texts and the package exports."""

from __future__ import annotations

import importlib
import os
import re
import stat
import threading
from pathlib import Path

import pytest

import gateway.state as state_pkg
from gateway.state import (
    SHARED_TOKEN_FILENAME,
    GatewayState,
    ScopeNotApprovedError,
    StateBusyError,
    StateCorruptError,
    StateVersionError,
    UnknownDeviceError,
    UnknownRequestError,
    read_or_create_shared_token,
)

posix_only = pytest.mark.skipif(os.name != "posix", reason="POSIX file modes")

PUBLIC_MODULES = [
    "bootstrap",
    "devices",
    "errors",
    "meta",
    "sessions",
    "node_records",
    "nodes",
    "pairing",
    "records",
    "secret_files",
    "store",
    "tokens",
]


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_shared_token_is_created_once(tmp_path: Path) -> None:
    """The first call generates a 43-char base64url token; later calls return it unchanged."""
    state_dir = tmp_path / "state"
    token = read_or_create_shared_token(state_dir)
    assert re.fullmatch(r"[A-Za-z0-9_-]{43}", token)
    assert read_or_create_shared_token(state_dir) == token
    assert (state_dir / SHARED_TOKEN_FILENAME).read_text() == token + "\n"
    assert [p.name for p in state_dir.iterdir()] == [SHARED_TOKEN_FILENAME]


@posix_only
def test_shared_token_file_modes(tmp_path: Path) -> None:
    """The token file is 0600 in a 0700 directory; a loosened file is tightened on read."""
    state_dir = tmp_path / "state"
    read_or_create_shared_token(state_dir)
    path = state_dir / SHARED_TOKEN_FILENAME
    assert _mode(state_dir) == 0o700
    assert _mode(path) == 0o600
    os.chmod(path, 0o644)
    read_or_create_shared_token(state_dir)
    assert _mode(path) == 0o600


def test_hand_written_token_is_accepted(tmp_path: Path) -> None:
    """A token the user wrote by hand is used as is, without surrounding whitespace."""
    tmp_path.joinpath(SHARED_TOKEN_FILENAME).write_text("  test-token-123\r\n")
    assert read_or_create_shared_token(tmp_path) == "test-token-123"


@pytest.mark.parametrize(
    "content",
    [b"", b"   \n", b"two words\n", b"\xff\xfe\x00", b"x" * 600, b"tab\there"],
)
def test_unusable_token_file_raises_and_is_kept(tmp_path: Path, content: bytes) -> None:
    """An empty, binary, multi-word or oversized token file raises instead of being replaced."""
    path = tmp_path / SHARED_TOKEN_FILENAME
    path.write_bytes(content)
    with pytest.raises(StateCorruptError) as caught:
        read_or_create_shared_token(tmp_path)
    assert caught.value.path == path
    assert path.read_bytes() == content


def test_concurrent_first_start_agrees_on_one_token(tmp_path: Path) -> None:
    """Threads racing to create the token all get the same one; no temp files remain."""
    state_dir = tmp_path / "state"
    results: list[str] = []
    barrier = threading.Barrier(8)

    def worker() -> None:
        barrier.wait()
        results.append(read_or_create_shared_token(state_dir))

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(results) == 8
    assert len(set(results)) == 1
    assert [p.name for p in state_dir.iterdir()] == [SHARED_TOKEN_FILENAME]


def test_meta_get_set_delete(tmp_path: Path) -> None:
    """meta stores, replaces and deletes string values; a blank key is refused."""
    with GatewayState(tmp_path) as state:
        assert state.meta.get("k") is None
        state.meta.set("k", "1")
        state.meta.set("k", "2")
        assert state.meta.get("k") == "2"
        assert state.meta.delete("k")
        assert not state.meta.delete("k")
        with pytest.raises(ValueError, match="key"):
            state.meta.set(" ", "x")


def test_error_texts_carry_their_fields(tmp_path: Path) -> None:
    """Every error computes a helpful str() from its attributes."""
    path = tmp_path / "gateway.sqlite3"
    assert str(path) in str(StateCorruptError(path, "bad"))
    assert "schema version 3" in str(StateVersionError(path, 3, 1))
    assert "250 ms" in str(StateBusyError(path, 250))
    assert str(UnknownDeviceError("d")) == "device d is not paired"
    assert "'node'" in str(UnknownDeviceError("d", "node"))
    assert "'r1'" in str(UnknownRequestError("r1"))
    assert "'operator.admin'" in str(ScopeNotApprovedError("d", "operator", "operator.admin"))


def test_package_reexports_the_union_of_module_all() -> None:
    """gateway.state.__all__ is exactly the public modules' __all__, and every name resolves."""
    names: set[str] = set()
    for name in PUBLIC_MODULES:
        module = importlib.import_module(f"gateway.state.{name}")
        names.update(module.__all__)
        for public in module.__all__:
            assert getattr(state_pkg, public) is getattr(module, public)
    assert set(state_pkg.__all__) == names
    assert len(state_pkg.__all__) == len(names)


def test_modules_stay_small() -> None:
    """Every module of the package is under 400 lines."""
    for path in Path(state_pkg.__file__).parent.glob("*.py"):
        assert len(path.read_text(encoding="utf-8").splitlines()) < 400, path.name


def test_new_tokens_never_start_with_a_dash(monkeypatch: pytest.MonkeyPatch) -> None:
    """A token pasted after ``--token`` must not read as an option (CI found this the hard way)."""
    from gateway.state import _codec

    draws = iter([b"\xfb" + bytes(31), b"\x01" * 32])  # first encodes to "-...", second does not
    monkeypatch.setattr(_codec.secrets, "token_bytes", lambda _n: next(draws))
    token = _codec.new_token()
    assert not token.startswith("-")
    assert len(token) == 43
