"""ledger-sync: bank statements into the accounting ledger."""
