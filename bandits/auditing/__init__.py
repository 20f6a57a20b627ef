"""Audits every algorithm can use.

* :mod:`bandits.auditing.black_box` — the black-box audit of any policy (action sequences on
  neighbouring streams, pilot-chosen pair and test, Clopper–Pearson bounds);
* :mod:`bandits.auditing.combined` — several audit components read as one verdict.

Family-specific audits live with their family (for example :mod:`bandits.thompson.audit`).
"""
