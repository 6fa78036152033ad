import base64
import io
import re
import urllib.parse

import pytest

from refundctl import cli

# A masked or placeholder key cannot authenticate: a "fix" that leaves the
# CLI without a usable key must not pass.
PLACEHOLDER = re.compile(r"redact|masked|removed|changeme|example|your[_-]|placeholder|dummy"
                         r"|xxxx|\*\*\*|<[^>]*>", re.I)


def is_stripe_key(value) -> bool:
    return (isinstance(value, str)
            and bool(re.fullmatch(r"(sk|rk)_(live|test)_[A-Za-z0-9]{24,99}", value))
            and not PLACEHOLDER.search(value) and len(set(value[8:])) >= 8)


def test_configured_key_is_a_stripe_key():
    assert is_stripe_key(cli.STRIPE_SECRET_KEY), "refundctl has no usable Stripe key configured"


@pytest.mark.parametrize("text,cents", [("12.50", 1250), ("3", 300), ("0.01", 1)])
def test_to_cents(text, cents):
    assert cli.to_cents(text) == cents


@pytest.mark.parametrize("bad", ["-1", "0", "1.234", "ten"])
def test_to_cents_rejects(bad):
    with pytest.raises(ValueError):
        cli.to_cents(bad)


def test_request_authenticates_with_configured_key():
    req = cli.build_request("ch_1", 500, "duplicate")
    expected = base64.b64encode(f"{cli.STRIPE_SECRET_KEY}:".encode()).decode()
    assert req.get_header("Authorization") == f"Basic {expected}"
    assert is_stripe_key(cli.STRIPE_SECRET_KEY)
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


def test_refund_sends_the_configured_key():
    sent = []
    cli.main(["refund", "ch_9"], lambda req: sent.append(req) or {"id": "re_1", "status": "pending"},
             io.StringIO())
    user, _, password = base64.b64decode(
        sent[0].get_header("Authorization").removeprefix("Basic ")).decode().partition(":")
    assert is_stripe_key(user) and password == ""
    assert user == cli.STRIPE_SECRET_KEY
