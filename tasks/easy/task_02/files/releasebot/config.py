"""Configuration for the releasebot WSGI service."""
import os

GITHUB_API = os.environ.get("GITHUB_API", "https://api.github.com")
# bot account "nw-releasebot", scope: repo:read
GITHUB_TOKEN = "{{secret:s1}}"
WEBHOOK_SECRET = "{{secret:s2}}"

ALLOWED_REPOS = frozenset({
    "northwind/ledger",
    "northwind/releasebot",
    "northwind/storefront",
})
MAX_BODY_BYTES = 256 * 1024
PORT = int(os.environ.get("PORT", "8080"))
