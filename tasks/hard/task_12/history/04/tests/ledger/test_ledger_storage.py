from datetime import date

import pytest

from services.ledger import storage


def test_parse_connection_string_keeps_equals_in_values():
    parts = storage.parse_connection_string("AccountName=acct1;Opaque=ab==;EndpointSuffix=core.windows.net;")
    assert parts == {"AccountName": "acct1", "Opaque": "ab==", "EndpointSuffix": "core.windows.net"}


def test_parse_rejects_garbage():
    with pytest.raises(ValueError):
        storage.parse_connection_string("AccountName=acct1;garbage")


def test_configured_string_is_a_string():
    assert isinstance(storage.AZURE_STORAGE_CONNECTION_STRING, str)


def test_export_paths():
    assert storage.export_blob_path(date(2025, 2, 14)) == "main/2025/02/14/journal.jsonl"
    assert storage.blob_url("acct1", date(2025, 2, 1), "eu").endswith(
        "/journal-exports/eu/2025/02/01/journal.jsonl")
    with pytest.raises(TypeError):
        storage.export_blob_path("2025-02-14")
