"""The releases audit's pre-registered pairs for report-noisy-max FTNL (:class:`RNMFTNL`).

Report-noisy-max releases only the index of the largest noisy epoch sum. Its privacy loss is
largest when the changed round moves one candidate against all the others from a tie: under x
arm j's reward is 1 and every other 0, under x′ the reverse, on a table of ties (0.5) — a
replace-one change of one round's outcome vector, the unit of the certificate. The indicator
"the epoch's argmax is j" then has probabilities F(1)^{K−1}-like under x and F(−1)^{K−1}-like
under x′ for an arm whose noise is missing, a ratio up to e^{2(K−1)/b}, while the correct
mechanism keeps every ratio within e^{2/b} (Dwork & Roth 2014, "The Algorithmic Foundations of
Differential Privacy", Claim 3.9, and its replace-one factor 2).

A bug may touch one arm in one epoch only (a noise draw forgotten once), so the family has one
pair per arm and per global epoch, changed at the epoch's first round, each with the indicator of
its own arm in that epoch's release as a pre-registered statistic.

Example:
    >>> pairs, stats = release_design(8, 2)
    >>> [p.name for p in pairs][:2]
    ['arm 0 against the rest at round 0 (epoch 0)', 'arm 1 against the rest at round 0 (epoch 0)']
    >>> stats[pairs[3].name][0].describe()
    "release 'epoch 1 report-noisy-max' == 1"
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from bandits.auditing.black_box import PairDesign
from bandits.auditing.release_pilot import ReleaseStatistic
from bandits.auditing.releases import audited_arms
from bandits.full_info.epochs import epoch_bounds

__all__ = ["MAX_PAIR_ARMS", "release_design"]

MAX_PAIR_ARMS = 8
"""Arms with their own pairs (the last arm always among them), as for the default family."""


def release_design(
    horizon: int, n_arms: int
) -> tuple[Sequence[PairDesign], Mapping[str, Sequence[ReleaseStatistic]]]:
    """One pair per arm (up to :data:`MAX_PAIR_ARMS`) and per global epoch that starts before
    ``horizon`` (module docstring), each with the indicator of its arm in that epoch's release."""
    arms = audited_arms(n_arms, MAX_PAIR_ARMS)
    pairs, stats = [], {}
    s = 0
    while epoch_bounds(s)[0] < horizon:
        start = epoch_bounds(s)[0]
        for j in arms:
            up = tuple(float(i == j) for i in range(n_arms))
            down = tuple(1.0 - v for v in up)
            pair = PairDesign(
                f"arm {j} against the rest at round {start} (epoch {s})",
                (0.5,) * n_arms,
                start,
                tuple(range(n_arms)),
                (up, down),
            )
            pairs.append(pair)
            key = f"epoch {s} report-noisy-max"
            stats[pair.name] = (ReleaseStatistic("equals", (key,), (float(j),), (float(j),), (1.0,)),)
        s += 1
    return pairs, stats
