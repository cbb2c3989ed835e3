"""Local privacy by construction: the aggregation step of every local-DP oracle sees randomized outputs only.

Seen from outside, through public seams only. The oracle's ``mechanism`` hook hands back each randomizer a fit
builds wrapped so that its calls are recorded: every row must go through one of them once, and what they return
must never be (or share memory with) a raw row or reward, or equal one or the unnoised per-row statistic. A
:class:`~privbandit.privacy.replay.ReleaseTape` then replays one fit's releases to a fit of other rows: the
estimate must be the same, bit for bit (aggregation read the outputs only). Both must pass on every local oracle,
the first fire when a randomizer is bypassed (planted through the seam) and the second when a fit hands raw rows
to its aggregation (a subclass that overrides ``_add_rows``, which :class:`~privbandit.oracles.LocalEpochFit`
forbids its subclasses).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest
from conftest import oracle_dim

from privbandit.oracles import LocalEpochFit, make_oracle, oracle_class, oracle_names
from privbandit.oracles.iw_ldp import IWRegressionLDPFit
from privbandit.privacy import LocalRandomizer
from privbandit.privacy.replay import ReleaseTape

LOCAL = [n for n in oracle_names() if "ldp" in oracle_class(n).privacy_models
         and issubclass(oracle_class(n).fit_class, LocalEpochFit)]
MINE = ["ldp-1d", "iw-regression-ldp", "iw-fixed-p-ldp", "iw-glm-ldp", "ldp-sgd", "ssp-local"]


def _rows(n, d, seed):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1, 1, (n, d))
    x *= (0.999 * rng.uniform(0.05, 1, (n, 1))) / np.linalg.norm(x, axis=1, keepdims=True)
    y = np.clip(x @ np.full(d, 0.5 / np.sqrt(d)) + 0.1 * rng.standard_normal(n), -1, 1)
    return x, y


def _equal_rows(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether any row of ``a`` equals the same row of ``b`` (shapes permitting)."""
    a2 = np.asarray(a, dtype=float).reshape(a.shape[0], -1)
    b2 = np.asarray(b, dtype=float).reshape(b.shape[0], -1)
    if a2.shape != b2.shape:
        return False
    return bool(np.any(np.all(np.abs(a2 - b2) <= 1e-12, axis=1)))


@dataclass(frozen=True)
class Recorded:
    """Randomizes as ``randomizer`` and logs (output, unnoised statistic, rows, rewards) of each call into ``log``
    (``leak``: returns the unnoised statistic instead, a planted bypass of the channel)."""

    randomizer: LocalRandomizer
    log: list
    leak: bool = False

    def __call__(self, features, rewards, rng=None):
        stat = np.asarray(self.randomizer.statistic(features, rewards), dtype=float)
        out = stat.copy() if self.leak else self.randomizer(features, rewards, rng)
        self.log.append((out, stat, features, rewards))
        return out

    def ledger_entry(self):
        return self.randomizer.ledger_entry()


def detect_raw(log: list, x: np.ndarray, y: np.ndarray) -> list[str]:
    """Everything a randomizer returned that is a raw row, a raw reward or an unnoised statistic."""
    problems = []
    for i, (out, stat, xs, ys) in enumerate(log):
        if not isinstance(out, np.ndarray):
            problems.append(f"call {i}: returned a {type(out).__name__}, not an array of outputs")
            continue
        for raw, what in ((x, "features"), (y, "rewards"), (xs, "features"), (ys, "rewards")):
            if out is raw or np.shares_memory(out, raw):
                problems.append(f"call {i}: returned the raw {what} array itself")
        if _equal_rows(out, xs) or _equal_rows(out, np.asarray(ys)[:, None]):
            problems.append(f"call {i}: returned raw rows")
        if _equal_rows(out, stat):
            problems.append(f"call {i}: returned the unnoised statistic")
    return problems


def run_recorded(name: str, x: np.ndarray, y: np.ndarray, chunk: int = 37, seed: int = 0, leak: bool = False):
    """Fit oracle ``name`` on (x, y) in chunks, every randomizer it builds recorded through its ``mechanism`` seam:
    (the calls' log, the estimate, the fit)."""
    log = []
    fit = make_oracle(name, epsilon=1.0, delta=1e-5, mechanism=lambda r: Recorded(r, log, leak)).start(
        x.shape[0], dim=x.shape[1], rng=seed)
    for i in range(0, x.shape[0], chunk):
        fit.add(x[i:i + chunk], y[i:i + chunk])
    return log, fit.result(), fit


def reads_releases_only(start, x: np.ndarray, y: np.ndarray, seed: int = 9) -> bool:
    """Whether a fit of other rows, handed the releases of a fit of (x, y), gives the same estimate bit for bit
    (``start()``: a new fit for x.shape[0] rows)."""
    def fitted(rows, tape=None):
        xs, ys = rows
        fit = start()
        with ReleaseTape(replay=tape) as recorded:
            fit.add(xs, ys)
            est = fit.result()
        return est, recorded

    first, tape = fitted((x, y))
    second, _ = fitted(_rows(x.shape[0], x.shape[1], seed), tape)
    return all(np.array_equal(getattr(first, f), getattr(second, f)) for f in ("theta", "width_matrix", "width_scale"))


def test_every_local_oracle_of_issue_5_is_registered():
    assert set(MINE) <= set(LOCAL)


@pytest.mark.parametrize("name", LOCAL)
def test_local_fits_do_not_override_add_rows(name):
    assert oracle_class(name).fit_class._add_rows is LocalEpochFit._add_rows


@pytest.mark.parametrize("name", LOCAL)
def test_every_row_goes_through_a_randomizer_that_returns_no_raw_data(name):
    x, y = _rows(400, oracle_dim(name, 3), 1)
    log, est, _ = run_recorded(name, x, y)
    assert sum(out.shape[0] for out, *_ in log) == sum(xs.shape[0] for *_, xs, _ in log) == 400
    assert detect_raw(log, x, y) == []
    assert np.all(np.isfinite(est.theta))


@pytest.mark.parametrize("name", LOCAL)
def test_aggregation_never_receives_raw_data(name):
    x, y = _rows(400, oracle_dim(name, 3), 1)
    oracle = make_oracle(name, epsilon=1.0, delta=1e-5)
    assert reads_releases_only(lambda: oracle.start(400, dim=x.shape[1], rng=0), x, y)


@pytest.mark.parametrize("name", MINE)
def test_detector_flags_a_bypassed_randomizer(name):
    x, y = _rows(200, oracle_dim(name, 3), 2)
    log, _, _ = run_recorded(name, x, y, leak=True)
    problems = detect_raw(log, x, y)
    assert any("unnoised statistic" in p for p in problems), problems


def test_detector_flags_raw_rows_passed_to_aggregation():
    class Bypass(IWRegressionLDPFit):
        def _add_rows(self, stage, start, x, y):  # the structural violation the base class forbids
            super()._add_rows(stage, start, x, y)
            self._absorb(stage, np.asarray(self._randomizer(stage).statistic(x, y)))   # the raw statistic, too

    x, y = _rows(100, 3, 3)
    oracle = make_oracle("iw-regression-ldp", epsilon=1.0, delta=1e-5)
    link = oracle.start(1, dim=3).link
    assert reads_releases_only(lambda: oracle.fit_class(oracle, 100, 3, 1.0, link, np.random.default_rng(0)), x, y)
    assert not reads_releases_only(lambda: Bypass(oracle, 100, 3, 1.0, link, np.random.default_rng(0)), x, y)
    assert Bypass._add_rows is not LocalEpochFit._add_rows  # the structural check above catches it too


@pytest.mark.parametrize("name", ["iw-regression-ldp", "iw-glm-ldp", "ldp-sgd"])
def test_channel_of_a_stage_depends_only_on_earlier_stages(name):
    """Two datasets equal up to row r give identical channels up to the stage containing r."""
    x, y = _rows(600, 3, 4)
    x2, y2 = x.copy(), y.copy()
    x2[160:] = _rows(440, 3, 5)[0]
    seen = []
    for xs, ys in ((x, y), (x2, y2)):
        kw = {"epochs": 4} if name == "ldp-sgd" else {}
        built = []              # each stage's randomizer, in order, through the oracle's seam (one per non-empty stage)
        fit = make_oracle(name, epsilon=1.0, delta=1e-5, mechanism=lambda r, built=built: built.append(r) or r,
                          **kw).start(600, dim=3, rng=7)
        fit.add(xs, ys)
        fit.result()
        stages = [k for k, size in enumerate(fit.stage_sizes) if size > 0]
        assert len(built) == len(stages)
        seen.append((dict(zip(stages, (r.statistic for r in built))), fit.stage_starts))
    (s1, starts), (s2, _) = seen
    first_changed = int(np.searchsorted(starts, 160, side="right") - 1)
    probe_x, probe_y = _rows(20, 3, 9)
    for stage in (k for k in s1 if k <= first_changed):
        assert np.array_equal(s1[stage](probe_x, probe_y), s2[stage](probe_x, probe_y))
    later = [k for k in s1 if k > first_changed]
    assert any(not np.array_equal(s1[k](probe_x, probe_y), s2[k](probe_x, probe_y)) for k in later)
