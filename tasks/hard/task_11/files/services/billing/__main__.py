"""Entry point used by the container: prints the effective configuration."""
from services.billing import settings

if __name__ == "__main__":
    print(f"billing ready: currency={settings.DEFAULT_CURRENCY} net={settings.NET_TERMS_DAYS}d")
