"""Put the repository root on sys.path so `services.*` and `shared.*` import."""
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
