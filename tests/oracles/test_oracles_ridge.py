"""The non-private ridge oracle's two radii: calibrated ``constants="practical"`` and Abbasi-Yadkori ``"theory"``."""

from __future__ import annotations

import math

import numpy as np
import pytest

import privbandit  # noqa: F401
from privbandit.links import logistic_link
from privbandit.oracles import make_oracle
from privbandit.oracles import ridge as ridge_mod

DIM = 5
THETA = np.array([0.6, -0.4, 0.3, 0.2, -0.5]) / np.linalg.norm([0.6, -0.4, 0.3, 0.2, -0.5])


def _sample(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Uniform unit-sphere features, rewards +-1 with mean <phi, theta*>."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, DIM))
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    y = np.where(rng.random(n) < 0.5 * (1.0 + x @ THETA), 1.0, -1.0)
    return x, y


def test_default_is_practical_with_the_documented_radius() -> None:
    oracle = make_oracle("ridge")
    assert oracle.constants == "practical"
    x, y = _sample(2 ** 12, seed=0)
    est = oracle.fit(x, y, rng=0)
    v = x.T @ x + oracle.lam * np.eye(DIM)
    assert est.width_scale == pytest.approx(ridge_mod.PRACTICAL_WIDTH * oracle.noise_scale
                                            + math.sqrt(oracle.lam) * oracle.norm_bound)
    np.testing.assert_allclose(est.theta, np.linalg.solve(v, x.T @ y))
    phi = x[:7]
    np.testing.assert_allclose(est.width(phi), est.width_scale * np.sqrt(np.einsum("nd,de,ne->n", phi,
                                                                                   np.linalg.inv(v), phi)))
    # c_width and width_multiplier scale the pieces they say they scale
    est2 = make_oracle("ridge", c_width=1.0, width_multiplier=3.0).fit(x, y, rng=0)
    assert est2.width_scale == pytest.approx(3.0 * (1.0 + 1.0))


def test_theory_radius_is_the_abbasi_yadkori_one() -> None:
    oracle = make_oracle("ridge", constants="theory", lam=2.0, confidence=0.01, norm_bound=1.5)
    x, y = _sample(2 ** 11, seed=1)
    est = oracle.fit(x, y, rng=0)
    v = x.T @ x + 2.0 * np.eye(DIM)
    _, logdet = np.linalg.slogdet(v / 2.0)
    beta = math.sqrt(2 * math.log(100.0) + logdet) + math.sqrt(2.0) * 1.5
    assert est.width_scale == pytest.approx(beta)
    assert est.info["constants"] == "theory"


@pytest.mark.parametrize("n", [2 ** 8, 2 ** 12, 2 ** 16])
def test_theory_width_at_least_practical_width(n: int) -> None:
    x, y = _sample(n, seed=n)
    fresh, _ = _sample(500, seed=n + 1)
    for kwargs in ({}, {"lam": 0.1}, {"lam": 10.0, "norm_bound": 2.0}, {"link": logistic_link()}):
        link = kwargs.pop("link", None)
        prac = make_oracle("ridge", **kwargs).fit(x, y, link=link, rng=0)
        theo = make_oracle("ridge", constants="theory", **kwargs).fit(x, y, link=link, rng=0)
        np.testing.assert_array_equal(prac.theta, theo.theta)
        assert np.all(theo.width(fresh) >= prac.width(fresh))
    # at d = 5 the theory radius is already well above the practical one at moderate n
    assert theo.width_scale > 1.3 * prac.width_scale


def test_practical_width_covers_fresh_phi() -> None:
    """>= 95% of fresh phi covered (pooled over seeds), and the width is not vacuous (< 0.1 at n = 2^14)."""
    errors, widths = [], []
    for seed in range(6):
        x, y = _sample(2 ** 14, seed=10 + seed)
        est = make_oracle("ridge").fit(x, y, rng=seed)
        fresh, _ = _sample(2000, seed=100 + seed)
        errors.append(np.abs(fresh @ (est.theta - THETA)))
        widths.append(est.width(fresh))
    err, width = np.concatenate(errors), np.concatenate(widths)
    assert np.mean(err <= width) >= 0.95, np.mean(err <= width)
    assert np.mean(width) < 0.1
    # the check can fail: a third of the radius (beta = 1, one noise sd) misses clearly more often
    assert np.mean(err <= width / 3.0) < 0.9, np.mean(err <= width / 3.0)


@pytest.mark.parametrize("kwargs, match", [
    ({"constants": "paper"}, "constants must be one of"),
    ({"constants": None}, "constants must be one of"),
    ({"c_width": 0.0}, "c_width"),
    ({"c_width": -1.0}, "c_width"),
    ({"c_width": float("nan")}, "c_width"),
    ({"constants": "theory", "c_width": 2.0}, "c_width"),
    ({"width_multiplier": 0.0}, "width_multiplier"),
])
def test_bad_arguments_raise(kwargs: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        make_oracle("ridge", **kwargs)


def test_constants_names_match_the_iw_oracles() -> None:
    from privbandit.oracles import iw_jdp
    assert ridge_mod.CONSTANTS == iw_jdp.CONSTANTS
