"""Cells of an experiment grid: one (policy, instance) simulated at a scale, with its ledgers
checked and its final regret summarised; grids of cells run on an optional executor.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from concurrent.futures import Executor
from dataclasses import dataclass
from typing import Any

import numpy as np

from bandits.engine.results import log_checkpoints
from bandits.engine.simulator import simulate
from bandits.environments import parse_env
from bandits.full_info.policies import RNMFTNL, NaiveFTNL
from bandits.lazy.baselines import DPSE, AdaP
from bandits.lazy.policies import LazyDPTS, LazyUCB
from bandits.policy import Policy
from dpaudit.declaration import Declaration, check_ledgers
from dpaudit.tasks import run_tasks

LABELS = {
    "lazy-ucb": "Anytime-Lazy-UCB",
    "lazy-dp-ts": "Lazy-DP-TS",
    "dp-se": "DP-SE",
    "adap-klucb": "AdaP-KLUCB",
    "ts": "modified TS (b, c)",
    "rnm-published": "RNM-FTNL, Lap(1/eps) (certified 2 eps)",
    "rnm-corrected": "RNM-FTNL, Lap(2/eps) (certified eps)",
    "naive": "naive FTNL, Lap(K/eps)",
}
"""How the figures and tables name each algorithm."""

__all__ = [
    "LABELS",
    "Scale",
    "SCALES",
    "policy_for",
    "Cell",
    "run_cell",
]


@dataclass(frozen=True)
class Scale:
    """Horizons and repetitions of one run of the experiments."""

    name: str
    T: int
    runs: int
    full_T: int
    full_runs: int
    Ks: tuple[int, ...]
    fig5_T: int
    fig5_runs: int
    tuner_runs: int
    tuner_candidates: int


SCALES = {
    "full": Scale("full", 1_000_000, 20, 2**20 - 1, 20, (4, 16, 64), 100_000, 10, 10, 10),
    "reduced": Scale("reduced", 40_000, 5, 2**14 - 1, 4, (4, 16), 20_000, 10, 20, 4),
}
"""The papers' scale and the suite's. At the reduced scale every Lazy-DP-TS run, and every tuner run
of Thompson sampling with b ≤ 2000, has T × R ≥ 2·10⁵ rounds, where the compiled kernels take over
from the per-round NumPy loops (:data:`bandits.engine.compiled.KERNEL_MIN_ROUNDS`; same results).
The grid runs 4·10⁴ rounds × 5 runs a cell, not 2·10⁴ × 10, because AdaP-KLUCB's cost grows with
the runs (9 s of CPU against 15 s); Figure 5 has 10 runs a cell and its tuner 20 (5 s against
17–22 s with 3 and 3, which ran the NumPy loops)."""


def policy_for(alg: str, eps: float, T: int) -> Policy:
    """The configured policy of an experiment label."""
    if alg == "lazy-ucb":
        return LazyUCB(epsilon=eps)
    if alg == "lazy-dp-ts":
        return LazyDPTS(epsilon=eps)
    if alg == "dp-se":
        return DPSE(epsilon=eps, beta=1.0 / T)
    if alg == "adap-klucb":
        return AdaP(epsilon=eps, index="klucb")
    if alg == "rnm-published":
        return RNMFTNL(epsilon=eps, noise="published")
    if alg == "rnm-corrected":
        return RNMFTNL(epsilon=eps, noise="corrected")
    if alg == "naive":
        return NaiveFTNL(epsilon=eps)
    raise ValueError(f"unknown experiment algorithm {alg!r}")


@dataclass(frozen=True)
class Cell:
    """One (algorithm, environment, ε) simulation."""

    alg: str
    env: str
    eps: float
    T: int
    runs: int
    seed: int = 0
    policy: Policy | None = None  # given directly (Thompson sampling), else from ``alg``


def run_cell(cell: Cell) -> dict[str, Any]:
    """Simulate one cell, check every repetition's ledger against the declaration, and return
    the curves (mean, s.e. at the checkpoints) and the final pseudo-regret of every run."""
    pol = cell.policy or policy_for(cell.alg, cell.eps, cell.T)
    env = parse_env(cell.env)
    t0, c0 = time.perf_counter(), time.process_time()
    ck = log_checkpoints(cell.T, 60)
    sim = simulate(pol, env, cell.T, cell.runs, cell.seed, checkpoints=ck, progress=False)
    decl = pol.declare(cell.T, env.n_arms, env.structure)
    if decl is None:
        raise ValueError(f"{pol.name} declares no privacy: an experiment cell needs a private algorithm")
    check = check_ledgers(sim.ledgers, decl)
    check.raise_if_failed()
    return {
        "alg": cell.alg,
        "env": cell.env,
        "eps": cell.eps,
        "T": cell.T,
        "runs": cell.runs,
        "policy": pol.name,
        "t": sim.checkpoints.tolist(),
        "mean": sim.mean("pseudo").tolist(),
        "stderr": sim.stderr("pseudo").tolist(),
        "final": sim.pseudo_regret[:, -1].tolist(),
        "ledger_ok": check.ok,
        "certified_epsilon": _epsilon_of(decl),
        "seconds": time.perf_counter() - t0,
        "cpu_seconds": time.process_time() - c0,
    }


_COST = {"lazy-dp-ts": 8.0, "lazy-ucb": 5.0, "adap-klucb": 1.9, "dp-se": 1.0}
"""Relative CPU cost of a cell per round and repetition, by algorithm (the stored full-scale run,
``docs/img/private_stochastic_results.json``: 7.3–8.8, 4.9–5.7, 1.7–2.0 and 1.0–1.2 s per
10⁶ × 20 cell); other algorithms count 1."""


def _map(cells: Sequence[Cell], executor: Executor | None) -> list[dict[str, Any]]:
    """:func:`run_cell` of every cell, results in order, on the executor if given. With an
    executor the cells are submitted longest first (Graham's LPT rule), so that no worker is left
    with a long cell while the others idle; every cell has its own seed, so the order changes no
    number."""
    if executor is None:
        return run_tasks(run_cell, [(c,) for c in cells], executor=None)
    order = sorted(range(len(cells)),
                   key=lambda i: -cells[i].T * cells[i].runs * _COST.get(cells[i].alg, 1.0))
    done = run_tasks(run_cell, [(cells[i],) for i in order], executor=executor)
    out: list[dict[str, Any]] = [{} for _ in cells]
    for i, r in zip(order, done):
        out[i] = r
    return out


def _summary(r: dict[str, Any]) -> tuple[float, float]:
    f = np.asarray(r["final"])
    return float(f.mean()), float(f.std(ddof=1) / math.sqrt(f.size)) if f.size > 1 else 0.0


def _cell(table: list[dict[str, Any]], setting: int, eps: float, alg: str) -> dict[str, Any]:
    return next(r for r in table if r["setting"] == setting and r["eps"] == eps and r["alg"] == alg)


def _epsilon_of(decl: Declaration) -> float | None:
    """The ε of a declaration whose event is one pure ε-DP release kind (None otherwise)."""
    eps = getattr(decl.event, "epsilon", None)
    return None if eps is None else float(eps)
