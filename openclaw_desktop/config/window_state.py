"""What the window keeps between launches that is not a setting: the unsent draft of each
session, per gateway (``window-state.json`` in the state folder).

Drafts are the user's words, so a file that exists but cannot be read is never overwritten:
:meth:`WindowStateStore.load` raises :class:`~openclaw_desktop.errors.ConfigError` naming
it, and the window then keeps drafts in memory only.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

from openclaw_desktop.errors import ConfigError

__all__ = ["MAX_DRAFT_CHARS", "WindowStateStore"]

#: A draft longer than this is kept whole in the window but saved cut to this length.
MAX_DRAFT_CHARS = 100_000


class WindowStateStore:
    """``window-state.json``: ``{"version": 1, "drafts": {gateway: {session: text}}}``,
    written atomically, mode 0600 (drafts may be private)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def load(self) -> dict[str, dict[str, str]]:
        """Every saved draft by gateway, then session (empty when there is no file yet).

        Raises:
            ConfigError: The file exists but is not a window-state file.
        """
        try:
            raw = self.path.read_bytes()
        except FileNotFoundError:
            return {}
        except OSError as exc:
            raise ConfigError(f"cannot read {self.path}: {exc.strerror or exc}") from exc
        try:
            data: Any = json.loads(raw)
        except (ValueError, UnicodeDecodeError) as exc:
            raise ConfigError(f"{self.path} is not valid JSON: {exc}") from exc
        drafts = data.get("drafts") if isinstance(data, dict) else None
        if not isinstance(drafts, dict) or not all(
            isinstance(sessions, dict)
            and all(isinstance(k, str) and isinstance(v, str) for k, v in sessions.items())
            for sessions in drafts.values()
        ):
            raise ConfigError(f"{self.path} is not a window-state file (drafts by gateway)")
        return {str(gateway): dict(sessions) for gateway, sessions in drafts.items()}

    def draft(self, gateway: str, session: str) -> str:
        """The saved draft of one session ('' when none)."""
        return self.load().get(gateway, {}).get(session, "")

    def set_draft(self, gateway: str, session: str, text: str) -> None:
        """Save (or, when ``text`` is blank, forget) one session's draft.

        Raises:
            ConfigError: The file exists but cannot be read (it is left as it is).
        """
        drafts = self.load()
        sessions = drafts.setdefault(gateway, {})
        if text.strip():
            sessions[session] = text[:MAX_DRAFT_CHARS]
        else:
            sessions.pop(session, None)
        if not sessions:
            drafts.pop(gateway, None)
        self._save({"version": 1, "drafts": drafts})

    def _save(self, data: dict[str, Any]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".window-state-", dir=self.path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump(data, handle, ensure_ascii=False, indent=1)
                handle.write("\n")
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(tmp, self.path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
