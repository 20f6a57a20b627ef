"""Audits every algorithm can use.

* :mod:`bandits.auditing.contract` — the contract every auditor fulfils: :class:`AuditSettings`
  in, one :class:`PolicyAudit` out (one component or several, one verdict, a readable ``str``);
* :mod:`bandits.auditing.black_box` — the black-box audit of any policy (action sequences on
  neighbouring streams, pilot-chosen pair and test, Clopper–Pearson bounds), the default auditor;
* :mod:`bandits.auditing.claims` — the certificate and the paper's claim an audit tests, and the
  detection floor and ceiling of a design;
* :mod:`bandits.auditing.leak_floor`, :mod:`bandits.auditing.mechanism_floor`,
  :mod:`bandits.auditing.replicated_floor` — a view's floor measured on the algorithm's own
  noise-scaled runs, on a component's noise-scaled mechanism, or by its whole audit replicated on
  the noise-scaled agent;
* :mod:`bandits.auditing.kept_floors` — floors measured on an algorithm, kept for their
  configuration and code (at every audit seed) and shown by later runs there at no cost;
* :mod:`bandits.auditing.text` — the wording of an audit section.

Family-specific audits live with their family (for example :mod:`bandits.thompson.audit`).
"""
