"""Dialogs of the desktop app: TLS trust, exec approvals (the gateway's and this node's own
*Allow command?*) and pairing.

Each dialog refuses or defers unless the user acts (the safe button is the default and
Escape never grants anything). The ``ask_*`` coroutines show a dialog with ``open()`` and
await it, so they can be awaited on the qasync loop (never ``exec()``).
"""

from ui.dialogs.approval import ApprovalDialog, ask_approval
from ui.dialogs.exec_prompt import ExecPromptDialog, ask_exec
from ui.dialogs.pairing import PairingRequestDialog, PairingWaitPanel, ask_pairing
from ui.dialogs.trust import PinChangedDialog, TrustDialog, ask_trust, await_dialog

__all__ = [
    "ApprovalDialog",
    "ExecPromptDialog",
    "PairingRequestDialog",
    "PairingWaitPanel",
    "PinChangedDialog",
    "TrustDialog",
    "ask_approval",
    "ask_exec",
    "ask_pairing",
    "ask_trust",
    "await_dialog",
]
