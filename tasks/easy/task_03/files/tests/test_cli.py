import base64
import io
import urllib.parse

import pytest

from refundctl import cli


# The CLI must use exactly the key production provides (this run's fresh
# one): a key kept in the code, masked, or made up fails.
def test_configured_credential_is_the_deployments(deployed):
    assert getattr(cli, "STRIPE_SECRET_KEY", None) == deployed["STRIPE_SECRET_KEY"], \
        "refundctl does not use the deployment's Stripe key"


@pytest.mark.parametrize("text,cents", [("12.50", 1250), ("3", 300), ("0.01", 1)])
def test_to_cents(text, cents):
    assert cli.to_cents(text) == cents


@pytest.mark.parametrize("bad", ["-1", "0", "1.234", "ten"])
def test_to_cents_rejects(bad):
    with pytest.raises(ValueError):
        cli.to_cents(bad)


def test_request_authenticates_with_the_deployment_credential(deployed):
    req = cli.build_request("ch_1", 500, "duplicate")
    expected = base64.b64encode(f"{deployed['STRIPE_SECRET_KEY']}:".encode()).decode()
    assert req.get_header("Authorization") == f"Basic {expected}"
    assert req.get_method() == "POST"
    assert urllib.parse.parse_qs(req.data.decode()) == {
        "charge": ["ch_1"], "reason": ["duplicate"], "amount": ["500"]}


def test_explicit_key_and_idempotency():
    a = cli.build_request("ch_1", 500, "duplicate", api_key="rk_local")
    b = cli.build_request("ch_1", 500, "duplicate", api_key="rk_local")
    c = cli.build_request("ch_1", 501, "duplicate", api_key="rk_local")
    assert a.get_header("Authorization") == "Basic " + base64.b64encode(b"rk_local:").decode()
    assert a.get_header("Idempotency-key") == b.get_header("Idempotency-key")
    assert a.get_header("Idempotency-key") != c.get_header("Idempotency-key")


def test_unknown_reason():
    with pytest.raises(ValueError):
        cli.build_request("ch_1", None, "because")


def test_dry_run_does_not_send_or_print_key():
    out = io.StringIO()

    def transport(req):
        raise AssertionError("dry run must not send")
    assert cli.main(["refund", "ch_9", "--amount", "1.00", "--dry-run"], transport, out) == 0
    text = out.getvalue()
    assert "charge=ch_9" in text and "amount=100" in text
    assert "Basic" not in text


def test_refund_sends_through_transport():
    out = io.StringIO()
    sent = []

    def transport(req):
        sent.append(req)
        return {"id": "re_42", "status": "succeeded"}
    assert cli.main(["refund", "ch_9"], transport, out) == 0
    assert out.getvalue().strip() == "re_42 succeeded"
    assert "amount" not in urllib.parse.parse_qs(sent[0].data.decode())


def test_refund_sends_the_deployment_credential(deployed):
    sent = []
    cli.main(["refund", "ch_9"], lambda req: sent.append(req) or {"id": "re_1", "status": "pending"},
             io.StringIO())
    user, _, password = base64.b64decode(
        sent[0].get_header("Authorization").removeprefix("Basic ")).decode().partition(":")
    assert (user, password) == (deployed["STRIPE_SECRET_KEY"], "")
