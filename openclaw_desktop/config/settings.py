"""The user's settings: one pydantic schema declaring every option, loaded from and saved to
``settings.json`` in the config folder.

A missing file means the defaults. A file that exists but cannot be parsed is never
overwritten: loading fails with :class:`~openclaw_desktop.errors.ConfigError` naming the file,
so a typo cannot silently turn the camera on or a setting back to its default.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from openclaw_desktop.config.discovery import DiscoverySettings
from openclaw_desktop.errors import ConfigError

__all__ = [
    "DiscoverySettings",
    "NodeSettings",
    "Settings",
    "SettingsStore",
    "UiSettings",
    "setting_keys",
]


class NodeSettings(BaseModel):
    """What this computer offers the agent as a node. Privacy-sensitive sources are off.

    Each on/off field is a capability of ``openclaw_desktop.node.capabilities`` (same name,
    same default); the other fields tune one of them.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    display_name: str | None = Field(
        None,
        description="This computer's name on the gateway (empty: the host name)",
        max_length=64,
    )
    notifications: bool = Field(True, description="Show system.notify as desktop notifications")
    camera: bool = Field(False, description="Let the agent use the camera (camera.*)")
    camera_source: str | None = Field(
        None,
        description="Camera to use: a device index (0), a V4L2 path (/dev/video2) or a "
        "stream URL (rtsp://..., http://.../mjpeg) or a video file; empty means every local "
        "camera",
        max_length=2048,
    )
    screen: bool = Field(
        False,
        description="Let the agent take screenshots and record the screen "
        "(screen.snapshot, screen.record)",
    )
    microphone: bool = Field(False, description="Let the agent record push-to-talk (talk.ptt.*)")
    microphone_device: str | None = Field(
        None, description="Input device name or index; empty means the default input"
    )
    exec: bool = Field(
        False,
        description="Let the agent run commands on this computer (system.run, system.which), "
        "as the exec approvals document allows",
    )
    location: bool = Field(
        False, description="Let the agent read this computer's location (location.get)"
    )
    location_bus: str | None = Field(
        None,
        description="D-Bus address of the GeoClue2 location service; empty means the system bus",
        max_length=2048,
    )
    installed_apps: bool = Field(
        False, description="Let the agent list the installed applications (device.apps)"
    )
    computer: bool = Field(
        False,
        description="Let the agent control this computer's pointer and keyboard "
        "(computer.act, X11 only; needs Screen for its screenshots)",
    )

    def toggles(self) -> dict[str, bool]:
        """The on/off settings by name: what the command registry gates on.

        Every on/off field of this section is one capability of the node's table
        (``openclaw_desktop.node.capabilities``, which a test checks against this schema);
        there is no second list of them here.
        """
        return {
            name: value
            for name in type(self).model_fields
            if isinstance(value := getattr(self, name), bool)
        }


class UiSettings(BaseModel):
    """The desktop window's own preferences."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    notify_replies: bool = Field(
        True, description="Notify when a reply finishes while the window is hidden"
    )
    start_at_login: bool = Field(False, description="Start OpenClaw Desktop when you log in")
    theme: Literal["system", "light", "dark"] = Field(
        "system", description="Colours: system (follow the desktop), light or dark"
    )


class Settings(BaseModel):
    """All settings of one installation."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    version: int = Field(1, ge=1, le=1)
    node: NodeSettings = NodeSettings()
    ui: UiSettings = UiSettings()
    discovery: DiscoverySettings = DiscoverySettings()


_SECTIONS: dict[str, type[BaseModel]] = {
    "node": NodeSettings,
    "ui": UiSettings,
    "discovery": DiscoverySettings,
}


def setting_keys() -> dict[str, str]:
    """Every settable key (``node.camera``, ``ui.start_at_login``) with its description."""
    return {
        f"{section}.{name}": field.description or ""
        for section, model in _SECTIONS.items()
        for name, field in model.model_fields.items()
    }


def _coerce(raw: str, current: Any) -> Any:
    """A command-line string as the type of the setting it replaces."""
    lowered = raw.strip().lower()
    if isinstance(current, bool):
        if lowered in ("1", "true", "yes", "on"):
            return True
        if lowered in ("0", "false", "no", "off"):
            return False
        raise ConfigError(f"expected on/off (true/false), got {raw!r}")
    if lowered in ("", "none", "null", "default"):
        return None
    return raw


class SettingsStore:
    """``settings.json``: atomic writes, loud on corruption."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def mtime_ns(self) -> int | None:
        """When the file last changed (None when absent): cheap change detection."""
        try:
            return self.path.stat().st_mtime_ns
        except FileNotFoundError:
            return None

    def load(self) -> Settings:
        """The saved settings, or the defaults when there is no file yet.

        Raises:
            ConfigError: The file exists but is not valid settings JSON.
        """
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            return Settings()
        except OSError as exc:
            raise ConfigError(f"cannot read {self.path}: {exc.strerror or exc}") from exc
        try:
            return Settings.model_validate_json(data)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(part) for part in first["loc"]) or "(file)"
            raise ConfigError(
                f"{self.path} is not valid: {where}: {first['msg']}. Fix or delete the file "
                "(deleting restores the defaults)."
            ) from exc

    def save(self, settings: Settings) -> None:
        """Write atomically (temporary file, fsync, rename), mode 0600."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        payload = json.dumps(settings.model_dump(mode="json"), indent=2) + "\n"
        fd, tmp = tempfile.mkstemp(prefix=".settings-", dir=self.path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(payload)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(tmp, self.path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    def set(self, key: str, raw: str) -> Settings:
        """Change one setting from its command-line text and save; returns the new settings.

        Raises:
            ConfigError: Unknown key, a value of the wrong kind, or an unreadable file.
        """
        section, _, name = key.partition(".")
        model = _SECTIONS.get(section)
        if model is None or name not in model.model_fields:
            known = ", ".join(setting_keys())
            raise ConfigError(f"unknown setting {key!r}; known settings: {known}")
        settings = self.load()
        current: BaseModel = getattr(settings, section)
        value = _coerce(raw, getattr(current, name))
        try:
            changed = model.model_validate({**current.model_dump(), name: value})
        except ValidationError as exc:
            raise ConfigError(f"{key}: {exc.errors()[0]['msg']}") from exc
        updated = settings.model_copy(update={section: changed})
        self.save(updated)
        return updated
