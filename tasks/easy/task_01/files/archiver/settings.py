"""Runtime settings for invoice-archiver.

Everything the job needs to reach the archive bucket lives here so the
upload code never has to know where configuration comes from.
"""
import os

AWS_ACCESS_KEY_ID = "{{secret:s1}}"
AWS_SECRET_ACCESS_KEY = "{{secret:s2}}"
AWS_REGION = os.environ.get("AWS_REGION", "eu-west-1")

ARCHIVE_BUCKET = os.environ.get("ARCHIVE_BUCKET", "northwind-invoice-archive")
ARCHIVE_PREFIX = "invoices"
UPLOAD_TIMEOUT_SECONDS = 20
