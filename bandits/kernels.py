"""Which compiled kernels (numba, the ``fast`` extra) are available, without importing numba.

Lazy-DP-TS (seed 002, Alg. 3) draws K Beta variates every round from parameters that depend on
the round, so no engine can jump ahead without drawing them. Its per-repetition loop is compiled
with numba when numba is installed (``pip install dpaudit[fast]``;
:func:`bandits._fast.lazy_ts_chunk`); numba's ``numpy.random.Generator.beta`` runs NumPy's own
algorithm on the same bit generator (the state is shared and advances), so the kernel gives
**bit-identical** actions to the pure-NumPy step loop of :class:`bandits.lazy.LazyDPTS` (tested).
Without numba the step loop runs instead.

:data:`HAVE_NUMBA` says whether numba is installed and enabled (``DPAUDIT_NUMBA=0`` disables every
kernel; the older ``DPAUDIT_NO_NUMBA=1`` too). It is decided without importing numba (0.4 s and
about 90 MB), which happens only when a kernel first runs.

>>> isinstance(HAVE_NUMBA, bool)
True
"""

from __future__ import annotations

from bandits._fast import installed

__all__ = ["HAVE_NUMBA"]

HAVE_NUMBA = installed()
