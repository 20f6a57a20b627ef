"""The registered algorithms: each module exposes ``SPECS``, a tuple of
:class:`~bandits.registry.AlgorithmSpec` (see :mod:`bandits.registry`)."""
