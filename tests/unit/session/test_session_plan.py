"""Unit tests for openclaw_desktop.session.plan: credential choice and connect params."""

from __future__ import annotations

import pytest

from openclaw_desktop.identity import StoredDeviceToken
from openclaw_desktop.protocol import (
    ClientId,
    ClientMode,
    ConnectChallenge,
    ConnectParams,
    Role,
)
from openclaw_desktop.session import (
    ConnectPlan,
    Credentials,
    build_connect_params,
    select_auth,
)
from tests.helpers.session_builders import client_info

REQUESTED = ("operator.read", "operator.write", "operator.admin")
STORED = StoredDeviceToken("stored-secret", "operator", ("operator.read",), 1796023931318)
CHALLENGE = ConnectChallenge(nonce="nonce-1", ts=1796023931231)


class RecordingSigner:
    """A Signer that records the payloads it signs."""

    def __init__(self) -> None:
        self.payloads: list[str] = []

    @property
    def device_id(self) -> str:
        return "dev-id"

    @property
    def public_key(self) -> str:
        return "pub-key"

    def sign(self, payload: str) -> str:
        self.payloads.append(payload)
        return f"sig-{len(self.payloads)}"


# ---------------------------------------------------------------- select_auth


def test_stored_device_token_wins_over_shared_and_bootstrap() -> None:
    """The stored device token is sent as auth.deviceToken; shared and bootstrap stay home."""
    creds = Credentials(shared_token="shared", bootstrap_token="boot", stored_device_token=STORED)
    selection = select_auth(creds, role=Role.OPERATOR, requested_scopes=REQUESTED)
    assert selection.source == "device-token"
    assert selection.auth is not None
    assert selection.auth.to_wire() == {"deviceToken": "stored-secret"}


def test_explicit_shared_token_goes_ahead_of_the_stored_device_token() -> None:
    """A shared token given for this connection (--token) is sent first, with the requested
    scopes, as the reference client does; the password still goes along."""
    creds = Credentials(
        shared_token="typed",
        password="pw",
        stored_device_token=STORED,
        shared_token_first=True,
    )
    selection = select_auth(creds, role=Role.OPERATOR, requested_scopes=REQUESTED)
    assert selection.source == "shared-token"
    assert selection.auth is not None
    assert selection.auth.to_wire() == {"token": "typed", "password": "pw"}
    assert selection.scopes == REQUESTED
    retry = select_auth(
        creds, role=Role.OPERATOR, requested_scopes=REQUESTED, device_token_retry=True
    )
    assert retry.source == "device-token-retry"


def test_shared_token_first_without_a_shared_token_keeps_the_default_order() -> None:
    """The flag alone changes nothing: the stored device token is used."""
    creds = Credentials(stored_device_token=STORED, shared_token_first=True)
    assert select_auth(creds, role=Role.OPERATOR, requested_scopes=()).source == "device-token"


def test_shared_token_wins_over_bootstrap() -> None:
    """Without a stored token, the shared token is used and bootstrap is not sent."""
    creds = Credentials(shared_token="shared", bootstrap_token="boot")
    selection = select_auth(creds, role=Role.OPERATOR, requested_scopes=REQUESTED)
    assert selection.source == "shared-token"
    assert selection.auth is not None
    assert selection.auth.to_wire() == {"token": "shared"}
    assert selection.scopes == REQUESTED


def test_bootstrap_token_used_last() -> None:
    """Only a bootstrap token: it goes in auth.bootstrapToken."""
    selection = select_auth(
        Credentials(bootstrap_token="boot"), role=Role.NODE, requested_scopes=()
    )
    assert selection.source == "bootstrap-token"
    assert selection.auth is not None
    assert selection.auth.to_wire() == {"bootstrapToken": "boot"}


def test_password_alone() -> None:
    """A password alone is the source and is sent."""
    selection = select_auth(Credentials(password="pw"), role=Role.OPERATOR, requested_scopes=())
    assert selection.source == "password"
    assert selection.auth is not None
    assert selection.auth.to_wire() == {"password": "pw"}


@pytest.mark.parametrize(
    ("creds", "source", "wire"),
    [
        (
            Credentials(password="pw", stored_device_token=STORED),
            "device-token",
            {"deviceToken": "stored-secret", "password": "pw"},
        ),
        (
            Credentials(password="pw", shared_token="shared"),
            "shared-token",
            {"token": "shared", "password": "pw"},
        ),
        (
            Credentials(password="pw", bootstrap_token="boot"),
            "bootstrap-token",
            {"bootstrapToken": "boot", "password": "pw"},
        ),
    ],
)
def test_password_is_always_sent(creds: Credentials, source: str, wire: dict[str, str]) -> None:
    """The password rides along with whichever token is chosen."""
    selection = select_auth(creds, role=Role.OPERATOR, requested_scopes=REQUESTED)
    assert selection.source == source
    assert selection.auth is not None
    assert selection.auth.to_wire() == wire


def test_no_credentials_sends_no_auth() -> None:
    """Nothing known: no auth object at all."""
    selection = select_auth(Credentials(), role=Role.OPERATOR, requested_scopes=REQUESTED)
    assert selection.source == "none"
    assert selection.auth is None
    assert selection.scopes == REQUESTED


def test_empty_strings_count_as_absent() -> None:
    """Empty shared token or password are skipped, never sent as ''."""
    selection = select_auth(
        Credentials(shared_token="", password="", bootstrap_token="boot"),
        role=Role.OPERATOR,
        requested_scopes=(),
    )
    assert selection.source == "bootstrap-token"
    assert selection.auth is not None
    assert selection.auth.to_wire() == {"bootstrapToken": "boot"}
    nothing = select_auth(
        Credentials(shared_token="", password=""), role=Role.OPERATOR, requested_scopes=()
    )
    assert nothing.source == "none"
    assert nothing.auth is None


def test_device_token_retry_form() -> None:
    """The one retry after AUTH_TOKEN_MISMATCH sends shared token plus deviceToken."""
    creds = Credentials(shared_token="shared", stored_device_token=STORED)
    selection = select_auth(
        creds, role=Role.OPERATOR, requested_scopes=REQUESTED, device_token_retry=True
    )
    assert selection.source == "device-token-retry"
    assert selection.auth is not None
    assert selection.auth.to_wire() == {"token": "shared", "deviceToken": "stored-secret"}
    assert selection.scopes == ("operator.read",)


@pytest.mark.parametrize(
    ("creds", "source"),
    [
        (Credentials(stored_device_token=STORED), "device-token"),
        (Credentials(shared_token="shared"), "shared-token"),
    ],
)
def test_device_token_retry_needs_both_tokens(creds: Credentials, source: str) -> None:
    """Without both a shared and a stored token the retry flag falls back to the plain order."""
    selection = select_auth(
        creds, role=Role.OPERATOR, requested_scopes=REQUESTED, device_token_retry=True
    )
    assert selection.source == source


def test_stored_scopes_replace_the_requested_ones() -> None:
    """An operator device token is used with the scopes it was issued for."""
    selection = select_auth(
        Credentials(stored_device_token=STORED), role=Role.OPERATOR, requested_scopes=REQUESTED
    )
    assert selection.scopes == ("operator.read",)


def test_stored_token_without_scopes_keeps_the_requested_ones() -> None:
    """A stored token that recorded no scopes requests what the caller asked for."""
    bare = StoredDeviceToken("tok", "operator")
    selection = select_auth(
        Credentials(stored_device_token=bare), role=Role.OPERATOR, requested_scopes=REQUESTED
    )
    assert selection.scopes == REQUESTED


@pytest.mark.parametrize(
    "creds",
    [
        Credentials(shared_token="shared"),
        Credentials(stored_device_token=StoredDeviceToken("t", "node", ("operator.read",))),
        Credentials(shared_token="s", stored_device_token=StoredDeviceToken("t", "node", ("x",))),
        Credentials(bootstrap_token="boot"),
    ],
)
@pytest.mark.parametrize("retry", [False, True])
def test_node_scopes_are_always_empty(creds: Credentials, retry: bool) -> None:
    """Nodes request no scopes, whatever was asked or stored."""
    selection = select_auth(
        creds, role=Role.NODE, requested_scopes=REQUESTED, device_token_retry=retry
    )
    assert selection.scopes == ()


# ---------------------------------------------------------------- reprs


def all_secret_reprs() -> list[str]:
    """repr/str of every object that holds credentials."""
    creds = Credentials(
        shared_token="secret-shared",
        password="secret-pw",
        bootstrap_token="secret-boot",
        stored_device_token=StoredDeviceToken("secret-stored", "operator", ("operator.read",)),
    )
    retry = select_auth(
        creds, role=Role.OPERATOR, requested_scopes=REQUESTED, device_token_retry=True
    )
    plan = ConnectPlan(client=client_info(), role=Role.OPERATOR, auth=retry)
    assert retry.auth is not None
    objects: list[object] = [creds, retry, retry.auth, plan, creds.stored_device_token]
    return [f(o) for o in objects for f in (repr, str)]


def test_credential_reprs_never_contain_secrets() -> None:
    """Credentials, AuthSelection, ConnectAuth, ConnectPlan and StoredDeviceToken hide secrets."""
    for text in all_secret_reprs():
        assert "secret" not in text, text


def test_credentials_repr_names_what_is_known() -> None:
    """The Credentials repr says which credentials exist, without values."""
    assert repr(Credentials()) == "Credentials(<redacted: none>)"
    assert repr(Credentials(shared_token="x", password="y")) == (
        "Credentials(<redacted: shared_token, password>)"
    )


# ---------------------------------------------------------------- build_connect_params


def plan_for(
    creds: Credentials,
    *,
    role: Role = Role.OPERATOR,
    retry: bool = False,
    signer: RecordingSigner | None = None,
    **kwargs: object,
) -> ConnectPlan:
    """A plan with a recording signer."""
    client = (
        client_info(client_id=ClientId.NODE_HOST, mode=ClientMode.NODE, device_family="Linux")
        if role is Role.NODE
        else client_info()
    )
    return ConnectPlan(
        client=client,
        role=role,
        auth=select_auth(creds, role=role, requested_scopes=REQUESTED, device_token_retry=retry),
        signer=signer if signer is not None else RecordingSigner(),
        **kwargs,  # type: ignore[arg-type]
    )


def test_connect_params_sign_the_exact_v3_payload() -> None:
    """The signed string lists the sent fields in order, with the challenge ts and nonce."""
    signer = RecordingSigner()
    plan = plan_for(Credentials(shared_token="shared"), signer=signer)
    params = build_connect_params(plan, CHALLENGE)
    assert signer.payloads == [
        "v3|dev-id|openclaw-linux|ui|operator|operator.read,operator.write,operator.admin|"
        "1796023931231|shared|nonce-1|linux|"
    ]
    assert params["device"] == {
        "id": "dev-id",
        "publicKey": "pub-key",
        "signature": "sig-1",
        "signedAt": 1796023931231,
        "nonce": "nonce-1",
    }
    assert params["scopes"] == list(REQUESTED)


@pytest.mark.parametrize(
    ("creds", "retry", "signed"),
    [
        (Credentials(shared_token="shared", stored_device_token=STORED), True, "shared"),
        (Credentials(stored_device_token=STORED), False, "stored-secret"),
        (Credentials(bootstrap_token="boot", password="pw"), False, "boot"),
        (Credentials(password="pw"), False, ""),
        (Credentials(), False, ""),
    ],
)
def test_signed_token_follows_the_gateway_rule(
    creds: Credentials, retry: bool, signed: str
) -> None:
    """token ?? deviceToken ?? bootstrapToken ?? '' is signed; the password never is."""
    signer = RecordingSigner()
    build_connect_params(plan_for(creds, retry=retry, signer=signer), CHALLENGE)
    (payload,) = signer.payloads
    assert payload.split("|")[7] == signed


def test_node_params_sign_role_node_and_empty_scopes() -> None:
    """A node signs role node, an empty scope list and its normalised device family."""
    signer = RecordingSigner()
    plan = plan_for(
        Credentials(bootstrap_token="boot"),
        role=Role.NODE,
        signer=signer,
        commands=("device.info",),
        caps=("device",),
        min_protocol=3,
    )
    params = build_connect_params(plan, CHALLENGE)
    assert signer.payloads == [
        "v3|dev-id|node-host|node|node||1796023931231|boot|nonce-1|linux|linux"
    ]
    assert params["minProtocol"] == 3
    assert params["maxProtocol"] == 4
    assert params["scopes"] == []
    assert params["commands"] == ["device.info"]
    assert params["caps"] == ["device"]
    assert params["auth"] == {"bootstrapToken": "boot"}


def test_connect_params_round_trip_through_the_closed_model() -> None:
    """What build_connect_params produces is exactly what ConnectParams reads back."""
    plan = plan_for(
        Credentials(shared_token="s", password="p"),
        permissions={"camera.capture": False},
        path_env="/usr/bin",
        locale="en-US",
        user_agent="openclaw-desktop/0.1",
    )
    params = build_connect_params(plan, CHALLENGE)
    assert ConnectParams.model_validate(params).to_wire() == params
    assert params["permissions"] == {"camera.capture": False}
    assert params["pathEnv"] == "/usr/bin"
    assert params["locale"] == "en-US"
    assert params["userAgent"] == "openclaw-desktop/0.1"
    assert None not in params.values()


def test_connect_params_without_signer_or_auth() -> None:
    """No identity and no credentials: no device and no auth keys; caps still sent."""
    plan = ConnectPlan(
        client=client_info(),
        role=Role.OPERATOR,
        auth=select_auth(Credentials(), role=Role.OPERATOR, requested_scopes=()),
    )
    params = build_connect_params(plan, CHALLENGE)
    assert "device" not in params
    assert "auth" not in params
    assert "commands" not in params
    assert params["caps"] == []
    assert params["role"] == "operator"


def test_empty_command_tuple_is_sent_as_empty_list() -> None:
    """commands=() declares 'no commands' explicitly, unlike None."""
    plan = plan_for(Credentials(shared_token="s"), role=Role.NODE, commands=())
    assert build_connect_params(plan, CHALLENGE)["commands"] == []
