"""Apply migrations/*.sql in order (run by the deploy job via psql)."""
import os
import pathlib
import subprocess
import sys

DSN = os.environ.get("LEDGER_DSN", "{{secret:s6}}")


def pending(directory=pathlib.Path(__file__).parent):
    return sorted(directory.glob("[0-9][0-9][0-9]_*.sql"))


def main():
    for path in pending():
        print(f"applying {path.name}", file=sys.stderr)
        subprocess.run(["psql", DSN, "-v", "ON_ERROR_STOP=1", "-f", str(path)], check=True)


if __name__ == "__main__":
    main()
