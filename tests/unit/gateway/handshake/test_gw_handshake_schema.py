"""Connect params validation: the real gateway's error texts, in its order."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from gateway.handshake import ConnectRejection, connect_params_error, validate_connect_params
from gateway.handshake.jsonschema_errors import grapheme_count, js_keys
from openclaw_desktop.protocol import ClientId, ConnectParams

GOOD: dict[str, Any] = {
    "minProtocol": 4,
    "maxProtocol": 4,
    "client": {"id": "cli", "version": "1.0", "platform": "linux", "mode": "cli"},
    "role": "operator",
    "scopes": ["operator.read"],
    "auth": {"token": "t"},
    "device": {"id": "d", "publicKey": "k", "signature": "s", "signedAt": 1, "nonce": "n"},
}


def _with(**changes: Any) -> dict[str, Any]:
    params = copy.deepcopy(GOOD)
    for dotted, value in changes.items():
        *parents, last = dotted.split("__")
        node = params
        for key in parents:
            node = node[key]
        if value is _DROP:
            del node[last]
        else:
            node[last] = value
    return params


_DROP = object()


@pytest.mark.parametrize(
    ("params", "text"),
    [
        (None, "must be object"),
        ([], "must be object"),
        ({}, "must have required property 'minProtocol'"),
        (_with(bogus=1), "at root: unexpected property 'bogus'"),
        (_with(client__x=1), "at /client: unexpected property 'x'"),
        (_with(client__id="nope"), "at /client/id: must be equal to one of the allowed values"),
        (_with(client__id="CLI"), "at /client/id: must be equal to one of the allowed values"),
        (_with(client__id=5), "at /client/id: must be equal to one of the allowed values"),
        (_with(client__mode="nope"), "at /client/mode: must be equal to one of the allowed values"),
        (_with(client__version=_DROP), "at /client: must have required property 'version'"),
        (_with(client__platform=""), "at /client/platform: must not have fewer than 1 characters"),
        (_with(client__platform=3), "at /client/platform: must be string"),
        (_with(minProtocol=0), "at /minProtocol: must be >= 1"),
        (_with(minProtocol="4"), "at /minProtocol: must be integer"),
        (_with(minProtocol=1.5), "at /minProtocol: must be integer"),
        (_with(minProtocol=True), "at /minProtocol: must be integer"),
        (
            _with(minProtocol=-0.5),
            "at /minProtocol: must be integer; at /minProtocol: must be >= 1",
        ),
        (_with(role=None), "at /role: must be string"),
        (_with(role=""), "at /role: must not have fewer than 1 characters"),
        (_with(scopes=["a", ""]), "at /scopes/1: must not have fewer than 1 characters"),
        (_with(scopes="operator.read"), "at /scopes: must be array"),
        (_with(device__signedAt=-1), "at /device/signedAt: must be >= 0"),
        (_with(device__nonce=_DROP), "at /device: must have required property 'nonce'"),
        (_with(auth__token=None), "at /auth/token: must be string"),
        (_with(auth__bogus="x"), "at /auth: unexpected property 'bogus'"),
        (
            _with(client__buildId="b" * 97),
            "at /client/buildId: must not have more than 96 characters",
        ),
        (_with(permissions={"camera": "yes"}), "at /permissions/camera: must be boolean"),
        (
            _with(modelCatalog={"shortId": ""}),
            "at /modelCatalog: unexpected property 'shortId'; "
            "at /modelCatalog/shortId: must not have fewer than 1 characters; "
            "at /modelCatalog: must match a schema in anyOf",
        ),
        (
            _with(
                workerRuns={
                    "bundleHash": "x",
                    "openclawVersion": "1",
                    "protocolFeatures": ["a", "a"],
                }
            ),
            "at /workerRuns/bundleHash: must not have fewer than 64 characters; "
            'at /workerRuns/bundleHash: must match pattern "^[a-f0-9]{64}$"; '
            "at /workerRuns/protocolFeatures: must not have duplicate items",
        ),
    ],
)
def test_error_texts(params: Any, text: str) -> None:
    """Each kind of schema error is worded like the real gateway."""
    assert connect_params_error(params) == text


def test_all_errors_are_reported_in_schema_order() -> None:
    """Extra properties come first, then properties in schema order, each object depth-first."""
    params = _with(
        minProtocol="4", maxProtocol=0, bogus=1, client__version=_DROP, client__platform=""
    )

    assert connect_params_error(params) == (
        "at root: unexpected property 'bogus'; at /minProtocol: must be integer; "
        "at /maxProtocol: must be >= 1; at /client: must have required property 'version'; "
        "at /client/platform: must not have fewer than 1 characters"
    )


def test_several_extra_properties_name_the_first() -> None:
    """Only the first unexpected property of an object is named."""
    assert connect_params_error(_with(b=1, a=2)) == "at root: unexpected property 'b'"


def test_nine_extra_properties_fill_the_error_budget() -> None:
    """TypeBox keeps eight errors: per-key 'schema is false' errors then fill them all."""
    params = copy.deepcopy(GOOD)
    params.update({f"x{i}": i for i in range(9)})

    assert connect_params_error(params) == "; ".join(f"at /x{i}: schema is false" for i in range(8))


def test_seven_extra_properties_still_collapse() -> None:
    """Seven extra keys plus their summary fit the budget and collapse to one message."""
    params = _with(minProtocol="x")
    params.update({f"x{i}": i for i in range(7)})

    assert connect_params_error(params) == "at root: unexpected property 'x0'"


def test_array_index_keys_come_first() -> None:
    """Object keys are visited in JavaScript order: array indexes first, ascending."""
    assert js_keys({"b": 1, "10": 2, "2": 3, "01": 4}) == ["2", "10", "b", "01"]
    assert connect_params_error(_with(b=1, **{"10": 1})) == "at root: unexpected property '10'"


def test_blank_extra_property_name_falls_back_to_the_generic_text() -> None:
    """An unnamed (blank) extra property is reported without a name."""
    assert connect_params_error(_with(**{" ": 1})) == "must not have additional properties"


def test_permissions_keys_with_line_breaks_are_not_checked() -> None:
    """'^.*$' does not match a key with a newline, so its value is never checked."""
    assert connect_params_error(_with(permissions={"a\nb": "x"})) is None


@pytest.mark.parametrize(
    ("text", "count"),
    [
        ("", 0),
        ("abc", 3),
        ("e\u0301", 1),
        ("\U0001f1fa\U0001f1f8", 1),
        ("a\u200db", 1),
        ("\U0001f600", 1),
    ],
)
def test_grapheme_count(text: str, count: int) -> None:
    """String lengths count TypeBox's grapheme clusters."""
    assert grapheme_count(text) == count


def test_max_length_counts_graphemes() -> None:
    """96 letters with combining marks fit buildId's 96-character cap."""
    params = _with(client__buildId="e\u0301" * 96)

    assert connect_params_error(params) is None
    assert validate_connect_params(params).client.build_id == "e\u0301" * 96


def test_valid_params_build_the_model() -> None:
    """Valid params become ConnectParams with the client id as an enum."""
    params = validate_connect_params(GOOD)

    assert isinstance(params, ConnectParams)
    assert params.client.id is ClientId.CLI
    assert params.device is not None
    assert params.device.signed_at == 1


def test_integral_floats_become_ints() -> None:
    """4.0 is the integer 4, as in JavaScript."""
    params = validate_connect_params(_with(minProtocol=4.0, device__signedAt=7.0))

    assert params.min_protocol == 4
    assert type(params.min_protocol) is int
    assert params.device is not None
    assert params.device.signed_at == 7


def test_params_the_shared_model_would_refuse_still_validate() -> None:
    """A public key past our model's length cap passes, as at the real gateway."""
    params = validate_connect_params(
        _with(device__publicKey="k" * 3000, device__signature="s" * 300)
    )

    assert params.device is not None
    assert params.device.public_key == "k" * 3000
    assert params.client.id is ClientId.CLI
    assert params.auth is not None
    assert params.auth.token == "t"


def test_invalid_params_raise_the_rejection() -> None:
    """Invalid params raise INVALID_REQUEST 'invalid connect params: ...' with close 1008."""
    with pytest.raises(ConnectRejection) as caught:
        validate_connect_params(_with(client__id="nope"))

    assert caught.value.error == {
        "code": "INVALID_REQUEST",
        "message": (
            "invalid connect params: at /client/id: must be equal to one of the allowed values"
        ),
    }
    assert caught.value.close_code == 1008
    assert caught.value.close_reason == caught.value.message
