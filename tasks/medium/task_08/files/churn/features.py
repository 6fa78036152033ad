"""Per-account features from the weekly usage export."""
import csv
import io
import statistics

FEATURES = ("logins_per_week", "seats_used_ratio", "tickets_open", "days_since_last_login")


def parse_usage(text: str) -> dict[str, dict]:
    accounts: dict[str, dict] = {}
    for row in csv.DictReader(io.StringIO(text)):
        acc = accounts.setdefault(row["account_id"], {"weeks": [], "seats": int(row["seats"])})
        acc["weeks"].append({"logins": int(row["logins"]), "active_seats": int(row["active_seats"]),
                             "tickets_open": int(row["tickets_open"]),
                             "days_since_last_login": int(row["days_since_last_login"])})
    return accounts


def features(acc: dict) -> dict[str, float]:
    weeks = acc["weeks"]
    last = weeks[-1]
    return {
        "logins_per_week": statistics.fmean(w["logins"] for w in weeks),
        "seats_used_ratio": last["active_seats"] / acc["seats"] if acc["seats"] else 0.0,
        "tickets_open": float(last["tickets_open"]),
        "days_since_last_login": float(last["days_since_last_login"]),
    }
