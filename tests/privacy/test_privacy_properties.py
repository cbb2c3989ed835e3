"""Hypothesis property tests: declared sensitivities hold on adversarial neighbours.

Neighbours are chosen adversarially: a record against its negation (x' = -x), against zero, against an
orthogonal record, with extreme norms (far above the bound, tiny, exactly on it) and extreme
conditioning of the public weight matrix.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from privbandit.linalg import psd_sqrt
from privbandit.privacy import (
    GaussianMechanism,
    L2BallChannel,
    LaplacePair,
    LocalRandomizer,
    clip_features,
    project_rows,
)

SETTINGS = settings(max_examples=150, deadline=None, derandomize=True)
SLACK = 1 + 1e-9

# Finite floats with extreme magnitudes (tiny, huge) and exact zeros.
extreme = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from([0.0, 1.0, -1.0, 5e-324, -1e-300, 1.7e308, -1.7e308, 1e200]),
)
dims = st.integers(min_value=1, max_value=5)


@st.composite
def dataset_and_neighbour(draw):
    """Rows (n, d) and a neighbour that replaces one row by -x, 0, a huge row or another arbitrary row."""
    d = draw(dims)
    n = draw(st.integers(min_value=1, max_value=6))
    x = draw(hnp.arrays(np.float64, (n, d), elements=extreme))
    i = draw(st.integers(min_value=0, max_value=n - 1))
    kind = draw(st.sampled_from(["negate", "zero", "huge", "other"]))
    x2 = x.copy()
    if kind == "negate":
        x2[i] = -x[i]
    elif kind == "zero":
        x2[i] = 0.0
    elif kind == "huge":
        x2[i] = 1.7e308 * np.sign(x[i] + 0.5)
    else:
        x2[i] = draw(hnp.arrays(np.float64, (d,), elements=extreme))
    return x, x2


@st.composite
def spd_matrix(draw, d):
    """A symmetric positive definite matrix with condition number up to 1e12."""
    q, _ = np.linalg.qr(draw(hnp.arrays(np.float64, (d, d), elements=st.floats(-1, 1))) + 3 * np.eye(d))
    logs = draw(hnp.arrays(np.float64, (d,), elements=st.floats(-6, 6)))
    return (q * 10.0 ** logs) @ q.T


@SETTINGS
@given(dataset_and_neighbour(), st.floats(min_value=1e-3, max_value=1e3))
def test_clipped_mean_has_sensitivity_2b_over_n(pair, bound):
    x, x2 = pair
    with np.errstate(over="ignore"):
        c1 = _quiet_clip(x, bound)
        c2 = _quiet_clip(x2, bound)
    assert np.all(np.isfinite(c1)) and np.all(np.isfinite(c2))
    assert np.all(np.linalg.norm(c1, axis=1) <= bound * SLACK)
    # Rows far outside the ball land on its boundary (huge entries must not overflow into zeros).
    far = np.max(np.abs(x), axis=1) > bound
    np.testing.assert_allclose(np.linalg.norm(c1[far], axis=1), bound, rtol=1e-12)
    n = x.shape[0]
    assert np.linalg.norm(c1.mean(axis=0) - c2.mean(axis=0)) <= 2 * bound / n * SLACK


def _quiet_clip(x, bound):
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return clip_features(x, bound)


@SETTINGS
@given(dataset_and_neighbour(), st.floats(min_value=1e-3, max_value=1e3))
def test_projected_statistics_differ_by_at_most_2r(pair, radius):
    s1, s2 = pair
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        p1, p2 = project_rows(s1, radius), project_rows(s2, radius)
    assert np.all(np.isfinite(p1)) and np.all(np.isfinite(p2))
    assert np.all(np.linalg.norm(p1, axis=1) <= radius * SLACK)
    assert np.all(np.linalg.norm(p1 - p2, axis=1) <= 2 * radius * SLACK)


@SETTINGS
@given(dataset_and_neighbour(), st.floats(min_value=1e-2, max_value=1e2), st.floats(-1e6, 1e6))
def test_local_randomizer_outputs_differ_by_at_most_2r_before_noise(pair, radius, y_scale):
    """End to end through LocalRandomizer (noise ~ 1e-300) with a wild statistic that ignores any bound."""
    x, x2 = pair
    channel = GaussianMechanism(sensitivity=2 * radius, sigma=1e-300)
    rand = LocalRandomizer(lambda f, r: 1e6 * f * r[:, None] + f, radius, channel, feature_bound=1.0)
    y = np.full(x.shape[0], y_scale)
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        o1, o2 = rand(x, y, rng=0), rand(x2, -y, rng=1)
    assert np.all(np.linalg.norm(o1 - o2, axis=1) <= 2 * radius * SLACK + 1e-200)


@SETTINGS
@given(st.data(), dims, st.floats(min_value=1e-3, max_value=10.0), st.floats(min_value=1e-4, max_value=1e4))
def test_paper_statistics_respect_their_declared_bounds(data, d, bound, gamma):
    """The per-user statistics of alg:U-LDP, alg:LDP-linear-regression and alg:W-JDP on ||phi|| <= B.

    - U^{1/2} phi phi^T U^{1/2} / ||U phi||: Frobenius norm phi^T U phi / ||U phi|| <= ||phi|| <= B
      (SymPriv_B in alg:U-LDP);
    - U phi y / ||U phi|| (norm <= 1) and U phi phi^T / ||U phi|| (Frobenius <= B) (alg:LDP-linear-regression);
    - W^{1/2} phi phi^T W^{1/2} / (1 + gamma ||W phi||): Frobenius <= B / gamma, so the mean over N users
      moves by at most 2 B / (gamma N) when one user changes (Delta = B/(gamma N) in alg:W-JDP).
    """
    u = data.draw(spd_matrix(d))
    phi = data.draw(hnp.arrays(np.float64, (2, d), elements=st.floats(-1, 1)))
    scale = data.draw(st.sampled_from([1.0, 1e-8, 1e-150]))
    norms = np.linalg.norm(phi, axis=1, keepdims=True)
    phi = np.where(norms > 0, phi / np.where(norms > 0, norms, 1.0), 0.0) * bound
    phi[1] *= scale  # one record on the sphere, one possibly tiny
    y = data.draw(st.floats(-1, 1))
    root = psd_sqrt(u)
    for p in phi:
        up = u @ p
        nrm = np.linalg.norm(up)
        if nrm == 0:
            continue
        v = np.outer(root @ p, root @ p) / nrm
        assert np.linalg.norm(v) <= bound * SLACK
        assert np.linalg.norm(up * y / nrm) <= SLACK
        assert np.linalg.norm(np.outer(up, p) / nrm) <= bound * SLACK
        h = np.outer(root @ p, root @ p) / (1 + gamma * nrm)
        assert np.linalg.norm(h) <= bound / gamma * SLACK


@SETTINGS
@given(st.floats(-1, 1), st.floats(-1, 1), st.floats(-1, 1), st.floats(-1, 1))
def test_laplace_pair_l1_sensitivity_is_three(x, y, x2, y2):
    pair = np.array([np.sign(x) * y, abs(x)])
    pair2 = np.array([np.sign(x2) * y2, abs(x2)])
    assert np.abs(pair - pair2).sum() <= LaplacePair.L1_SENSITIVITY * SLACK


def test_laplace_pair_sensitivity_three_is_attained_in_the_limit():
    a = np.array([np.sign(1.0) * 1.0, 1.0])
    b = np.array([np.sign(-1e-12) * 1.0, 1e-12])
    assert np.abs(a - b).sum() > 3 - 1e-9


@SETTINGS
@given(st.data(), dims, st.floats(min_value=0.05, max_value=5.0), st.floats(min_value=1e-3, max_value=1e3))
def test_l2_ball_outputs_have_norm_m_whatever_the_input(data, d, eps, radius):
    """The channel's output law is supported on the same sphere for every input (needed for pure DP)."""
    v = data.draw(hnp.arrays(np.float64, (4, d), elements=st.floats(-1, 1)))
    norms = np.linalg.norm(v, axis=1, keepdims=True)
    v = np.where(norms > 0, v / np.where(norms > 0, norms, 1.0), 0.0) * radius
    v[1] *= 1e-300
    v[2] = -v[0]
    v[3] = 0.0
    chan = L2BallChannel(eps, d, radius)
    z = chan.release(v, rng=data.draw(st.integers(0, 2 ** 32 - 1)))
    np.testing.assert_allclose(np.linalg.norm(z, axis=1), chan.magnitude, rtol=1e-12)


@SETTINGS
@given(dims, st.data())
def test_symmetric_noise_upper_triangle_norm_is_at_most_frobenius(d, data):
    """SymPriv calibrates to the Frobenius sensitivity: the released upper triangle moves by no more."""
    a = data.draw(hnp.arrays(np.float64, (d, d), elements=st.floats(-1e150, 1e150)))
    b = data.draw(st.sampled_from(["negate", "zero", "other"]))
    a = a + a.T
    a2 = {"negate": -a, "zero": np.zeros_like(a)}.get(b)
    if a2 is None:
        a2 = data.draw(hnp.arrays(np.float64, (d, d), elements=st.floats(-1e150, 1e150)))
        a2 = a2 + a2.T
    iu = np.triu_indices(d)
    fro = np.linalg.norm(a - a2)
    upper = np.linalg.norm((a - a2)[iu])
    assert upper <= fro * SLACK
