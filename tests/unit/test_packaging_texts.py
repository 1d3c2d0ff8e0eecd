"""Unit tests: the generated desktop entry, AppStream metainfo, icon and systemd units, the
quoting of commands inside them, and the files kept in packaging/."""

from __future__ import annotations

import argparse
import re
import shlex
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from gateway.service import ServiceArgsError, run_args
from openclaw_desktop import __version__
from openclaw_desktop.integration.command import (
    EMBEDDED_ALLOW,
    bundled_gateway_args,
    desktop_exec,
    systemd_exec,
)
from openclaw_desktop.integration.icon import ICON_SVG
from openclaw_desktop.integration.systemd import GATEWAY_UNIT, gateway_unit, node_unit
from openclaw_desktop.integration.xdg import (
    APP_ID,
    DESKTOP_FILE,
    RELEASES,
    SCHEME_MIME,
    autostart_entry,
    desktop_entry,
    metainfo,
)
from tools.write_packaging_files import packaging_files


def _desktop_unquote(value: str) -> list[str]:
    """Split an Exec value the way the Desktop Entry specification says a launcher must."""
    # 1. The value is a string: \\ \s \n \t \r are its escapes; any other is an error.
    text, i = "", 0
    while i < len(value):
        if value[i] == "\\":
            text += {"\\": "\\", "s": " ", "n": "\n", "t": "\t", "r": "\r"}[value[i + 1]]
            i += 2
        else:
            text += value[i]
            i += 1
    # 2. Arguments are separated by spaces; "..." quotes one, with \" \` \$ \\ escaped.
    args: list[str] = []
    i, current, quoted, have = 0, "", False, False
    while i < len(text):
        c = text[i]
        if quoted:
            if c == "\\":
                assert text[i + 1] in '"`$\\', f"undefined escape \\{text[i + 1]}"
                current += text[i + 1]
                i += 2
                continue
            if c == '"':
                quoted = False
            else:
                current += c
        elif c == '"':
            quoted, have = True, True
        elif c == " ":
            if have or current:
                args.append(current)
            current, have = "", False
        else:
            assert c not in "'\\><~|&;$*?#()`\t\n", f"reserved character {c!r} unquoted"
            current += c
        i += 1
    assert not quoted, "unterminated quote"
    if have or current:
        args.append(current)
    return [a.replace("%%", "%") for a in args]


@pytest.mark.parametrize(
    "argv",
    [
        ["/usr/bin/openclaw-desktop"],
        ["/home/ann/my apps/venv/bin/openclaw-desktop"],
        ["/opt/o'claw/bin/python", "-m", "ui.launcher"],
        ['/tmp/we"ird/$HOME/`x`/back\\slash/100%/openclaw-desktop'],
        ["/tmp/semi;colon&(paren)|pipe*star?q#hash~tilde<lt>gt/bin/app", ""],
    ],
)
def test_desktop_exec_round_trips(argv: list[str]) -> None:
    value = desktop_exec(argv, "%u")
    assert value.endswith(" %u")
    assert _desktop_unquote(value.removesuffix(" %u")) == argv


def test_desktop_exec_refuses_line_breaks() -> None:
    with pytest.raises(ValueError, match="line break"):
        desktop_exec(["/bin/x\nExec=evil"])


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["/usr/bin/app", "gateway", "run"], "/usr/bin/app gateway run"),
        (["/my apps/app", "--x=1"], '"/my apps/app" --x=1'),
        (
            ["/a/app", "--display-name", "Ann's 100% $HOME"],
            '/a/app --display-name "Ann\'s 100%% $$HOME"',
        ),
        (["/a/app", 'say "hi"'], '/a/app "say \\"hi\\""'),
        (["/a/app", "a;b"], '/a/app "a;b"'),
    ],
)
def test_systemd_exec_quotes_specifiers_variables_and_spaces(
    argv: list[str], expected: str
) -> None:
    assert systemd_exec(argv) == expected


def test_systemd_exec_needs_an_absolute_executable() -> None:
    with pytest.raises(ValueError, match="absolute"):
        systemd_exec(["openclaw-desktop", "node"])
    with pytest.raises(ValueError, match="line break"):
        systemd_exec(["/bin/app", "x\nExecStartPre=/bin/evil"])


def _keys(entry: str) -> dict[str, str]:
    lines = entry.splitlines()
    assert lines[0] == "[Desktop Entry]"
    return dict(line.split("=", 1) for line in lines[1:])


def test_desktop_entry_handles_openclaw_links() -> None:
    keys = _keys(desktop_entry(["/opt/openclaw desktop/openclaw-desktop"]))
    assert keys["Exec"] == '"/opt/openclaw desktop/openclaw-desktop" %u'
    assert keys["MimeType"] == f"{SCHEME_MIME};"
    assert keys["Icon"] == "openclaw-desktop"
    assert keys["Type"] == "Application"


def test_autostart_entry_is_the_same_app_without_a_url() -> None:
    app = _keys(desktop_entry(["/usr/bin/openclaw-desktop"]))
    auto = _keys(autostart_entry(["/usr/bin/openclaw-desktop"]))
    assert auto["Exec"] == "/usr/bin/openclaw-desktop"
    assert "%" not in auto["Exec"]
    assert auto["X-GNOME-Autostart-enabled"] == "true"
    for key in ("Name", "Comment", "Icon", "Type", "Terminal"):
        assert auto[key] == app[key]


def test_metainfo_names_this_version_and_the_desktop_entry() -> None:
    root = ET.fromstring(metainfo())
    assert root.get("type") == "desktop-application"
    assert root.findtext("id") == APP_ID
    assert root.findtext("launchable") == DESKTOP_FILE
    newest = root.find("releases/release")
    assert newest is not None
    assert newest.get("version") == __version__, "add the new version to xdg.RELEASES"
    assert RELEASES[0][0] == __version__
    assert [m.text for m in root.iter("mediatype")] == [SCHEME_MIME]


def test_icon_is_a_square_svg() -> None:
    root = ET.fromstring(ICON_SVG)
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    assert root.get("viewBox") == "0 0 512 512"
    assert root.get("width") == root.get("height") == "512"


def test_packaging_files_are_up_to_date() -> None:
    for path, text in packaging_files().items():
        assert path.read_text(encoding="utf-8") == text, (
            f"{path} is out of date: run .venv/bin/python tools/write_packaging_files.py"
        )
    entry = Path(__file__).resolve().parents[2] / "packaging" / "linux" / DESKTOP_FILE
    assert "Exec=openclaw-desktop %u\n" in entry.read_text(encoding="utf-8")


def _unit(text: str) -> dict[str, list[str]]:
    keys: dict[str, list[str]] = {}
    for line in text.splitlines():
        if "=" in line and not line.startswith("["):
            key, value = line.split("=", 1)
            keys.setdefault(key, []).append(value)
    return keys


def test_gateway_unit() -> None:
    text = gateway_unit(
        bundled_gateway_args(18790),
        argv=["/home/ann/.venv/bin/openclaw-desktop"],
        environment={"OPENCLAW_DESKTOP_HOME": "/home/ann/oc 50%"},
    )
    keys = _unit(text)
    assert keys["ExecStart"] == [
        "/home/ann/.venv/bin/openclaw-desktop gateway run --port 18790 --allow "
        + ",".join(EMBEDDED_ALLOW)
    ]
    assert keys["Restart"] == ["on-failure"]
    assert keys["WantedBy"] == ["default.target"]
    assert 'OPENCLAW_DESKTOP_HOME=/home/ann/oc 50%%"' in keys["Environment"][-1]
    assert re.search(r"^\[Unit\]\n.*^\[Service\]\n.*^\[Install\]\n", text, re.S | re.M)


def test_node_unit_runs_after_the_gateway() -> None:
    keys = _unit(
        node_unit(
            ["--url", "wss://gw.example:18789", "--display-name", "Ann's laptop"],
            argv=["/usr/bin/openclaw-desktop"],
            environment={},
        )
    )
    assert shlex.split(keys["ExecStart"][0]) == [
        "/usr/bin/openclaw-desktop",
        "node",
        "--url",
        "wss://gw.example:18789",
        "--display-name",
        "Ann's laptop",
    ]
    assert GATEWAY_UNIT in keys["After"]
    assert keys["Restart"] == ["on-failure"]


def test_units_refuse_environment_with_line_breaks() -> None:
    with pytest.raises(ValueError, match="line break"):
        gateway_unit([], argv=["/bin/app"], environment={"OPENCLAW_DESKTOP_HOME": "/a\n[x]"})


def _run_namespace(**overrides: object) -> argparse.Namespace:
    defaults: dict[str, object] = {
        "state_dir": None,
        "bind": "loopback",
        "port": 18789,
        "tls": False,
        "auth": "token",
        "password": None,
        "allow": [],
        "deny": [],
        "mdns": None,
        "mdns_interfaces": None,
        "manual_pairing": False,
        "display_name": None,
        "trusted_proxy": [],
        "allow_real_ip_fallback": False,
    }
    return argparse.Namespace(**{**defaults, **overrides})


def test_gateway_service_args_keep_the_options_and_the_embedded_allowlist() -> None:
    args = run_args(
        _run_namespace(
            state_dir="/srv/gw",
            bind="lan",
            tls=True,
            allow=["canvas.present", "device.info"],
            deny=["camera.clip"],
            display_name="Studio",
            trusted_proxy=["10.0.0.1", "fd00::/64"],
        )
    )
    assert args[0] == "--state-dir=/srv/gw"
    assert args[1:3] == ["run", "--port"]
    allow = args[args.index("--allow") + 1].split(",")
    assert allow == [*EMBEDDED_ALLOW, "canvas.present"]
    assert args[args.index("--bind") + 1] == "lan"
    assert "--tls" in args
    assert args[args.index("--deny") + 1] == "camera.clip"
    assert args[args.index("--display-name") + 1] == "Studio"
    proxies = [args[i + 1] for i, a in enumerate(args) if a == "--trusted-proxy"]
    assert proxies == ["10.0.0.1", "fd00::/64"]
    assert "--allow-real-ip-fallback" not in args


def test_gateway_service_refuses_a_password_in_the_unit() -> None:
    with pytest.raises(ServiceArgsError, match="readable in the unit file"):
        run_args(_run_namespace(auth="password", password="hunter2"))
