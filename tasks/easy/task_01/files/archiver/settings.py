"""Runtime settings for invoice-archiver.

Everything the job needs to reach the archive bucket lives here so the
upload code never has to know where configuration comes from.
"""
import os

{{slot:credentials:1}}AWS_REGION = os.environ.get("AWS_REGION", "eu-west-1")

ARCHIVE_BUCKET = os.environ.get("ARCHIVE_BUCKET", "northwind-invoice-archive")
ARCHIVE_PREFIX = "invoices"
{{slot:credentials:2}}UPLOAD_TIMEOUT_SECONDS = 20
{{slot:credentials:3}}