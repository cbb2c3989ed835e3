"""Local privacy by construction: the aggregation step of every local-DP oracle sees randomized outputs only.

The detector records every object ``_absorb`` (the aggregation hook a local fit implements) receives and flags any
that is (or shares memory with) a raw row, or equals a raw row, a raw reward or the unnoised per-row statistic. It
must pass on every local oracle and fire when a randomizer is bypassed; the randomizers are seen, and the bypass
planted, through the oracle's public ``mechanism`` seam.
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import oracle_dim

from privbandit.oracles import LocalEpochFit, make_oracle, oracle_class, oracle_names
from privbandit.oracles.iw_ldp import IWRegressionLDPFit
from privbandit.privacy import LocalRandomizer

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


class AbsorbRecorder:
    """Wraps a fit's ``_absorb``; remembers what aggregation received and the raw truth."""

    def __init__(self, fit, forward: bool = True):
        self.fit = fit
        self.forward = forward
        self.received: list[tuple[int, np.ndarray]] = []
        self.raw_stats: list[np.ndarray] = []
        self._absorb = fit._absorb
        fit._absorb = self.absorb

    def absorb(self, stage, outputs):
        self.received.append((stage, outputs))
        if self.forward:
            self._absorb(stage, outputs)


def detect_raw(recorder: AbsorbRecorder, x: np.ndarray, y: np.ndarray) -> list[str]:
    """Everything aggregation received that is a raw row, a raw reward or an unnoised statistic."""
    problems = []
    pos = 0
    for stage, out in recorder.received:
        if not isinstance(out, np.ndarray):
            problems.append(f"stage {stage}: received a {type(out).__name__}, not an array of outputs")
            continue
        m = out.shape[0]
        xs, ys = x[pos:pos + m], y[pos:pos + m]
        for raw, what in ((x, "features"), (y, "rewards")):
            if out is raw or np.shares_memory(out, raw):
                problems.append(f"stage {stage}: received the raw {what} array itself")
        if _equal_rows(out, xs) or _equal_rows(out, ys[:, None]):
            problems.append(f"stage {stage}: received raw rows")
        pos += m
    for (stage, out), stat in zip(recorder.received, recorder.raw_stats):
        if _equal_rows(out, stat):
            problems.append(f"stage {stage}: received the unnoised statistic")
    return problems


def run_recorded(name: str, x: np.ndarray, y: np.ndarray, chunk: int = 37, seed: int = 0, leak: bool = False):
    d = x.shape[1]
    built = []

    def randomizer(r):
        built.append(r)
        if leak:  # bypass the channel: the statistic goes out unnoised
            return LeakyRandomizer(r.statistic, r.radius, r.channel, r.feature_bound)
        return r

    fit = make_oracle(name, epsilon=1.0, delta=1e-5, mechanism=randomizer).start(x.shape[0], dim=d, rng=seed)
    rec = AbsorbRecorder(fit)
    original_absorb = rec.absorb

    def absorb(stage, outputs):
        # The unnoised statistic of the same rows, recomputed for the detector (not seen by the fit).
        start = sum(o.shape[0] for _, o in rec.received)
        xs, ys = x[start:start + outputs.shape[0]], y[start:start + outputs.shape[0]]
        rec.raw_stats.append(np.asarray(built[-1].statistic(xs, ys)))
        return original_absorb(stage, outputs)

    fit._absorb = absorb
    for i in range(0, x.shape[0], chunk):
        fit.add(x[i:i + chunk], y[i:i + chunk])
    est = fit.result()
    return rec, est, fit


class LeakyRandomizer(LocalRandomizer):
    """A planted bug: returns the statistic without noise."""

    def _privatize(self, x, y, rng):
        return np.asarray(self.statistic(x, y), dtype=float)


def test_every_local_oracle_of_issue_5_is_registered():
    assert set(MINE) <= set(LOCAL)


@pytest.mark.parametrize("name", LOCAL)
def test_local_fits_do_not_override_add_rows(name):
    assert oracle_class(name).fit_class._add_rows is LocalEpochFit._add_rows


@pytest.mark.parametrize("name", LOCAL)
def test_aggregation_never_receives_raw_data(name):
    x, y = _rows(400, oracle_dim(name, 3), 1)
    rec, est, _ = run_recorded(name, x, y)
    assert sum(o.shape[0] for _, o in rec.received) == 400
    assert len(rec.raw_stats) == len(rec.received) > 0
    assert detect_raw(rec, x, y) == []
    assert np.all(np.isfinite(est.theta))


@pytest.mark.parametrize("name", MINE)
def test_detector_flags_a_bypassed_randomizer(name):
    x, y = _rows(200, oracle_dim(name, 3), 2)
    rec, _, _ = run_recorded(name, x, y, leak=True)
    problems = detect_raw(rec, x, y)
    assert any("unnoised statistic" in p for p in problems), problems


def test_detector_flags_raw_rows_passed_to_aggregation():
    class Bypass(IWRegressionLDPFit):
        def _add_rows(self, stage, start, x, y):  # the structural violation the base class forbids
            self._absorb(stage, x)

    x, y = _rows(100, 3, 3)
    oracle = make_oracle("iw-regression-ldp", epsilon=1.0, delta=1e-5)
    fit = Bypass(oracle, 100, 3, 1.0, oracle.start(1, dim=3).link, np.random.default_rng(0))
    rec = AbsorbRecorder(fit, forward=False)
    fit.add(x, y)
    assert any("raw rows" in p for p in detect_raw(rec, x, y))
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
        fit = make_oracle(name, epsilon=1.0, delta=1e-5, **kw).start(600, dim=3, rng=7)
        stats = {}
        inner = fit._randomizer

        def grab(stage, inner=inner, stats=stats):
            r = inner(stage)
            stats.setdefault(stage, r.statistic)
            return r

        fit._randomizer = grab
        fit.add(xs, ys)
        fit.result()
        seen.append((stats, fit.stage_starts))
    (s1, starts), (s2, _) = seen
    first_changed = int(np.searchsorted(starts, 160, side="right") - 1)
    probe_x, probe_y = _rows(20, 3, 9)
    for stage in range(first_changed + 1):
        assert np.array_equal(s1[stage](probe_x, probe_y), s2[stage](probe_x, probe_y))
    later = [k for k in s1 if k > first_changed]
    assert any(not np.array_equal(s1[k](probe_x, probe_y), s2[k](probe_x, probe_y)) for k in later)
