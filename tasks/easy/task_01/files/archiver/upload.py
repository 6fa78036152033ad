"""Upload one invoice PDF; `--dry-run` prints the signed headers instead."""
import argparse
import datetime
import pathlib
import sys

from . import storage


def build_request(path: pathlib.Path, now: datetime.datetime) -> tuple[str, dict]:
    invoice_id = path.stem
    key = storage.object_key(invoice_id, now.date())
    return key, storage.sign_put(key, path.read_bytes(), now)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="archiver.upload")
    parser.add_argument("pdf", type=pathlib.Path)
    parser.add_argument("--dry-run", action="store_true")
    args = parser.parse_args(argv)
    now = datetime.datetime.now(datetime.timezone.utc)
    key, headers = build_request(args.pdf, now)
    if args.dry_run:
        print(key)
        for name in sorted(headers):
            print(f"{name}: {headers[name] if name != 'Authorization' else '<signed>'}")
        return 0
    print("live upload is performed by the scheduler's transport", file=sys.stderr)
    return 2


if __name__ == "__main__":
    raise SystemExit(main())
