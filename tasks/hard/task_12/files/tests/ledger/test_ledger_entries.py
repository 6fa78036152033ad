import pytest

from services.ledger.entries import Journal, UnbalancedEntry


def test_balanced_entry_updates_balances():
    j = Journal()
    j.post("inv-1", [{"account": "cash", "debit": 700}, {"account": "revenue", "credit": 700}])
    assert j.balance("cash") == 700 and j.balance("revenue") == -700
    assert j.trial_balance() == 0


def test_unbalanced_entry_rejected_and_not_recorded():
    j = Journal()
    with pytest.raises(UnbalancedEntry):
        j.post("inv-2", [{"account": "cash", "debit": 5}, {"account": "revenue", "credit": 4}])
    assert j.entries == [] and j.balance("cash") == 0


def test_duplicate_reference_rejected():
    j = Journal()
    lines = [{"account": "a", "debit": 1}, {"account": "b", "credit": 1}]
    j.post("r", lines)
    with pytest.raises(ValueError):
        j.post("r", lines)
