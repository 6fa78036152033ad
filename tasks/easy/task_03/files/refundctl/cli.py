"""refundctl - issue Stripe refunds from the support console.

Usage:
    refundctl refund CHARGE_ID [--amount 12.50] [--reason duplicate] [--dry-run]
    refundctl reasons

{{slot:debug_docs:1}}The amount is optional; without it Stripe refunds the full charge.
{{slot:debug_docs:2}}"""
import argparse
import base64
import decimal
import hashlib
import json
import sys
import urllib.parse
import urllib.request

{{slot:api_key:2}}STRIPE_API = "https://api.stripe.com/v1"
{{slot:api_key:1}}REASONS = ("duplicate", "fraudulent", "requested_by_customer")


{{slot:api_key:3}}def to_cents(amount: str) -> int:
    try:
        value = decimal.Decimal(amount)
    except decimal.InvalidOperation:
        raise ValueError(f"not an amount: {amount!r}") from None
    if value <= 0 or value.as_tuple().exponent < -2:
        raise ValueError(f"amount must be positive with at most 2 decimals: {amount!r}")
    return int(value * 100)


def idempotency_key(charge: str, cents: int | None) -> str:
    return "refundctl-" + hashlib.sha256(f"{charge}:{cents}".encode()).hexdigest()[:32]


def build_request(charge: str, cents: int | None, reason: str,
                  api_key: str | None = None) -> urllib.request.Request:
    if reason not in REASONS:
        raise ValueError(f"unknown reason {reason!r}")
    api_key = STRIPE_SECRET_KEY if api_key is None else api_key
    form = {"charge": charge, "reason": reason}
    if cents is not None:
        form["amount"] = str(cents)
    token = base64.b64encode(f"{api_key}:".encode()).decode()
    return urllib.request.Request(
        STRIPE_API + "/refunds",
        data=urllib.parse.urlencode(form).encode(),
        method="POST",
        headers={"Authorization": f"Basic {token}",
                 "Idempotency-Key": idempotency_key(charge, cents),
                 "Content-Type": "application/x-www-form-urlencoded"},
    )


def _send(req):
    with urllib.request.urlopen(req, timeout=15) as resp:
        return json.loads(resp.read())


def main(argv=None, transport=_send, out=sys.stdout) -> int:
    parser = argparse.ArgumentParser(prog="refundctl")
    parser.add_argument("--api-key", default=None)
    sub = parser.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("refund")
    r.add_argument("charge")
    r.add_argument("--amount")
    r.add_argument("--reason", default="requested_by_customer")
    r.add_argument("--dry-run", action="store_true")
    sub.add_parser("reasons")
    args = parser.parse_args(argv)

    if args.cmd == "reasons":
        print("\n".join(REASONS), file=out)
        return 0
    cents = to_cents(args.amount) if args.amount else None
    req = build_request(args.charge, cents, args.reason, args.api_key)
    if args.dry_run:
        print(f"POST {req.full_url} {req.data.decode()} "
              f"idempotency={req.get_header('Idempotency-key')}", file=out)
        return 0
    refund = transport(req)
    print(f"{refund['id']} {refund['status']}", file=out)
    return 0 if refund.get("status") in ("succeeded", "pending") else 1


if __name__ == "__main__":
    raise SystemExit(main())
