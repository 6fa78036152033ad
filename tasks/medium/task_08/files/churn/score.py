"""Logistic churn score with the weights fitted in notebooks/explore.ipynb."""
import argparse
import math
import sys

from . import features, warehouse

WEIGHTS = {"logins_per_week": -0.21, "seats_used_ratio": -2.4,
           "tickets_open": 0.35, "days_since_last_login": 0.08}
BIAS = 0.9


def score(feats: dict[str, float]) -> float:
    z = BIAS + sum(WEIGHTS[k] * feats[k] for k in features.FEATURES)
    return 1 / (1 + math.exp(-z))


def rank(usage_text: str, top: int) -> list[tuple[str, float]]:
    accounts = features.parse_usage(usage_text)
    scored = [(acc_id, round(score(features.features(acc)), 4)) for acc_id, acc in accounts.items()]
    return sorted(scored, key=lambda item: (-item[1], item[0]))[:top]


def main(argv=None, out=sys.stdout) -> int:
    parser = argparse.ArgumentParser(prog="churn.score")
    parser.add_argument("usage_csv")
    parser.add_argument("--top", type=int, default=20)
    args = parser.parse_args(argv)
    threshold = warehouse.load()["model"]["threshold"]
    with open(args.usage_csv, encoding="utf-8") as fh:
        for acc_id, p in rank(fh.read(), args.top):
            flag = "AT RISK" if p >= threshold else ""
            print(f"{acc_id}\t{p:.4f}\t{flag}".rstrip(), file=out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
