"""Entry point used by the container."""
from services.auth import settings

if __name__ == "__main__":
    print(f"auth ready: issuer={settings.ISSUER} ttl={settings.SESSION_TTL_SECONDS}s")
