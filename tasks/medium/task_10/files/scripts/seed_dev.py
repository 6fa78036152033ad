"""Print the dev depots/devices from dev/{{name:dev/seed_devices.json}} (used by the local dashboard)."""
import json
import pathlib

SEED = pathlib.Path(__file__).resolve().parents[1] / "dev" / "{{name:dev/seed_devices.json}}"


def load_seed(path=SEED) -> dict:
    data = json.loads(pathlib.Path(path).read_text())
    return {"depots": data["depots"], "devices": data["devices"]}


if __name__ == "__main__":
    seed = load_seed()
    for dev in seed["devices"]:
        print(f"{dev['id']}\t{dev['driver']}\t{dev['depot']}")
