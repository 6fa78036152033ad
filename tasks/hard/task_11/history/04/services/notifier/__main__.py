"""Entry point used by the container."""
from services.notifier import settings

if __name__ == "__main__":
    print(f"notifier ready: from={settings.FROM_ADDRESS}")
