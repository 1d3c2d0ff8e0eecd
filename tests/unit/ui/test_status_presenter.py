"""The status text and the error cards are pure functions of the transport state."""

from __future__ import annotations

from openclaw_desktop.errors import (
    AuthError,
    ConfigError,
    ConnectionClosed,
    PairingRequired,
    ReconnectPaused,
    TrustError,
)
from openclaw_desktop.session import ErrorCategory
from openclaw_desktop.supervisor import SupervisorState, SupervisorStatus
from openclaw_desktop.transport import ConnectionState, ConnectionStatus
from ui.presenters.failure import CardAction, card_for_error, card_for_gateway
from ui.presenters.status import plain_reason, session_line, status_lines

TOKEN_MISMATCH = AuthError(
    "INVALID_REQUEST",
    "unauthorized: gateway token mismatch (set gateway.remote.token)",
    {"code": "AUTH_TOKEN_MISMATCH"},
    method="connect",
)


def test_each_state_has_its_words() -> None:
    """connecting / connected to / reconnecting in N s / waiting / paused: why / stopped."""
    now = 100.0
    cases = {
        ConnectionStatus(ConnectionState.CONNECTING): "connecting…",
        ConnectionStatus(ConnectionState.CONNECTED): "connected to 127.0.0.1:18789",
        ConnectionStatus(
            ConnectionState.RECONNECTING,
            2,
            4.0,
            ErrorCategory.NETWORK,
            ConnectionClosed(1006, ""),
            retry_at=now + 3.2,
        ): "reconnecting in 4 s (the connection was lost)",
        ConnectionStatus(
            ConnectionState.PAUSED, 0, None, ErrorCategory.AUTH, TOKEN_MISMATCH
        ): "paused: needs action — the gateway refused this token",
        ConnectionStatus(ConnectionState.CLOSED): "stopped",
    }
    for status, text in cases.items():
        line = session_line("chat", status, now, "127.0.0.1:18789")
        assert line.text == text
        assert line.state is status.state
    assert session_line("node", None, now).label == "node: off"


def test_the_countdown_follows_the_clock() -> None:
    """The same status reads one second less a second later, and "now" at the deadline."""
    status = ConnectionStatus(ConnectionState.RECONNECTING, 1, 5.0, retry_at=50.0)
    assert session_line("chat", status, 45.0, "").text.startswith("reconnecting in 5 s")
    assert session_line("chat", status, 46.0, "").text.startswith("reconnecting in 4 s")
    assert session_line("chat", status, 50.5, "").text.startswith("reconnecting now")


def test_waits_offer_reconnect_and_pauses_need_action() -> None:
    """A wait is marked (Reconnect now applies); a pause needs the user."""
    waiting = ConnectionStatus(ConnectionState.RECONNECTING, retry_at=1.0)
    approval = ConnectionStatus(
        ConnectionState.AWAITING_APPROVAL,
        error=PairingRequired("NOT_PAIRED", "pairing required", {"requestId": "r-1"}),
    )
    paused = ConnectionStatus(ConnectionState.PAUSED, error=TOKEN_MISMATCH)
    chat, node = status_lines(waiting, approval, 0.0, "h:1")
    assert chat.waiting and not chat.needs_action
    assert node.waiting and node.text == "waiting for approval (request r-1)"
    line = session_line("chat", paused, 0.0)
    assert line.needs_action and line.reason == "the gateway refused this token"


def test_plain_words_never_show_the_frame() -> None:
    """No code, no detail code, no gateway message in the plain reason."""
    words = plain_reason(ReconnectPaused(TOKEN_MISMATCH))
    assert words == "the gateway refused this token"
    assert "AUTH_" not in words and "INVALID_REQUEST" not in words
    mismatch = TrustError("mismatch", "h:1", expected="aa", actual="bb")
    assert plain_reason(mismatch) == "the gateway's certificate changed"
    assert plain_reason(ConnectionClosed(None, "refused")) == "the gateway cannot be reached"


def test_a_refused_token_offers_edit_retry_choose_and_details() -> None:
    """Remote gateway, wrong token: every action that fits; the raw text only in details."""
    card = card_for_error(ReconnectPaused(TOKEN_MISMATCH), bundled=False, where="gw:18789")
    assert card.title == "The gateway refused this token"
    assert card.actions == (
        CardAction.EDIT_TOKEN,
        CardAction.RETRY,
        CardAction.CHOOSE_GATEWAY,
        CardAction.SHOW_DETAILS,
    )
    assert "AUTH_TOKEN_MISMATCH" not in card.title + card.body
    assert "AUTH_TOKEN_MISMATCH" in card.details


def test_the_bundled_gateway_has_no_token_to_edit() -> None:
    """The app's own gateway: Retry, not Edit token; a failed start says it did not start."""
    card = card_for_error(TOKEN_MISMATCH, bundled=True)
    assert CardAction.EDIT_TOKEN not in card.actions
    start = card_for_error(ConfigError("the gateway exited at start"), bundled=True)
    assert start.title == "The bundled gateway did not start"
    unreachable = card_for_error(ConnectionClosed(None, ""), bundled=False, where="gw:1")
    assert unreachable.actions[0] is CardAction.RECONNECT_NOW


def test_keeps_stopping_card_carries_the_last_lines() -> None:
    """Only a supervisor that gave up makes a card; its details are the last log lines."""
    assert card_for_gateway(SupervisorStatus(SupervisorState.RESTARTING)) is None
    failed = SupervisorStatus(
        SupervisorState.FAILED,
        restarts=5,
        exit_code=-9,
        last_lines=("gateway ready", "Traceback: boom"),
        reason="the gateway stopped 6 times in a minute",
    )
    card = card_for_gateway(failed)
    assert card is not None
    assert card.title == "The bundled gateway keeps stopping"
    assert card.details.endswith("Traceback: boom")
    assert CardAction.RETRY in card.actions
    # The sentence names the button there is (it said "Try again" beside a Retry button).
    assert "Retry, or choose another gateway" in card.body


def test_a_reason_both_sessions_share_is_said_once() -> None:
    """Both reconnecting because the gateway is gone: the chat's line says why, the node's
    line only its countdown (the status bar keeps room for messages); different reasons are
    both said."""
    gone = ConnectionStatus(
        ConnectionState.RECONNECTING,
        1,
        2.0,
        ErrorCategory.NETWORK,
        ConnectionClosed(None, "refused"),
        retry_at=2.0,
    )
    chat, node = status_lines(gone, gone, 0.0, "h:1")
    assert chat.text == "reconnecting in 2 s (the gateway cannot be reached)"
    assert node.text == "reconnecting in 2 s"
    assert node.reason == chat.reason and node.waiting
    lost = ConnectionStatus(
        ConnectionState.RECONNECTING,
        1,
        2.0,
        ErrorCategory.NETWORK,
        ConnectionClosed(1006, ""),
        retry_at=2.0,
    )
    _, node = status_lines(gone, lost, 0.0, "h:1")
    assert node.text == "reconnecting in 2 s (the connection was lost)"
