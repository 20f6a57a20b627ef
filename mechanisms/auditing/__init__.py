"""What an audit of the toolkit's mechanisms needs: adversarial neighbour pairs
(:mod:`mechanisms.auditing.pairs`) and ready audit targets (:mod:`mechanisms.auditing.targets`).
"""
