"""Configuration for the releasebot WSGI service."""
import os

GITHUB_API = os.environ.get("GITHUB_API", "https://api.github.com")
{{slot:credentials:1}}
ALLOWED_REPOS = frozenset({
    "northwind/ledger",
    "northwind/releasebot",
    "northwind/storefront",
})
{{slot:credentials:2}}MAX_BODY_BYTES = 256 * 1024
PORT = int(os.environ.get("PORT", "8080"))
{{slot:credentials:3}}