"""A minimal double-entry journal held in memory (the DB layer mirrors it)."""
from collections import defaultdict


class UnbalancedEntry(ValueError):
    pass


class Journal:
    def __init__(self):
        self.entries = []
        self._balances = defaultdict(int)

    def post(self, reference, lines):
        """Record an entry; debits must equal credits or nothing is recorded."""
        debit = sum(line.get("debit", 0) for line in lines)
        credit = sum(line.get("credit", 0) for line in lines)
        if debit != credit or debit == 0:
            raise UnbalancedEntry(f"{reference}: debit {debit} != credit {credit}")
        if any(e["reference"] == reference for e in self.entries):
            raise ValueError(f"duplicate reference {reference}")
        for line in lines:
            self._balances[line["account"]] += line.get("debit", 0) - line.get("credit", 0)
        self.entries.append({"reference": reference, "lines": list(lines)})

    def balance(self, account):
        return self._balances[account]

    def trial_balance(self):
        """Sum of all balances; zero whenever the journal is consistent."""
        return sum(self._balances.values())
