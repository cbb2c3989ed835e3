"""The per-record privacy ledger: exact Gaussian composition, parallel vs sequential, PLD for the rest."""

from __future__ import annotations

import math

import pytest
from dp_accounting.pld import privacy_loss_distribution as pld_lib
from dp_accounting.pld.common import DifferentialPrivacyParameters

from privbandit.privacy import (
    GaussianMechanism,
    L2BallChannel,
    LaplaceMechanism,
    LaplacePair,
    MechanismEntry,
    PrivacyBudgetExceeded,
    PrivacyLedger,
    PrivacySpec,
    SymmetricGaussianMechanism,
    gaussian_epsilon,
)


def gauss(z: float, name: str = "gaussian") -> MechanismEntry:
    return MechanismEntry("gaussian", z, name)


def pld_gaussian_epsilon(zs, delta, interval=1e-4):
    pld = None
    for z in zs:
        one = pld_lib.from_gaussian_mechanism(z, sensitivity=1.0, value_discretization_interval=interval)
        pld = one if pld is None else pld.compose(one)
    return float(pld.get_epsilon_for_delta(delta))


def test_single_release_gives_the_calibrated_epsilon():
    ledger = PrivacyLedger()
    mech = GaussianMechanism.calibrated(0.7, 1e-6, sensitivity=3.0)
    ledger.record(0, 100, mech.ledger_entry(), label="psi")
    assert ledger.guarantee(1e-6) == pytest.approx(0.7, rel=1e-6)
    assert ledger.n_records == 100
    assert ledger.record_epsilon(100, 1e-6) == 0.0  # untouched record


def test_exact_gaussian_composition_matches_formula_and_dp_accounting():
    zs = [1.5, 3.0, 4.0, 7.0]
    ledger = PrivacyLedger()
    for k, z in enumerate(zs):
        ledger.record(0, 10, gauss(z), label=f"stage {k}")
    for delta in (1e-5, 1e-3):
        exact = gaussian_epsilon(sum(z ** -2 for z in zs) ** -0.5, delta)
        eps = ledger.guarantee(delta)
        assert eps == pytest.approx(exact, rel=1e-12)
        pld = pld_gaussian_epsilon(zs, delta)
        # PLD is a pessimistic upper bound: never below the exact value, and close to it.
        assert exact <= pld * (1 + 1e-9)
        assert pld <= exact * 1.01 + 1e-4


def test_symmetric_gaussian_and_vector_gaussian_compose_as_gaussians():
    ledger = PrivacyLedger()
    a = SymmetricGaussianMechanism.calibrated(1.0, 1e-5, sensitivity=0.1)
    b = GaussianMechanism.calibrated(1.0, 1e-5, sensitivity=0.1)
    ledger.record(0, 5, a.ledger_entry())
    ledger.record(0, 5, b.ledger_entry())
    z = a.noise_multiplier / math.sqrt(2)  # two equal Gaussians: z / sqrt(2)
    assert ledger.guarantee(1e-5) == pytest.approx(gaussian_epsilon(z, 1e-5), rel=1e-12)
    assert ledger.guarantee(1e-5) > 1.0


def test_parallel_composition_over_disjoint_ranges_vs_sequential():
    m = GaussianMechanism.calibrated(1.0, 1e-5, sensitivity=1.0).ledger_entry()
    parallel = PrivacyLedger()
    parallel.record(0, 50, m, label="stage 0")
    parallel.record(50, 100, m, label="stage 1")
    parallel.record(100, 300, m, label="stage 2")
    assert parallel.guarantee(1e-5) == pytest.approx(1.0, rel=1e-6)
    parallel.check(PrivacySpec("jdp", 1.0, 1e-5))
    sequential = PrivacyLedger()
    for k in range(3):
        sequential.record(0, 100, m, label=f"stage {k}")
    expected = gaussian_epsilon(m.parameter / math.sqrt(3), 1e-5)
    assert sequential.guarantee(1e-5) == pytest.approx(expected, rel=1e-12)
    assert expected > 1.0
    with pytest.raises(PrivacyBudgetExceeded, match="epsilon"):
        sequential.check(PrivacySpec("jdp", 1.0, 1e-5))
    # Partial overlap: only the records touched twice pay twice.
    overlap = PrivacyLedger()
    overlap.record(0, 60, m, label="a")
    overlap.record(40, 100, m, label="b")
    assert overlap.record_epsilon(10, 1e-5) == pytest.approx(1.0, rel=1e-6)
    assert overlap.record_epsilon(50, 1e-5) == pytest.approx(gaussian_epsilon(m.parameter / math.sqrt(2), 1e-5))
    assert overlap.record_epsilon(90, 1e-5) == pytest.approx(1.0, rel=1e-6)
    assert overlap.guarantee(1e-5) == pytest.approx(overlap.record_epsilon(50, 1e-5))
    assert [seg[:2] for seg in overlap.segments()] == [(0, 40), (40, 60), (60, 100)]


def test_extend_shifts_ranges_so_epochs_compose_in_parallel():
    m = gauss(4.0)
    epoch = PrivacyLedger()
    epoch.record(0, 10, m, label="W")
    epoch.record(10, 20, m, label="psi")
    total = PrivacyLedger()
    total.extend(epoch, offset=0)
    total.extend(epoch, offset=20)
    assert total.n_records == 40
    assert total.guarantee(1e-5) == pytest.approx(gaussian_epsilon(4.0, 1e-5), rel=1e-12)
    clash = PrivacyLedger()
    clash.extend(epoch, offset=0)
    clash.extend(epoch, offset=5)  # overlapping users: composed sequentially
    assert clash.guarantee(1e-5) == pytest.approx(gaussian_epsilon(4.0 / math.sqrt(2), 1e-5), rel=1e-12)


def test_adjacent_identical_releases_merge():
    ledger = PrivacyLedger()
    for start in range(0, 100, 10):
        ledger.record(start, start + 10, gauss(2.0), kind="local", label="H")
    assert len(ledger.releases) == 1 and ledger.releases[0].stop == 100
    ledger.record(100, 100, gauss(2.0))  # empty range: nothing recorded
    assert len(ledger.releases) == 1
    with pytest.raises(ValueError, match="kind"):
        ledger.record(0, 1, gauss(2.0), kind="global")
    with pytest.raises(ValueError, match="stop"):
        ledger.record(5, 3, gauss(2.0))
    assert ledger.summary()[0]["kind"] == "local"


def test_pure_mechanisms_compose_by_summing():
    ledger = PrivacyLedger()
    ledger.record(0, 10, LaplacePair(0.3).ledger_entry(), kind="local")
    ledger.record(0, 10, L2BallChannel(0.5, 3).ledger_entry(), kind="local")
    ledger.record(0, 10, LaplaceMechanism.calibrated(0.2, sensitivity=2.0).ledger_entry())
    eps = ledger.guarantee(1e-9)
    assert eps <= 1.0 + 1e-9
    assert eps == pytest.approx(1.0, rel=1e-3)  # basic composition is tight at this small delta
    ledger.check(PrivacySpec("ldp", 1.0, 1e-9))
    ledger.record(0, 10, L2BallChannel(0.01, 3).ledger_entry(), kind="local")
    with pytest.raises(PrivacyBudgetExceeded):
        ledger.check(PrivacySpec("ldp", 1.0, 1e-9))


def test_mixed_pure_and_gaussian_through_the_accountant():
    z, eps_pure, delta = 3.0, 0.5, 1e-5
    ledger = PrivacyLedger()
    ledger.record(0, 10, gauss(z))
    ledger.record(0, 10, LaplacePair(eps_pure).ledger_entry())
    got = ledger.guarantee(delta)
    # Independent computation with dp-accounting: Gaussian PLD composed with the Laplace PLD.
    pld = pld_lib.from_gaussian_mechanism(z, sensitivity=1.0, value_discretization_interval=1e-4)
    pld = pld.compose(pld_lib.from_laplace_mechanism(1.0 / eps_pure, sensitivity=1.0,
                                                     value_discretization_interval=1e-4))
    assert got == pytest.approx(pld.get_epsilon_for_delta(delta), rel=1e-9)
    # More than either part alone, and at most basic composition of the parts.
    alone = gaussian_epsilon(z, delta)
    assert alone < got <= alone + eps_pure + 1e-9
    # A generic pure entry composes basically (dp-accounting has no pure-epsilon event): the Gaussian's
    # closed-form epsilon plus the pure epsilon, never below the PLD of the pair.
    pure = PrivacyLedger()
    pure.record(0, 10, gauss(z))
    pure.record(0, 10, MechanismEntry("pure", eps_pure, "l2-ball"))
    ref = pld_lib.from_gaussian_mechanism(z, sensitivity=1.0, value_discretization_interval=1e-4).compose(
        pld_lib.from_privacy_parameters(DifferentialPrivacyParameters(eps_pure, 0.0),
                                        value_discretization_interval=1e-4))
    assert pure.guarantee(delta) == pytest.approx(alone + eps_pure, rel=1e-12)
    assert ref.get_epsilon_for_delta(delta) <= pure.guarantee(delta)


def test_check_returns_the_worst_epsilon_and_raises_only_when_exceeded():
    m = GaussianMechanism.calibrated(1.0, 1e-5, sensitivity=1.0)
    ledger = PrivacyLedger()
    ledger.record(0, 10, m.ledger_entry())
    assert ledger.check(PrivacySpec("jdp", 1.0, 1e-5)) == pytest.approx(1.0, rel=1e-6)
    with pytest.raises(PrivacyBudgetExceeded, match="above the spec"):
        ledger.check(PrivacySpec("jdp", 0.99, 1e-5))
    with pytest.raises(PrivacyBudgetExceeded):
        ledger.check(PrivacySpec("jdp", 1.0, 1e-6))  # same noise, smaller delta: more epsilon
    assert PrivacyLedger().check(PrivacySpec("jdp", 0.1, 1e-9)) == 0.0
    with pytest.raises(ValueError, match="family"):
        bad = PrivacyLedger()
        bad.record(0, 1, gauss(1.0))
        bad.record(0, 1, MechanismEntry("exponential", 1.0, "x"))
        bad.guarantee(1e-5)


def _segments_by_scan(ledger: PrivacyLedger) -> list:
    """segments() the slow way: the releases touching each range between consecutive start/stop points."""
    from collections import Counter

    points = sorted({r.start for r in ledger.releases} | {r.stop for r in ledger.releases})
    out = []
    for a, b in zip(points[:-1], points[1:]):
        counts = Counter(r.entry for r in ledger.releases if r.start <= a and r.stop >= b)
        if counts:
            out.append((a, b, tuple(sorted(counts.items(), key=lambda kv: (kv[0].family, kv[0].parameter,
                                                                              kv[0].name)))))
    return out


@pytest.mark.parametrize("seed", range(6))
def test_segments_sweep_equals_a_scan_of_every_release(seed):
    import numpy as np

    rng = np.random.default_rng(seed)
    entries = [gauss(2.0), gauss(3.0), gauss(3.0, "symmetric-gaussian"), MechanismEntry("pure", 0.5, "randomized")]
    ledger = PrivacyLedger()
    for _ in range(60):               # overlaps, gaps, nested and adjacent ranges, repeated entries
        start = int(rng.integers(0, 50))
        ledger.record(start, start + int(rng.integers(1, 20)), entries[int(rng.integers(len(entries)))],
                      label=str(int(rng.integers(3))))
    for at in (30, 70):                # empty ranges touch nothing (their points still bound the ranges)
        ledger.releases.append(ledger.releases[0].__class__(at, at, entries[0], "central", "empty"))
    got = ledger.segments()
    assert got == _segments_by_scan(ledger) and len(got) > 10
    assert all(a < b for a, b, _ in got) and 70 not in {a for a, _, _ in got} and 30 in {a for a, _, _ in got}

