import base64
import datetime
import decimal
import sqlite3

import pytest

from ledger_sync import alerts, cli, importer, settings


@pytest.mark.parametrize("text,value", [("-1.250,00", "-1250.00"), ("89.99", "89.99"), ("0,5", "0.5")])
def test_parse_amount(text, value):
    assert importer.parse_amount(text) == decimal.Decimal(value)


def test_parse_csv(statement):
    entries = importer.parse_csv(statement.read_text())
    assert [e.bank_ref for e in entries] == ["TRX-0001", "TRX-0002", "TRX-0003"]
    assert entries[0].booked_on == datetime.date(2025, 3, 3)
    assert entries[0].memo == "Office rent March"
    assert entries[2].currency == "EUR"


def test_write_entries_dedupes(statement):
    conn = sqlite3.connect(":memory:")
    entries = importer.parse_csv(statement.read_text())
    assert importer.write_entries(conn, 1200, entries) == 3
    assert importer.write_entries(conn, 1200, entries) == 0


def test_settings_load():
    cp = settings.load()
    assert settings.alert_threshold(cp) == decimal.Decimal("25000.00")
    assert cp.get("ledger", "default_currency") == "EUR"


def test_twilio_key_from_environment(monkeypatch):
    monkeypatch.setenv("TWILIO_API_KEY", "key-from-env")
    monkeypatch.setenv("TWILIO_API_SECRET", "secret-from-env")
    req = alerts.sms_request(settings.load(), "hello")
    assert req.get_header("Authorization") == "Basic " + base64.b64encode(
        b"key-from-env:secret-from-env").decode()
    assert "/Accounts/AC" in req.full_url


def test_large_transactions_trigger_sms(statement, tmp_path, monkeypatch):
    monkeypatch.setenv("TWILIO_API_KEY", "k")
    sent = []
    assert cli.main(["import", str(statement), "--account", "1200",
                     "--database", str(tmp_path / "l.db")], send=sent.append) == 0
    assert len(sent) == 1
    assert b"Acme" in sent[0].data
