"""Input guards: bad input raises ValueError naming the argument; clipping warns and clips."""

from __future__ import annotations

import math

import numpy as np
import pytest

from privbandit._validation import (
    as_generator,
    check_array,
    check_choice,
    check_int,
    check_positive,
    check_rows,
)
from privbandit.privacy import (
    ClippingWarning,
    GaussianMechanism,
    L2BallChannel,
    LaplaceMechanism,
    LaplacePair,
    LocalRandomizer,
    PrivacySpec,
    SymmetricGaussianMechanism,
    check_delta,
    check_epsilon,
    clip_features,
    clip_rewards,
    gaussian_sigma,
)

BAD_EPSILONS = [0.0, -1.0, math.nan, math.inf, -math.inf]
BAD_DELTAS = [0.0, 1.0, -1e-9, 1.5, math.nan, math.inf]


@pytest.mark.parametrize("eps", BAD_EPSILONS)
def test_epsilon_must_be_positive_and_finite(eps):
    with pytest.raises(ValueError, match="epsilon"):
        check_epsilon(eps)
    with pytest.raises(ValueError, match="epsilon"):
        gaussian_sigma(eps, 1e-5, 1.0)
    with pytest.raises(ValueError, match="epsilon"):
        PrivacySpec("jdp", eps, 1e-5)
    with pytest.raises(ValueError, match="epsilon"):
        GaussianMechanism.calibrated(eps, 1e-5, 1.0)
    with pytest.raises(ValueError, match="epsilon"):
        LaplacePair(eps)
    with pytest.raises(ValueError, match="epsilon"):
        L2BallChannel(eps, 3)


@pytest.mark.parametrize("delta", BAD_DELTAS)
def test_delta_must_lie_in_open_unit_interval(delta):
    with pytest.raises(ValueError, match="delta"):
        check_delta(delta)
    with pytest.raises(ValueError, match="delta"):
        gaussian_sigma(1.0, delta, 1.0, method="paper")
    with pytest.raises(ValueError, match="delta"):
        PrivacySpec("ldp", 1.0, delta)
    with pytest.raises(ValueError, match="delta"):
        SymmetricGaussianMechanism.calibrated(1.0, delta, 1.0)


def test_messages_state_the_allowed_range():
    with pytest.raises(ValueError, match=r"delta must be in \(0\.0, 1\.0\), got 1\.5"):
        check_delta(1.5)
    with pytest.raises(ValueError, match=r"epsilon must be in \(0\.0, inf"):
        check_epsilon(-2.0)
    with pytest.raises(ValueError, match=r"sensitivity must be in \(0\.0, inf"):
        gaussian_sigma(1.0, 1e-5, 0.0)
    with pytest.raises(ValueError, match=r"n must be an integer in \[1, 5\], got 7"):
        check_int("n", 7, low=1, high=5)
    with pytest.raises(ValueError, match="method must be one of"):
        gaussian_sigma(1.0, 1e-5, 1.0, method="heuristic")


def test_type_errors_for_non_numbers():
    with pytest.raises(TypeError, match="epsilon"):
        check_epsilon("1.0")
    with pytest.raises(TypeError, match="flag"):
        check_positive("flag", True)
    with pytest.raises(TypeError, match="n"):
        check_int("n", 2.5)
    with pytest.raises(TypeError, match="rng"):
        as_generator(True)
    with pytest.raises(ValueError, match="rng"):
        as_generator(-3)


def test_privacy_spec_none_and_bad_model():
    spec = PrivacySpec.none()
    assert spec.epsilon == math.inf and spec.delta == 0.0 and not spec.is_private
    with pytest.raises(ValueError, match="model"):
        PrivacySpec("central", 1.0, 1e-5)


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_nan_and_inf_are_refused_everywhere(bad):
    x = np.ones((4, 3)) * 0.1
    x[2, 1] = bad
    y = np.zeros(4)
    with pytest.raises(ValueError, match="features"):
        check_rows(x, y)
    with pytest.raises(ValueError, match="rewards"):
        check_rows(np.zeros((4, 3)), np.where(np.arange(4) == 1, bad, 0.0))
    with pytest.raises(ValueError, match="values"):
        GaussianMechanism(1.0, 1.0).release(x, rng=0)
    with pytest.raises(ValueError, match="values"):
        LaplaceMechanism(1.0, 1.0).release(x, rng=0)
    m = np.eye(3)
    m[0, 0] = bad
    with pytest.raises(ValueError, match="matrices"):
        SymmetricGaussianMechanism(1.0, 1.0).release(m, rng=0)
    with pytest.raises(ValueError, match="values"):
        L2BallChannel(1.0, 3).release(x, rng=0)
    with pytest.raises(ValueError, match="x"):
        LaplacePair(1.0).release(np.array([0.5, bad]), np.zeros(2), rng=0)
    rand = LocalRandomizer.gaussian(lambda f, r: f, 1.0, 1.0, 1e-5)
    with pytest.raises(ValueError, match="features"):
        rand(x, y, rng=0)


def test_wrong_shapes_are_refused():
    with pytest.raises(ValueError, match="features"):
        check_rows(np.zeros((2, 3, 4)), np.zeros(2))
    with pytest.raises(ValueError, match="rewards"):
        check_rows(np.zeros((5, 3)), np.zeros(4))
    with pytest.raises(ValueError, match="features must have 4 columns"):
        check_rows(np.zeros((5, 3)), np.zeros(5), dim=4)
    with pytest.raises(ValueError, match="weights"):
        check_array("weights", np.zeros(3), shape=(4,))
    with pytest.raises(ValueError, match="empty"):
        check_array("features", np.zeros((0, 3)), allow_empty=False)
    with pytest.raises(ValueError, match="matrices"):
        SymmetricGaussianMechanism(1.0, 1.0).release(np.zeros((3, 4)), rng=0)
    with pytest.raises(ValueError, match="values"):
        L2BallChannel(1.0, 3).release(np.zeros((5, 4)), rng=0)
    with pytest.raises(ValueError, match="y"):
        LaplacePair(1.0).release(np.zeros(3), np.zeros(4), rng=0)
    rand = LocalRandomizer.gaussian(lambda f, r: f[:-1], 1.0, 1.0, 1e-5)
    with pytest.raises(ValueError, match="one row per record"):
        rand(np.zeros((4, 2)), np.zeros(4), rng=0)


def test_out_of_domain_inputs_are_refused_by_channels_that_need_bounded_input():
    with pytest.raises(ValueError, match=r"\[-1, 1\]"):
        LaplacePair(1.0).release(np.array([1.5]), np.array([0.0]), rng=0)
    with pytest.raises(ValueError, match="radius"):
        L2BallChannel(1.0, 2, radius=1.0).release(np.array([[1.0, 1.0]]), rng=0)
    # An asymmetric matrix would leak M_ij - M_ji through the shared noise.
    with pytest.raises(ValueError, match="symmetric"):
        SymmetricGaussianMechanism(1.0, 1.0).release(np.array([[0.0, 1.0], [0.0, 0.0]]), rng=0)
    # A statistic that is NaN somewhere on the domain (here at phi = 0) is refused.
    def direction(f, r):
        with np.errstate(invalid="ignore"):
            return f / np.linalg.norm(f, axis=1, keepdims=True)

    rand = LocalRandomizer.gaussian(direction, 1.0, 1.0, 1e-5)
    with pytest.raises(ValueError, match="statistic"):
        rand(np.zeros((2, 3)), np.zeros(2), rng=0)


def test_clip_features_warns_and_clips():
    x = np.array([[3.0, 4.0], [0.3, 0.4], [0.0, 0.0], [-6.0, 8.0]])
    with pytest.warns(ClippingWarning, match="2 feature vector"):
        out = clip_features(x, 2.0)
    norms = np.linalg.norm(out, axis=1)
    assert np.all(norms <= 2.0 + 1e-12)
    np.testing.assert_allclose(norms[[0, 3]], 2.0)
    np.testing.assert_array_equal(out[[1, 2]], x[[1, 2]])  # rows inside the ball are untouched
    np.testing.assert_allclose(out[0] / norms[0], x[0] / 5.0)  # direction kept
    # No warning when nothing changes (pytest turns any warning into an error here).
    inside = clip_features(x[[1, 2]], 2.0)
    np.testing.assert_array_equal(inside, x[[1, 2]])
    assert inside is not x


def test_clip_rewards_warns_and_clips():
    y = np.array([-3.0, -1.0, 0.2, 1.0, 7.5])
    with pytest.warns(ClippingWarning, match="2 reward"):
        out = clip_rewards(y)
    np.testing.assert_array_equal(out, [-1.0, -1.0, 0.2, 1.0, 1.0])
    np.testing.assert_array_equal(clip_rewards(y[1:4]), y[1:4])


def test_local_randomizer_clips_before_its_statistic_and_projects_after():
    seen = {}

    def statistic(f, r):
        seen["max_norm"] = float(np.max(np.linalg.norm(f, axis=1)))
        seen["max_reward"] = float(np.max(np.abs(r)))
        return 10.0 * f  # norm up to 10 B: exceeds the declared radius 2

    channel = GaussianMechanism(sensitivity=4.0, sigma=1e-12)  # (almost) no noise: see the projected rows
    rand = LocalRandomizer(statistic, radius=2.0, channel=channel, feature_bound=1.0)
    x = np.array([[3.0, 0.0], [0.1, 0.0]])
    with pytest.warns(ClippingWarning) as record:
        out = rand(x, np.array([5.0, 0.0]), rng=0)
    messages = " ".join(str(w.message) for w in record)
    assert "feature" in messages and "reward" in messages and "projected" in messages
    assert seen["max_norm"] <= 1.0 + 1e-12 and seen["max_reward"] <= 1.0
    np.testing.assert_allclose(out, [[2.0, 0.0], [1.0, 0.0]], atol=1e-9)


def test_check_choice_returns_an_allowed_value_and_names_the_argument_and_the_choices() -> None:
    assert check_choice("mode", "loop", ("batch", "loop")) == "loop"
    with pytest.raises(ValueError, match=r"mode must be one of \('batch', 'loop'\), got 'fast'"):
        check_choice("mode", "fast", ("batch", "loop"))
