"""Which node commands the bundled gateway lets through.

The real gateway's command policy (npm ``openclaw`` 2026.9.6: ``dist/node-command-policy-*``,
``dist/node-commands-*``, ``dist/node-pairing-authz-*``, rejection hints in ``dist/nodes-*``):
per-platform defaults (``platform`` and ``deviceFamily`` must agree: ``("linux", None)`` is
*unknown*, see :func:`node_host_platform_metadata`); desktop host commands declarable but
invocable only once approved; :data:`DANGEROUS_COMMANDS` only via ``allow``; ``deny`` always
wins; ``talk.ptt.*`` for Talk-capable nodes; plus what default plugins add. Pure.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Final

__all__ = [
    "ADMIN_APPROVAL_COMMANDS",
    "DANGEROUS_COMMANDS",
    "DESKTOP_HOST_COMMANDS",
    "PLATFORM_DEFAULTS",
    "PLUGIN_PLATFORM_DEFAULTS",
    "PRIVATE_COMMANDS",
    "TALK_PTT_COMMANDS",
    "CommandPolicy",
    "PolicyDenial",
    "default_allowlist",
    "node_host_platform_metadata",
    "normalize_platform_id",
    "required_approve_scopes",
]


def _words(text: str) -> tuple[str, ...]:
    """Split a whitespace-separated list of command names."""
    return tuple(text.split())


_SYSTEM_RUN = _words("system.run.prepare system.run system.which")
_EXEC_APPROVALS = _words("system.execApprovals.get system.execApprovals.set")
_FILE = _words("fs.listDir terminal.upload")
_BROWSER_PROXY = _words("browser.proxy browser.proxy.upload.v1")
_SYSTEM = (*_SYSTEM_RUN, *_EXEC_APPROVALS, *_FILE, "system.notify", *_BROWSER_PROXY)
_SYSTEM += _words("mcp.tools.call.v1 agent.cli.claude.run.v1")
_DESKTOP_SCREEN = _words("screen.snapshot desktop.stream")
_DEVICE = _words("device.info device.status")
_MOBILE_DATA = _words(
    "contacts.search calendar.events reminders.list photos.latest motion.activity motion.pedometer"
)

DESKTOP_HOST_COMMANDS: Final = frozenset(_SYSTEM) - {"system.notify"} | set(_DESKTOP_SCREEN)
"""Declarable on desktop platforms, invocable only after an approved surface holds them."""

DANGEROUS_COMMANDS: Final = _words(
    "camera.snap camera.clip camera.ptz.control screen.record contacts.add calendar.add "
    "reminders.add sms.send sms.search health.summary"
)
"""Never allowed by default; ``gateway.nodes.commands.allow`` opts in.

``desktop.stream`` is *not* here in 2026.9.6 (the docs say it is): the source treats it as a
desktop host command, allowed once an approved surface contains it.
"""

TALK_PTT_COMMANDS: Final = _words("talk.ptt.start talk.ptt.stop talk.ptt.cancel talk.ptt.once")
"""Allowed for any node with a Talk surface."""

_IOS_WATCH_RELAY = _words("watch.status watch.notify")

PRIVATE_COMMANDS: Final = frozenset(
    f"worker.{name}.v1"
    for name in _words(
        "bundle.install launch status cancel environment.stop workspace.exec workspace.prepare "
        "workspace.retain desktop.stream desktop.launch desktop.computer portal.stream"
    )
)
"""Worker controls: never declarable and never invocable."""

_DESKTOP = (*_SYSTEM, *_DESKTOP_SCREEN, "computer.act")
PLATFORM_DEFAULTS: Final[Mapping[str, tuple[str, ...]]] = MappingProxyType(
    {
        "ios": ("camera.list", "location.get", *_DEVICE, *_MOBILE_DATA, "system.notify"),
        "watchos": (*_DEVICE, "system.notify"),
        "android": _words(
            "camera.list location.get notifications.list notifications.actions system.notify "
            "device.info device.status device.permissions device.health device.apps "
            "contacts.search calendar.events callLog.search reminders.list photos.latest "
            "motion.activity motion.pedometer mobile.ui.observe mobile.ui.act"
        ),
        "macos": (
            *_words("camera.list camera.ptz.status location.get device.info device.status"),
            *("device.apps", *_MOBILE_DATA, *_DESKTOP),
        ),
        "linux": _DESKTOP,
        "windows": ("camera.list", "location.get", *_DEVICE, *_DESKTOP),
        "unknown": _words("camera.list location.get system.notify"),
    }
)
"""Built-in defaults per platform id, host commands included (they are filtered at invoke)."""

_OLLAMA = _words("ollama.models ollama.chat")
PLUGIN_PLATFORM_DEFAULTS: Final[Mapping[str, tuple[str, ...]]] = MappingProxyType(
    {
        "linux": ("camera.list", "location.get", *_OLLAMA),  # linux-node, ollama
        "macos": ("canvas.present", "canvas.hide", "canvas.navigate", *_OLLAMA),  # canvas, ollama
        "windows": _OLLAMA,  # ollama
    }
)
"""What the bundled plugins enabled by default in 2026.9.6 add (never on watchOS)."""

ADMIN_APPROVAL_COMMANDS: Final = frozenset(
    (*_BROWSER_PROXY, *_FILE, *_SYSTEM_RUN, *_EXEC_APPROVALS)
)
"""Approving a surface that holds any of these needs ``operator.admin``."""

_REFUSED = "node command not allowed"
_DESKTOP_IDS = frozenset({"macos", "windows", "linux"})
_FAMILIES: dict[str, tuple[str, ...]] = {
    "ios": ("iphone", "ipad", "ios"),
    "watchos": ("apple watch", "watchos"),
    "android": ("android",),
    "macos": ("mac",),
    "windows": ("windows",),
    "linux": ("linux",),
}
"""Device families per platform id (exact values; substrings when no platform is given)."""
_NATIVE_LABELS = {
    "ios": re.compile(r"(?:ios|ipados) \d+(?:\.\d+){0,2}", re.ASCII),
    "watchos": re.compile(r"watchos \d+(?:\.\d+){0,2}", re.ASCII),
    "macos": re.compile(r"macos \d+(?:\.\d+){0,2}", re.ASCII),
    "android": re.compile(r"android \d+(?: \(sdk \d+\))?", re.ASCII),
}
_MAC, _LINUX, _WINDOWS = ("macos", "Mac"), ("linux", "Linux"), ("windows", "Windows")
_LEGACY_DESKTOP = {"darwin": _MAC, "macos": _MAC, "linux": _LINUX, "win32": _WINDOWS}
_LEGACY_DESKTOP["windows"] = _WINDOWS


def _metadata(value: str | None) -> str:
    """Trim, NFKD, drop combining marks and lowercase (the real policy normalization)."""
    trimmed = (value or "").strip()
    decomposed = unicodedata.normalize("NFKD", trimmed)
    return "".join(ch for ch in decomposed if not unicodedata.category(ch).startswith("M")).lower()


def normalize_platform_id(platform: str | None, device_family: str | None) -> str:
    """Map ``client.platform`` and ``client.deviceFamily`` to a policy platform id.

    Returns:
        One of ``ios``, ``watchos``, ``android``, ``macos``, ``windows``, ``linux`` or
        ``unknown``. An exact platform id needs a matching family (``ios``/``android`` also
        accept none); native labels such as ``"iOS 18.1"`` or ``"Android 15 (SDK 35)"`` need
        one too; with no platform at all the family decides.
    """
    raw = _metadata(platform)
    family = _metadata(device_family)
    if raw in _FAMILIES:
        familyless_ok = raw in ("ios", "android") and not family
        return raw if familyless_ok or family in _FAMILIES[raw] else "unknown"
    for platform_id, pattern in _NATIVE_LABELS.items():
        if pattern.fullmatch(raw):
            return platform_id if family in _FAMILIES[platform_id] else "unknown"
    if raw:
        return "unknown"
    for platform_id, tokens in _FAMILIES.items():
        if any(token in family for token in tokens):
            return platform_id
    return "unknown"


def node_host_platform_metadata(platform: str, device_family: str | None) -> tuple[str, str | None]:
    """Fill in desktop metadata the way the real gateway does for ``node-host`` clients.

    The real gateway applies this only to ``client.id == "node-host"`` in ``node`` mode:
    ``("linux", None)`` becomes ``("linux", "Linux")``, ``("darwin", None)`` becomes
    ``("macos", "Mac")``, ``("win32", "")`` becomes ``("windows", "Windows")``. A family that
    names another platform is left alone.
    """
    mapped = _LEGACY_DESKTOP.get(platform)
    if mapped is None:
        return platform, device_family
    family = (device_family or "").strip()
    if family and family.lower() != mapped[1].lower():
        return platform, device_family
    if platform == mapped[0] and family:
        return platform, device_family
    return mapped[0], family or mapped[1]


def _has_talk_surface(caps: Iterable[str], commands: Iterable[str]) -> bool:
    """A node with the ``talk`` cap or any ``talk.*`` command."""
    return any(cap.strip().lower() == "talk" for cap in caps) or any(
        command.strip().lower().startswith("talk.") for command in commands
    )


def required_approve_scopes(commands: Iterable[str]) -> list[str]:
    """The operator scopes needed to approve a node surface holding ``commands``."""
    listed = list(commands)
    if any(command in ADMIN_APPROVAL_COMMANDS for command in listed):
        return ["operator.pairing", "operator.admin"]
    if listed:
        return ["operator.pairing", "operator.write"]
    return ["operator.pairing"]


def default_allowlist(platform: str, device_family: str | None) -> frozenset[str]:
    """What a node of this platform may invoke with no configuration and no approved surface.

    Built-in defaults without the desktop host commands, the iPhone watch relay, and what
    the default plugins add. Talk and approved host commands depend on the node; see
    :meth:`CommandPolicy.allowlist`.
    """
    return CommandPolicy().default_allowlist(platform, device_family)


@dataclass(frozen=True)
class PolicyDenial:
    """Why an invoke is refused, worded like the real gateway (``INVALID_REQUEST``)."""

    message: str
    reason: str
    command: str
    code: str = "INVALID_REQUEST"

    @property
    def details(self) -> dict[str, Any]:
        """The error's ``details``: ``{reason, command}``."""
        return {"reason": self.reason, "command": self.command}


class CommandPolicy:
    """The allowlist of one gateway configuration (``gateway.nodes.commands.allow``/``.deny``)."""

    def __init__(
        self,
        allow: Sequence[str] = (),
        deny: Sequence[str] = (),
        *,
        plugin_defaults: Mapping[str, Sequence[str]] = PLUGIN_PLATFORM_DEFAULTS,
    ) -> None:
        self.allow = tuple(c.strip() for c in allow if c.strip())
        self.deny = frozenset(c.strip() for c in deny if c.strip())
        self._plugin_defaults = plugin_defaults
        self._allowlists: dict[tuple[Any, ...], frozenset[str]] = {}

    @staticmethod
    def required_approve_scopes(commands: Iterable[str]) -> list[str]:
        """See :func:`required_approve_scopes`."""
        return required_approve_scopes(commands)

    def default_allowlist(self, platform: str, device_family: str | None) -> frozenset[str]:
        """See :func:`default_allowlist` (with this policy's allow/deny applied)."""
        return self.allowlist(platform, device_family)

    def allowlist(
        self,
        platform: str,
        device_family: str | None,
        caps: Sequence[str] = (),
        commands: Sequence[str] = (),
        *,
        for_pairing: bool = False,
    ) -> frozenset[str]:
        """The commands a node may use (memoized; see :meth:`_compute_allowlist`)."""
        key = (platform, device_family, tuple(caps), tuple(commands), for_pairing)
        cached = self._allowlists.get(key)
        if cached is None:
            if len(self._allowlists) > 1024:
                self._allowlists.clear()
            cached = self._allowlists[key] = self._compute_allowlist(
                platform, device_family, caps, commands, for_pairing=for_pairing
            )
        return cached

    def _compute_allowlist(
        self,
        platform: str,
        device_family: str | None,
        caps: Sequence[str],
        commands: Sequence[str],
        *,
        for_pairing: bool,
    ) -> frozenset[str]:
        """The commands a node may use.

        Args:
            platform: ``client.platform``.
            device_family: ``client.deviceFamily``.
            caps: The node's caps (a ``talk`` cap enables ``talk.ptt.*``).
            commands: At invoke time, the node's approved commands: on desktop platforms
                the host commands among them become allowed. They also count for Talk.
            for_pairing: The list a pending surface is filtered by: desktop host commands
                are declarable, and ``deny`` does not remove dangerous commands (they are
                only there when ``allow`` names them, and invoking them stays denied).
        """
        platform_id = normalize_platform_id(platform, device_family)
        desktop = platform_id in _DESKTOP_IDS
        base = PLATFORM_DEFAULTS[platform_id]
        if desktop and not for_pairing:
            base = tuple(c for c in base if c not in DESKTOP_HOST_COMMANDS)
        iphone = platform_id == "ios" and _metadata(device_family) == "iphone"
        approved = () if for_pairing or not desktop else commands
        candidates = [
            *base,
            *(_IOS_WATCH_RELAY if iphone else ()),
            *(TALK_PTT_COMMANDS if _has_talk_surface(caps, commands) else ()),
            *(() if platform_id == "watchos" else self._plugin_defaults.get(platform_id, ())),
            *(c for c in approved if c.strip() in DESKTOP_HOST_COMMANDS),
        ]
        dangerous = () if for_pairing else DANGEROUS_COMMANDS
        allowed = {c.strip() for c in candidates if c.strip() and c.strip() not in dangerous}
        allowed.update(self.allow)
        exempt = DANGEROUS_COMMANDS if for_pairing else ()
        allowed -= {c for c in self.deny if c not in exempt}
        return frozenset(allowed - PRIVATE_COMMANDS)

    def filter_declared(
        self,
        platform: str,
        device_family: str | None,
        caps: Sequence[str],
        commands: Sequence[str],
    ) -> list[str]:
        """The declared commands that may enter a pending surface, in declaration order.

        Commands are trimmed and de-duplicated; anything the pairing allowlist does not hold
        is dropped silently, as the real gateway does (it only logs a warning).
        """
        allowed = self.allowlist(platform, device_family, caps, commands, for_pairing=True)
        seen: set[str] = set()
        kept: list[str] = []
        for raw in commands:
            command = raw.strip()
            if command and command not in seen and command in allowed:
                seen.add(command)
                kept.append(command)
        return kept

    def check_invoke(
        self,
        platform: str,
        device_family: str | None,
        caps: Sequence[str],
        command: str,
        *,
        commands: Sequence[str] | None = None,
        pending: Sequence[str] = (),
    ) -> PolicyDenial | None:
        """Whether ``node.invoke`` may forward ``command`` to this node.

        Args:
            platform: The node's ``client.platform`` (quoted in the message as given).
            device_family: The node's ``client.deviceFamily``.
            caps: The node's caps.
            command: The command asked for.
            commands: The node's approved (live) commands. When given, the check is the real
                one: host commands count only if approved, and a command the node does not
                hold is refused. When None, only the allowlist is checked and desktop host
                commands pass it: the caller must check the approved surface itself.
            pending: The node's declared commands awaiting approval (for the message only).

        Returns:
            None when allowed, else the denial with the real message and details.
        """
        name = command.strip()
        if not name:
            return PolicyDenial(f"{_REFUSED}: command required", "command required", command)
        approved = list(commands) if commands is not None else sorted(DESKTOP_HOST_COMMANDS)
        allowed = self.allowlist(platform, device_family, caps, approved)
        if name in PRIVATE_COMMANDS or name not in allowed:
            message = self._not_allowlisted(name, platform)
            return PolicyDenial(message, "command not allowlisted", name)
        if commands is None or name in commands:
            return None
        if commands:
            message = f'{_REFUSED}: the node (platform: {platform}) does not support "{name}"'
            return PolicyDenial(message, "command not declared by node", name)
        if name in pending:
            message = (
                f"{_REFUSED}: the node's declared command surface is pending approval; run "
                "`openclaw nodes pending`, then `openclaw nodes approve <requestId>`"
            )
        else:
            message = f"{_REFUSED}: the node did not declare any supported commands"
        return PolicyDenial(message, "node did not declare commands", name)

    def _not_allowlisted(self, command: str, platform: str) -> str:
        """The real ``buildNodeCommandRejectionHint`` wording for "command not allowlisted"."""
        if command.startswith("talk."):
            return f'{_REFUSED}: "{command}" requires a trusted Talk-capable node'
        if command in self.deny:
            return f'{_REFUSED}: "{command}" is blocked by gateway.nodes.commands.deny'
        if command in DANGEROUS_COMMANDS:
            return f'{_REFUSED}: "{command}" requires explicit gateway.nodes.commands.allow opt-in'
        return f'{_REFUSED}: "{command}" is not in the allowlist for platform "{platform}"'
