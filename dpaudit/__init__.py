"""dpaudit: certified privacy accounting and empirical auditing.

The three layers:

* :mod:`dpaudit.events` and :mod:`dpaudit.ledger` say what was released;
* :mod:`dpaudit.accounting` turns that into certified (ε, δ) under every applicable method,
  with :mod:`dpaudit.conversions` for exact GDP ↔ (ε, δ);
* :mod:`dpaudit.audit` checks certified claims empirically.
"""

__version__ = "0.1.0"
