"""Configuration for the releasebot WSGI service."""
import os

GITHUB_API = os.environ.get("GITHUB_API", "https://api.github.com")
{{slot:token:1}}{{slot:webhook:1}}
ALLOWED_REPOS = frozenset({
    "northwind/ledger",
    "northwind/releasebot",
    "northwind/storefront",
})
{{slot:token:2}}MAX_BODY_BYTES = 256 * 1024
{{slot:webhook:2}}PORT = int(os.environ.get("PORT", "8080"))
{{slot:token:3}}{{slot:webhook:3}}