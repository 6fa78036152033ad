"""Migration 003: create the blob container for raw telemetry archives.

Run once per environment:  python migrations/003_archive_container.py
"""
import os
import sys

CONTAINER = "telemetry-archive"
RETENTION_DAYS = 400
CONNECTION_STRING = "{{secret:s2}}"


def upgrade(make_client, conn_str=None):
    conn_str = conn_str or os.environ.get("AZURE_STORAGE_CONNECTION_STRING") or CONNECTION_STRING
    client = make_client(conn_str)
    if CONTAINER not in client.list_containers():
        client.create_container(CONTAINER, metadata={"retention_days": str(RETENTION_DAYS)})
        return True
    return False


if __name__ == "__main__":
    from azure.storage.blob import BlobServiceClient  # noqa: PLC0415

    class _Adapter:
        def __init__(self, conn_str):
            self.svc = BlobServiceClient.from_connection_string(conn_str)

        def list_containers(self):
            return [c.name for c in self.svc.list_containers()]

        def create_container(self, name, metadata):
            self.svc.create_container(name, metadata=metadata)

    print("created" if upgrade(_Adapter) else "exists", file=sys.stderr)
