"""Ingest service settings."""
import os

BUCKET = os.environ.get("INGEST_BUCKET", "atlas-telemetry-raw")
REGION = os.environ.get("AWS_REGION", "eu-central-1")
# ingest-writer IAM user (s3:PutObject on the raw bucket only)
AWS_ACCESS_KEY_ID = "{{secret:s1}}"
AWS_SECRET_ACCESS_KEY = "{{secret:s2}}"
MAX_BATCH = int(os.environ.get("INGEST_MAX_BATCH", "500"))
