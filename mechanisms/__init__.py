"""Noise mechanisms that sample (vectorised, seeded), record their privacy events in a ledger,
and expose what an auditor needs (privacy-loss functions, exact output distributions).

Output mechanisms: :class:`LaplaceMechanism`, :class:`GaussianMechanism`,
:class:`RandomizedResponse`, :class:`LaplaceReportNoisyMax`, :class:`GaussianReportNoisyMax`,
:class:`ExponentialMechanism`. Continual release: :class:`BinaryTreeCounter`,
:class:`HybridCounter`, :class:`LazyEpochSums`, :class:`GlobalEpochSums`. Local randomizers:
:class:`LaplaceVectorRandomizer`, :class:`GaussianVectorRandomizer`,
:class:`CascadeClickRandomizer`, :class:`LeastPulledLaplaceRandomizer`.

The floating-point samplers here are for simulation and auditing; they are not hardened
against floating-point attacks and must not be used to release real sensitive data.
"""

from typing import TYPE_CHECKING

from dpaudit.lazy import exports

if TYPE_CHECKING:
    from mechanisms.base import NoiseMechanism, Norm
    from mechanisms.continual.epoch_sums import GlobalEpochSums, LazyEpochSums
    from mechanisms.continual.hybrid import HybridCounter
    from mechanisms.continual.tree import BinaryTreeCounter
    from mechanisms.exponential import ExponentialMechanism
    from mechanisms.gaussian import GaussianMechanism
    from mechanisms.laplace import LaplaceMechanism
    from mechanisms.local import (
        CascadeClickRandomizer,
        GaussianVectorRandomizer,
        LaplaceVectorRandomizer,
        LeastPulledLaplaceRandomizer,
    )
    from mechanisms.randomized_response import RandomizedResponse
    from mechanisms.report_noisy_max import GaussianReportNoisyMax, LaplaceReportNoisyMax

# every public name, loaded with its module on first use (dpaudit.lazy)
_EXPORTS = {
    "NoiseMechanism": "base",
    "Norm": "base",
    "GlobalEpochSums": "continual.epoch_sums",
    "LazyEpochSums": "continual.epoch_sums",
    "HybridCounter": "continual.hybrid",
    "BinaryTreeCounter": "continual.tree",
    "ExponentialMechanism": "exponential",
    "GaussianMechanism": "gaussian",
    "LaplaceMechanism": "laplace",
    "CascadeClickRandomizer": "local",
    "GaussianVectorRandomizer": "local",
    "LaplaceVectorRandomizer": "local",
    "LeastPulledLaplaceRandomizer": "local",
    "RandomizedResponse": "randomized_response",
    "GaussianReportNoisyMax": "report_noisy_max",
    "LaplaceReportNoisyMax": "report_noisy_max",
}
__getattr__, __dir__ = exports(__name__, _EXPORTS)

__all__ = [
    "NoiseMechanism",
    "Norm",
    "LaplaceMechanism",
    "GaussianMechanism",
    "RandomizedResponse",
    "LaplaceReportNoisyMax",
    "GaussianReportNoisyMax",
    "ExponentialMechanism",
    "BinaryTreeCounter",
    "HybridCounter",
    "LazyEpochSums",
    "GlobalEpochSums",
    "LaplaceVectorRandomizer",
    "GaussianVectorRandomizer",
    "CascadeClickRandomizer",
    "LeastPulledLaplaceRandomizer",
]
