"""Link functions: derivatives match finite differences; the mu and Lipschitz bounds hold (`def:GLM`)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from privbandit.links import LINKS, Link, identity_link, logistic_link, make_link


def central_difference(fn, z, h=1e-6):
    return (fn(z + h) - fn(z - h)) / (2 * h)


@pytest.mark.parametrize("link", [identity_link(), logistic_link(), logistic_link(0.5, 3.0), logistic_link(8.0, 0.2)],
                         ids=lambda link: f"{link.name}-{link.mu:.3g}")
def test_derivative_matches_finite_differences(link):
    z = np.linspace(-4, 4, 161)
    np.testing.assert_allclose(link.derivative(z), central_difference(link, z), rtol=1e-6, atol=1e-8)
    assert link(z).shape == z.shape and link.derivative(z).shape == z.shape


@settings(max_examples=200, deadline=None, derandomize=True)
@given(st.floats(1e-2, 20.0), st.floats(1e-2, 5.0), st.floats(0.0, 1.0))
def test_logistic_bounds_hold(scale, bound, frac):
    link = logistic_link(scale, bound)
    z = np.array([frac * bound, -frac * bound, bound, -bound, 0.0])
    deriv = link.derivative(z)
    assert np.all(deriv >= link.mu * (1 - 1e-12))  # nu' >= mu_nu on |z| <= bound
    assert np.all(deriv <= link.lipschitz * (1 + 1e-12))
    assert link.derivative(np.array([bound]))[0] == pytest.approx(link.mu, rel=1e-12)  # mu is attained
    assert link.derivative(np.array([0.0]))[0] == pytest.approx(link.lipschitz, rel=1e-12)
    wide = np.linspace(-50, 50, 1001)
    values = link(wide)
    assert np.all(np.abs(values) <= 1.0) and np.all(np.diff(values) >= 0)
    np.testing.assert_allclose(link(-wide), -values, atol=1e-15)  # odd: nu(-z) = -nu(z)


def test_logistic_is_a_rescaled_sigmoid():
    link = logistic_link(scale=3.0)
    z = np.linspace(-2, 2, 9)
    np.testing.assert_allclose(link(z), 2.0 / (1.0 + np.exp(-3.0 * z)) - 1.0, rtol=1e-12, atol=1e-15)
    assert link.mu == pytest.approx(1.5 * (1 - math.tanh(1.5) ** 2))
    assert link.lipschitz == pytest.approx(1.5)


def test_identity_link():
    link = identity_link()
    z = np.array([-0.3, 0.0, 0.9])
    np.testing.assert_array_equal(link(z), z)
    np.testing.assert_array_equal(link.derivative(z), np.ones(3))
    assert link.mu == link.lipschitz == 1.0 and link.is_identity
    assert not logistic_link().is_identity


def test_make_link_and_validation():
    assert make_link("identity").is_identity
    lg = make_link("logistic", scale=4.0, bound=0.5)
    assert lg.lipschitz == pytest.approx(2.0)
    assert make_link(lg) is lg
    assert set(LINKS) >= {"identity", "logistic"}
    with pytest.raises(ValueError, match="link must be one of"):
        make_link("probit")
    with pytest.raises(ValueError, match="mu must be <= lipschitz"):
        Link("bad", np.tanh, np.cosh, mu=2.0, lipschitz=1.0)
    with pytest.raises(ValueError, match="mu"):
        Link("bad", np.tanh, np.cosh, mu=0.0, lipschitz=1.0)
    with pytest.raises(TypeError, match="callables"):
        Link("bad", 1.0, np.cosh)
    with pytest.raises(ValueError, match="scale"):
        logistic_link(scale=-1.0)
    with pytest.raises(ValueError, match="bound"):
        logistic_link(bound=0.0)
    # A link flat to machine precision at the bound has no mu_nu > 0: refused with a clear message.
    with pytest.raises(ValueError, match="scale \\* bound"):
        logistic_link(scale=500.0, bound=5.0)
    steep = logistic_link(scale=8.0, bound=5.0)  # 1 - tanh(20)^2 ~ 1.7e-17: still positive and accurate
    assert steep.mu == pytest.approx(4.0 / math.cosh(20.0) ** 2, rel=1e-12)
    # Links compare by name and constants (the callables are excluded), and are hashable (frozen).
    assert logistic_link(2.0, 1.0) == logistic_link(2.0, 1.0)
    assert hash(identity_link()) == hash(identity_link())


def _nan_beyond_half(z):
    """tanh with a NaN hole on z > 1/2 (a user's link defined by a formula valid on part of its domain)."""
    z = np.asarray(z, dtype=float)
    return np.where(z > 0.5, np.nan, np.tanh(z))


def _tanh_derivative(z):
    return 1.0 - np.tanh(np.asarray(z, dtype=float)) ** 2


def test_a_link_that_is_nan_somewhere_on_its_domain_is_refused_when_made():
    with pytest.raises(ValueError, match=r"link 'holey': fn is not finite on its domain \|z\| <= 1 "
                                         r"\(256 of 1025 grid points, first at z = 0\.50"):
        Link("holey", _nan_beyond_half, _tanh_derivative, mu=0.4, lipschitz=1.0)
    with pytest.raises(ValueError, match="derivative is not finite"):
        Link("holey", np.tanh, lambda z: np.where(np.abs(z) > 0.9, np.inf, _tanh_derivative(z)), mu=0.4,
             lipschitz=1.0)
    # on a domain that avoids the hole the same link is fine (the claim is about [-domain, domain] only)
    assert Link("holey", _nan_beyond_half, _tanh_derivative, mu=0.7, lipschitz=1.0, domain=0.5).domain == 0.5


def test_a_link_whose_derivative_leaves_mu_and_l_on_its_domain_is_refused_when_made():
    with pytest.raises(ValueError, match=r"derivative on its domain \|z\| <= 1 ranges over \[0\.41\d*, 1\], "
                                         r"outside \[mu, lipschitz\] = \[0\.5, 1\]"):
        Link("tanh", np.tanh, _tanh_derivative, mu=0.5, lipschitz=1.0)         # nu'(1) = 0.42 < mu
    with pytest.raises(ValueError, match="outside"):
        Link("tanh", np.tanh, _tanh_derivative, mu=0.4, lipschitz=0.9)         # nu'(0) = 1 > L
    assert Link("tanh", np.tanh, _tanh_derivative, mu=0.4, lipschitz=1.0).domain == 1.0
    with pytest.raises(ValueError, match="must be vectorised"):
        Link("scalar", lambda z: float(np.tanh(z[0])), _tanh_derivative, mu=0.4, lipschitz=1.0)
    with pytest.raises(ValueError, match="domain"):
        Link("tanh", np.tanh, _tanh_derivative, mu=0.4, lipschitz=1.0, domain=0.0)


def test_the_built_in_links_pass_their_own_check_and_keep_their_constants():
    for scale, bound in [(2.0, 1.0), (0.5, 3.0), (8.0, 0.2), (8.0, 5.0), (20.0, 5.0)]:
        link = logistic_link(scale, bound)
        assert link.domain == bound and link.mu == pytest.approx(0.5 * scale / math.cosh(0.5 * scale * bound) ** 2)
    assert identity_link().domain == 1.0
    assert "domain" not in repr(logistic_link())          # reprs (and anything keyed on them) are unchanged
