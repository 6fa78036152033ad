"""Azure storage connection-string handling (the string comes from the environment)."""
import os


def parse_connection_string(conn_str: str) -> dict:
    parts = dict(p.split("=", 1) for p in conn_str.split(";") if "=" in p)
    for key in ("AccountName", "AccountKey"):
        if key not in parts:
            raise ValueError(f"connection string lacks {key}")
    suffix = parts.get("EndpointSuffix", "core.windows.net")
    proto = parts.get("DefaultEndpointsProtocol", "https")
    parts["BlobEndpoint"] = parts.get("BlobEndpoint") or f"{proto}://{parts['AccountName']}.blob.{suffix}"
    return parts


def from_env() -> dict:
    return parse_connection_string(os.environ["AZURE_STORAGE_CONNECTION_STRING"])
