"""The releases audit's pairs for ranked lists, and its summed statistics scored on resampled sums
(``bandits/auditing/releases.py``, ``bandits/auditing/release_pilot.py``)."""

from __future__ import annotations

import numpy as np

from bandits.actions import SingleArm
from bandits.auditing.black_box import PairDesign
from bandits.auditing.contract import AuditSettings
from bandits.auditing.release_pilot import RESAMPLES, ReleaseStatistic, choose_scored, resampled_family
from bandits.auditing.releases import LIST_ROUNDS, default_pairs, release_pairs, zero_table_plays
from bandits.cascading.dp import CascadeDPCounts
from bandits.environments import parse_env
from bandits.lazy.policies import LazyUCB
from bandits.registry import get
from dpaudit.audit.clopper_pearson import cp_upper, epsilon_from_rates
from dpaudit.audit.pilot import choose_tests, main_splits, pilot_choice

SETTINGS = AuditSettings(trials=16_000, seed=4, confidence=0.975)


def test_a_ranked_list_gets_a_click_at_its_first_against_its_last_position() -> None:
    lists = {t: (4 * t, 4 * t + 1, 4 * t + 2, 4 * t + 3) for t in range(6)} | {7: (1,)}
    pairs = [p for p in release_pairs(10, 24, lists=lists) if p.name.startswith("a click")]
    assert [p.round for p in pairs] == list(range(LIST_ROUNDS))
    null, alt = pairs[2].tables(10)
    assert null[2, 8] == 1.0 and null[2].sum() == 1.0  # the first item is attractive: a click at 1
    assert alt[2, 11] == 1.0 and alt[2].sum() == 1.0  # only the last: 1-3 examined, a click at 4
    assert null[:2].sum() == 0.0 and alt[3:].sum() == 0.0


def test_a_cascade_shows_its_unseen_items_in_index_order_and_gets_their_pairs() -> None:
    env = get("cascade-dp-sound").env_parser("cascade:l=8,k=4,p=0.2,gap=0.15")
    policy = CascadeDPCounts(epsilon=1.0)
    plays = zero_table_plays(policy, env, 6, SETTINGS, runs=16)
    assert plays.lists[0] == (0, 1, 2, 3) and plays.lists[1] == (4, 5, 6, 7)
    names = [p.name for p in default_pairs(policy, env, 6, SETTINGS)]
    assert "a click at position 1 vs 4 at round 1 (items 4, 7), others 0" in names
    single = parse_env("bernoulli:0.5,0.5,0.5")
    assert isinstance(single.structure, SingleArm)
    assert not any(
        n.startswith("a click") for n in (p.name for p in default_pairs(LazyUCB(1.0), single, 6, SETTINGS))
    )


def _laplace_columns(keys: int, shift: float, m: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
    return {f"k{i}": shift + rng.laplace(0.0, 5.0, m) for i in range(keys)}


def _sum_of(keys: int) -> ReleaseStatistic:
    return ReleaseStatistic("laplace", tuple(f"k{i}" for i in range(keys)), (0.0,) * keys, (1.0,) * keys,
                            (5.0,) * keys)  # fmt: skip


def _expected_bound(stat: ReleaseStatistic, threshold: float, orientation: int, n: int) -> float:
    """The ε bound at the expected counts of ``n`` runs per side (rates from 200 000 fresh runs)."""
    rng = np.random.default_rng(99)
    big = 200_000
    x = stat(_laplace_columns(len(stat.keys), 0.0, big, rng), big) * orientation
    y = stat(_laplace_columns(len(stat.keys), 1.0, big, rng), big) * orientation
    t = threshold * orientation
    p = cp_upper(np.array([round(np.mean(x >= t) * n)]), n, 0.0125)
    q = cp_upper(np.array([round(np.mean(y < t) * n)]), n, 0.0125)
    return float(np.asarray(epsilon_from_rates(p, q, 1e-6))[0])


def test_a_sum_of_ten_releases_is_thresholded_in_its_tail_on_resampled_sums() -> None:
    """Ten Laplace(5) releases moved by 1 (pure ε = 2 against a certificate of 1), 1200 scoring
    runs per side, 16 000 main runs, six pilots: the resampled sums (scored as 12 000 runs) pick
    tests whose bound at the expected counts exceeds the certificate in every pilot (1.13-1.24),
    the pilot's own choice on the joint runs 0.91-1.13."""
    stat, m, n = _sum_of(10), 1200, 16_000
    resampled, joint = [], []
    for seed in range(6):
        rng = np.random.default_rng(seed)
        x, y = _laplace_columns(10, 0.0, m, rng), _laplace_columns(10, 1.0, m, rng)
        fam = resampled_family(stat, x, y, m, SETTINGS)
        assert fam.null_size == fam.alt_size == min(10 * m, RESAMPLES)
        best = choose_tests([fam], main_splits(n, (0.5,)), alpha=0.0125, kind="epsilon", delta=1e-6,
                            claim=None)[0]  # fmt: skip
        plain = pilot_choice(
            [(stat(x, m), stat(y, m), None)], n, confidence=0.975, kind="epsilon", delta=1e-6
        )
        resampled.append(_expected_bound(stat, best.threshold, best.orientation, n))
        joint.append(_expected_bound(stat, plain.threshold, plain.orientation, n))
    assert min(resampled) > 1.0
    assert np.mean(resampled) > np.mean(joint) + 0.08 and min(resampled) > min(joint) + 0.1


def test_one_release_is_scored_on_its_own_runs() -> None:
    rng = np.random.default_rng(6)
    x, y = _laplace_columns(1, 0.0, 800, rng), _laplace_columns(1, 1.0, 800, rng)
    fam = resampled_family(_sum_of(1), x, y, 800, SETTINGS)
    assert fam.null_size == 800  # no gain from resampling a single term: the pilot's own pessimism
    assert fam.false_positives.max() <= 800 and fam.false_negatives.max() <= 800


def test_the_pilot_prefers_the_pair_whose_releases_can_exceed_the_certificate() -> None:
    """Five releases moved by a fifth of their scale cannot exceed ε = 1; ten can (ε = 2). The
    resampled sums rank the ten first, and the frozen test is their tail threshold."""
    rng = np.random.default_rng(7)
    m, n = 1200, 16_000
    zero = (0.0,) * 10
    five = PairDesign("five", zero, 0, None)
    ten = PairDesign("ten", zero, 1, None)
    scored = {
        0: (_laplace_columns(5, 0.0, m, rng), _laplace_columns(5, 1.0, m, rng), m),
        1: (_laplace_columns(10, 0.0, m, rng), _laplace_columns(10, 1.0, m, rng), m),
    }
    fitted = [(1.0, 0, five, [_sum_of(5)]), (1.0, 1, ten, [_sum_of(10)])]
    pc, pair, stat, count = choose_scored(fitted, scored, n, "epsilon", SETTINGS)
    assert pair is ten and count == 2
    fam = resampled_family(stat, scored[1][0], scored[1][1], m, SETTINGS)
    best = choose_tests([fam], main_splits(n, (0.5,)), alpha=0.0125, kind="epsilon", delta=1e-6, claim=None)[
        0
    ]
    assert (pc.threshold, pc.orientation) == (best.threshold, best.orientation)
    assert _expected_bound(stat, pc.threshold, pc.orientation, n) > 1.0
