"""The shared gateway token, kept in its own owner-only file ``<state_dir>/gateway-token``.

It is a secret every operator client is configured with, so it is generated once and then
never changed behind the user's back: a damaged file raises instead of being replaced.
"""

from __future__ import annotations

from pathlib import Path

from gateway.state._codec import new_token
from gateway.state._files import ensure_private_dir, ensure_private_file, write_new_file
from gateway.state.errors import StateCorruptError

__all__ = ["SHARED_TOKEN_FILENAME", "read_or_create_shared_token"]

#: The shared-token file inside the state directory.
SHARED_TOKEN_FILENAME = "gateway-token"

_MAX_TOKEN_CHARS = 512


def _read_token(path: Path) -> str:
    ensure_private_file(path)  # tightens a file someone made group/world readable
    with open(path, "rb") as handle:
        data = handle.read(_MAX_TOKEN_CHARS * 4 + 1)
    try:
        token = data.decode("utf-8").strip()
    except UnicodeDecodeError as exc:
        raise StateCorruptError(path, "the shared token is not UTF-8 text") from exc
    if not token:
        raise StateCorruptError(path, "the shared token file is empty")
    if len(token) > _MAX_TOKEN_CHARS:
        raise StateCorruptError(path, f"the shared token is longer than {_MAX_TOKEN_CHARS} chars")
    if not token.isprintable() or any(char.isspace() for char in token):
        raise StateCorruptError(path, "the shared token contains spaces or control characters")
    return token


def read_or_create_shared_token(state_dir: Path) -> str:
    """The shared gateway token, generated on first use.

    A new token is 32 random bytes as unpadded base64url, written atomically to a 0600 file
    (the directory is made 0700). A token the user put in the file by hand is accepted as long
    as it is one line of printable, space-free text; surrounding whitespace is ignored.

    Raises:
        StateCorruptError: The file exists but holds no usable token.
        OSError: The file cannot be read or written.
    """
    ensure_private_dir(state_dir)
    path = state_dir / SHARED_TOKEN_FILENAME
    if not path.exists():
        token = new_token()
        if write_new_file(path, (token + "\n").encode("ascii")):
            return token
    return _read_token(path)
