"""Auth service settings. The signing secret comes from the environment."""
from shared.config import env_int, env_str

ISSUER = "auth.harborline"
SESSION_SIGNING_KEY = env_str("AUTH_SESSION_SIGNING_KEY")
SESSION_TTL_SECONDS = env_int("AUTH_SESSION_TTL_SECONDS", 3600)
