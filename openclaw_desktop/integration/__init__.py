"""Desktop integration: how this app is started (``command``), its icon (``icon``), the
freedesktop entry, AppStream metadata and ``openclaw://`` handler (``xdg``) and systemd user
units (``systemd``). No Qt: PNG icons are rendered by the UI layer (``ui.icons``)."""
