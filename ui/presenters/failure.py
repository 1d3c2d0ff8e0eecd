"""What the error card says and offers, without the widgets: a failure in plain words
("The gateway refused this token") with the actions that fit it, and the raw text only
behind *Show details*. Pure functions of the error (or the supervisor's status)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from openclaw_desktop.errors import (
    ConfigError,
    ConnectionClosed,
    GatewayError,
    OpenClawError,
    ReconnectPaused,
    TrustError,
)
from openclaw_desktop.protocol import ConnectErrorCode
from openclaw_desktop.supervisor import SupervisorState, SupervisorStatus
from ui.presenters.status import plain_reason

__all__ = ["CardAction", "FailureCard", "card_for_error", "card_for_gateway"]

#: The raw text behind *Show details* is capped (a gateway chooses its error messages).
_MAX_DETAILS = 4000

_TOKEN_CODES = frozenset(
    {
        ConnectErrorCode.AUTH_TOKEN_MISMATCH,
        ConnectErrorCode.AUTH_TOKEN_MISSING,
        ConnectErrorCode.AUTH_PASSWORD_MISMATCH,
        ConnectErrorCode.AUTH_PASSWORD_MISSING,
        ConnectErrorCode.AUTH_UNAUTHORIZED,
        ConnectErrorCode.AUTH_BOOTSTRAP_TOKEN_INVALID,
        ConnectErrorCode.AUTH_DEVICE_TOKEN_MISMATCH,
    }
)


class CardAction(StrEnum):
    """A button of the error card (the value is its text)."""

    EDIT_TOKEN = "Edit token"
    RETRY = "Retry"
    RECONNECT_NOW = "Reconnect now"
    CHOOSE_GATEWAY = "Choose another gateway"
    SHOW_DETAILS = "Show details"


@dataclass(frozen=True, slots=True)
class FailureCard:
    """One card: a title and a sentence in plain words, its buttons, and the details."""

    title: str
    body: str
    actions: tuple[CardAction, ...]
    details: str = ""


def _details(error: BaseException | None) -> str:
    if error is None:
        return ""
    text = str(error.cause if isinstance(error, ReconnectPaused) else error)
    return text if len(text) <= _MAX_DETAILS else text[: _MAX_DETAILS - 1] + "…"


def _sentence(reason: str) -> str:
    return reason[:1].upper() + reason[1:]


def card_for_error(error: BaseException | None, *, bundled: bool, where: str = "") -> FailureCard:
    """The card for a session that cannot connect (paused, or failed to start).

    Args:
        error: what failed (a :class:`ReconnectPaused` is unwrapped).
        bundled: the gateway is this computer's bundled one (no token to edit: it is the
            app's own).
        where: ``host:port`` of the gateway.
    """
    cause = error.cause if isinstance(error, ReconnectPaused) else error
    gateway = where or "the gateway"
    others = (CardAction.CHOOSE_GATEWAY, CardAction.SHOW_DETAILS)
    if isinstance(cause, ConfigError) and bundled:
        return FailureCard(
            "The bundled gateway did not start",
            "OpenClaw could not start this computer's gateway. Retry, or choose another "
            "gateway; the details show its last lines.",
            (CardAction.RETRY, *others),
            _details(cause),
        )
    if isinstance(cause, GatewayError) and cause.detail_code in _TOKEN_CODES:
        if bundled:
            body = (
                "This computer's gateway did not accept the app's own token. Retry, or "
                "choose another gateway."
            )
            return FailureCard(_sentence(plain_reason(cause)), body, (CardAction.RETRY, *others))
        return FailureCard(
            _sentence(plain_reason(cause)),
            f"{gateway} did not accept the token or password this app sent. Enter the right "
            "one (ask whoever runs the gateway), or choose another gateway.",
            (CardAction.EDIT_TOKEN, CardAction.RETRY, *others),
            _details(cause),
        )
    if isinstance(cause, TrustError):
        return FailureCard(
            _sentence(plain_reason(cause)),
            f"The connection to {gateway} is not trusted, so nothing was sent to it. Retry "
            "to see its certificate again, or choose another gateway.",
            (CardAction.RETRY, *others),
            _details(cause),
        )
    if isinstance(cause, ConnectionClosed | OSError | TimeoutError) or cause is None:
        return FailureCard(
            f"Cannot reach {gateway}",
            "The gateway is not answering. It may be stopped, or this computer is offline. "
            "OpenClaw keeps trying; reconnect now, or choose another gateway.",
            (CardAction.RECONNECT_NOW, *others),
            _details(cause),
        )
    if isinstance(cause, OpenClawError):
        return FailureCard(
            _sentence(plain_reason(cause)),
            f"{gateway} refused the connection. Retry, or choose another gateway.",
            (CardAction.RETRY, *others),
            _details(cause),
        )
    return FailureCard(
        "Could not connect",
        "Something unexpected went wrong. Retry, or choose another gateway.",
        (CardAction.RETRY, *others),
        _details(cause),
    )


def card_for_gateway(status: SupervisorStatus) -> FailureCard | None:
    """The "gateway keeps stopping" card, when the supervisor gave up (else None)."""
    if status.state is not SupervisorState.FAILED:
        return None
    times = f" ({status.reason})" if status.reason else ""
    return FailureCard(
        "The bundled gateway keeps stopping",
        f"This computer's gateway stopped again and again{times}, so OpenClaw stopped "
        "restarting it. Its last log lines are in the details. Retry, or choose another "
        "gateway.",
        (CardAction.RETRY, CardAction.CHOOSE_GATEWAY, CardAction.SHOW_DETAILS),
        "\n".join(status.last_lines)[-_MAX_DETAILS:],
    )
