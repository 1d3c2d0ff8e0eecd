"""``openclaw-desktop settings`` and ``openclaw-desktop doctor``."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys

from openclaw_desktop.cli_integration import integration_status
from openclaw_desktop.config import AppPaths, SettingsStore, setting_keys
from openclaw_desktop.errors import ConfigError, IdentityError
from openclaw_desktop.identity import IdentityStore, open_secret_store
from openclaw_desktop.node import NodeContext, build_surface

__all__ = ["add_settings_parser", "doctor", "settings_command"]


def add_settings_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """The ``settings`` subcommand."""
    settings = sub.add_parser(
        "settings",
        help="show or change settings (a running node applies changes within a second)",
    )
    actions = settings.add_subparsers(dest="action", required=True)
    actions.add_parser("show", help="print the settings in effect as JSON")
    actions.add_parser("keys", help="list every setting with its meaning")
    set_ = actions.add_parser("set", help="change one setting, e.g. `set node.camera on`")
    set_.add_argument("key", help="setting key, e.g. node.camera")
    set_.add_argument("value", help="new value: on/off for switches; 'none' clears a text value")


def settings_command(args: argparse.Namespace, paths: AppPaths) -> int:
    """Run ``settings show|keys|set``."""
    store = SettingsStore(paths.settings_file)
    if args.action == "keys":
        for key, description in setting_keys().items():
            print(f"{key:<24} {description}")
        return 0
    if args.action == "set":
        settings = store.set(args.key, args.value)
        section, name = args.key.split(".", 1)
        print(f"{args.key} = {json.dumps(getattr(getattr(settings, section), name))}")
        return 0
    print(json.dumps(store.load().model_dump(mode="json"), indent=2))
    return 0


def doctor(paths: AppPaths) -> int:
    """What works here and why not: identity, secrets, settings and every node command."""
    store = IdentityStore(paths.identity_file)
    try:
        ident = f"ok ({store.load().device_id})" if store.exists() else "not created yet"
    except IdentityError as exc:
        ident = f"UNUSABLE: {exc}"
    secrets = open_secret_store(paths.secrets_file)
    print(f"identity:      {paths.identity_file}: {ident}")
    print(f"secret store:  {secrets.description}")
    for line in integration_status():
        print(line)
    settings_store = SettingsStore(paths.settings_file)
    try:
        settings = settings_store.load()
        where = str(paths.settings_file) if settings_store.mtime_ns() else "defaults (no file)"
        print(f"settings:      {where}")
    except ConfigError as exc:
        print(f"settings:      UNUSABLE: {exc}", file=sys.stderr)
        return 2
    ctx = NodeContext(settings=lambda: settings.node)
    registry, _ = build_surface(ctx)
    entries = asyncio.run(registry.survey(settings.node.toggles()))
    print("node commands (available here / enabled in settings / advertised to the gateway):")
    for entry in entries:
        spec, avail = entry.spec, entry.availability
        available = "yes" if avail.available else f"no ({avail.reason})"
        enabled = "yes" if entry.enabled else f"no (setting {spec.setting} is off)"
        print(
            f"  {spec.name:<18} available: {available}; enabled: {enabled}; "
            f"advertised: {'yes' if entry.advertised else 'no'}"
        )
    print(
        "Gateways allow only some node commands by default. On the real OpenClaw gateway a "
        "Linux node gets system.run, system.which, system.notify, screen.snapshot and "
        "computer.act; add the others you use to gateway.nodes.commands.allow, e.g. "
        "device.apps, screen.record, camera.list, camera.snap, camera.clip, device.info, "
        "device.status (screen.record, camera.snap and camera.clip are dangerous: they always "
        "need an explicit entry). The bundled gateway takes the same list as --allow."
    )
    return 0
