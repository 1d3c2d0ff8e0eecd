"""Where OpenClaw Desktop keeps its files.

By default the platformdirs locations for the app name ``openclaw-desktop``. Setting
``OPENCLAW_DESKTOP_HOME`` puts everything under one folder instead (tests, portable installs,
several instances side by side).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import platformdirs

__all__ = ["APP_NAME", "HOME_ENV", "AppPaths"]

APP_NAME = "openclaw-desktop"
HOME_ENV = "OPENCLAW_DESKTOP_HOME"


@dataclass(frozen=True, slots=True)
class AppPaths:
    """The folders of one installation."""

    config_dir: Path
    data_dir: Path
    state_dir: Path
    cache_dir: Path

    @classmethod
    def default(cls) -> AppPaths:
        """The folders for this user, honouring ``OPENCLAW_DESKTOP_HOME``."""
        home = os.environ.get(HOME_ENV)
        if home:
            return cls.under(Path(home))
        return cls(
            config_dir=Path(platformdirs.user_config_dir(APP_NAME, appauthor=False)),
            data_dir=Path(platformdirs.user_data_dir(APP_NAME, appauthor=False)),
            state_dir=Path(platformdirs.user_state_dir(APP_NAME, appauthor=False)),
            cache_dir=Path(platformdirs.user_cache_dir(APP_NAME, appauthor=False)),
        )

    @classmethod
    def under(cls, root: Path) -> AppPaths:
        """All folders below one root."""
        return cls(
            config_dir=root / "config",
            data_dir=root / "data",
            state_dir=root / "state",
            cache_dir=root / "cache",
        )

    @property
    def identity_file(self) -> Path:
        """The device identity (Ed25519 key), mode 0600."""
        return self.data_dir / "identity" / "device.json"

    @property
    def gateway_state_dir(self) -> Path:
        """The bundled gateway's state folder (its SQLite database, token, TLS key)."""
        return self.state_dir / "gateway"

    @property
    def gateway_token_file(self) -> Path:
        """The bundled gateway's shared token, mode 0600."""
        return self.gateway_state_dir / "gateway-token"

    @property
    def settings_file(self) -> Path:
        """The user's settings (``settings.json``)."""
        return self.config_dir / "settings.json"

    @property
    def window_state_file(self) -> Path:
        """What the window keeps between launches (the sessions' drafts)."""
        return self.state_dir / "window-state.json"

    @property
    def known_gateways_file(self) -> Path:
        """Gateways the user connected to (names and URLs; never tokens)."""
        return self.config_dir / "known_gateways.json"

    @property
    def last_gateway_file(self) -> Path:
        """The gateway chosen last (the next launch connects to it; never a token)."""
        return self.config_dir / "last_gateway.json"

    @property
    def log_dir(self) -> Path:
        """Where the window's log file is kept (Help > Logs folder opens it)."""
        return self.state_dir / "logs"

    @property
    def secrets_file(self) -> Path:
        """The fallback secret store used when no keyring backend exists, mode 0600."""
        return self.data_dir / "secrets.json"
