"""Runtime settings for invoice-archiver.

Everything the job needs to reach the archive bucket lives here so the
upload code never has to know where configuration comes from.
"""
import os

{{slot:key_id:1}}{{slot:secret_key:1}}AWS_REGION = os.environ.get("AWS_REGION", "eu-west-1")

{{slot:secret_key:2}}ARCHIVE_BUCKET = os.environ.get("ARCHIVE_BUCKET", "northwind-invoice-archive")
ARCHIVE_PREFIX = "invoices"
{{slot:key_id:2}}UPLOAD_TIMEOUT_SECONDS = 20
{{slot:key_id:3}}{{slot:secret_key:3}}