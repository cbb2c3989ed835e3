"""Bad input everywhere: a clear exception naming the argument, or a documented clip with a warning.

Hypothesis draws env keyword arguments, agent and oracle configurations, and the arrays an agent or an
oracle fit is fed. For each draw exactly one thing is wrong (or nothing), and the contract is:

- a wrong value (NaN, inf, zero or negative size, epsilon <= 0, delta outside (0, 1), wrong shape, a
  wrong type) raises ValueError or TypeError whose message names the offending argument;
- a value that is legal but out of the model's bounds (feature norm above B, |reward| > 1, huge but
  finite) is clipped with a :class:`~privbandit.privacy.ClippingWarning`, and what comes out is finite;
- nothing ever ends in a silent NaN, a RuntimeWarning (overflow) or an error raised deep inside numpy.

``filterwarnings = error`` (pyproject) turns any RuntimeWarning into a failure, so "no overflow" is
checked everywhere for free.
"""

from __future__ import annotations

import math
import warnings

import gymnasium as gym
import numpy as np
import pytest
from conftest import build_oracle, oracle_dim
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import privbandit  # noqa: F401  (registers the envs)
from privbandit.agents import BanditSpec, agent_is_private, agent_names, make_agent
from privbandit.envs import PrivGLMCBEnv, PrivLinCBEnv
from privbandit.oracles import oracle_class, oracle_names
from privbandit.privacy import ClippingWarning

FUZZ = settings(max_examples=40, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])

BAD_REALS = [math.nan, math.inf, -math.inf]
ENV_CLASSES = {"PrivLinCB-v0": PrivLinCBEnv, "PrivGLMCB-v0": PrivGLMCBEnv}
BAD_SIZES = [0, -1, -7, 2.5, "3", None, math.nan, True]


def assert_names(exc: BaseException, name: str | tuple[str, ...]) -> None:
    assert isinstance(exc, (ValueError, TypeError)), f"{type(exc).__name__}: {exc}"
    names = (name,) if isinstance(name, str) else name
    assert any(n in str(exc) for n in names), f"the message does not name {name!r}: {exc}"


def expect_error(name: str, fn, *args, **kwargs) -> None:
    with pytest.raises((ValueError, TypeError)) as info:
        fn(*args, **kwargs)
    assert_names(info.value, name)


# -- env keyword arguments ---------------------------------------------------------------------------

GOOD_ENV = {"n_arms": [1, 2, 5], "dim": [2, 3, 4], "horizon": [1, 3, 16], "bound": [0.5, 1.0, 3.0],
                "noise_scale": [0.1, 0.3, 1.0], "family": ["isotropic", "spiky", "rare-direction", "heavy-tailed",
                                                     "heavy-tailed-direction", "low-rank"]}
BAD_ENV = {"n_arms": BAD_SIZES, "dim": BAD_SIZES, "horizon": BAD_SIZES,
               "bound": [0.0, -1.0, *BAD_REALS, "1"], "noise_scale": [0.0, -0.1, *BAD_REALS],
               "family": ["no-such-family", 3], "feature_map": ["bogus", [1, 2], 3, None], "noise": ["bogus", 3, -1.0],
               "conditioning": [math.nan, math.inf, -1.0, 0.0, "x"]}


@st.composite
def env_kwargs(draw):
    kwargs = {k: draw(st.sampled_from(v)) for k, v in GOOD_ENV.items()}
    bad = draw(st.sampled_from([None, *BAD_ENV]))
    if bad is not None:
        kwargs[bad] = draw(st.sampled_from(BAD_ENV[bad]))
    if bad == "conditioning":  # a bad dial value is named by the family's dial (condition, rho, scale, ...)
        kwargs["family"] = draw(st.sampled_from(["spiky", "rare-direction", "heavy-tailed"]))
        return kwargs, ("condition", "rho", "scale", "conditioning")
    return kwargs, bad


@pytest.mark.slow
@settings(FUZZ, max_examples=100)
@given(env_kwargs(), st.sampled_from(["PrivLinCB-v0", "PrivGLMCB-v0"]))
def test_env_kwargs_are_validated(case, env_id):
    kwargs, bad = case
    if bad is not None:
        with pytest.raises((ValueError, TypeError)) as info:
            env = ENV_CLASSES[env_id](**kwargs)  # not gym.make: it appends every kwarg's name to the message
            env.reset(seed=0)
        assert_names(info.value, bad)
        return
    try:
        env = gym.make(env_id, **kwargs)
    except (ValueError, TypeError) as exc:  # a valid-looking combination refused: must say why by name
        assert any(k in str(exc) for k in (*GOOD_ENV, "theta", "rank", "conditioning")), exc
        return
    obs, info = env.reset(seed=1)
    u = env.unwrapped
    assert obs.shape == (u.n_arms, u.dim) and np.all(np.isfinite(obs))
    assert np.all(np.linalg.norm(obs, axis=-1) <= u.bound * (1 + 1e-9))
    batch = u.sample_batch(min(4, u.horizon))
    for arr in batch:
        assert np.all(np.isfinite(arr))
    assert np.all(np.abs(batch.rewards) <= 1.0)


@pytest.mark.parametrize("kwarg, value", [("feature_map", [1, 2]), ("feature_map", None), ("feature_map", 3),
                                          ("family", 3.5), ("family", None), ("noise", 3), ("noise", "bogus"),
                                          ("link", 3), ("link", "bogus"), ("theta", "x"), ("theta", [1.0, math.nan])])
def test_env_kwargs_of_the_wrong_type_are_named(kwarg, value):
    with pytest.raises((ValueError, TypeError)) as info:
        (PrivGLMCBEnv if kwarg == "link" else PrivLinCBEnv)(dim=2, n_arms=2, horizon=4, **{kwarg: value})
    assert_names(info.value, kwarg)


@pytest.mark.parametrize("env_id", ["PrivLinCB-v0", "PrivGLMCB-v0"])
def test_env_refuses_bad_actions(env_id):
    env = gym.make(env_id, n_arms=3, dim=2, horizon=4)
    env.reset(seed=0)
    for bad in (3, -1, 1.5, "0", None):
        with pytest.raises((ValueError, TypeError)) as info:
            env.step(bad)
        assert "action" in str(info.value)
    with pytest.raises((ValueError, TypeError)) as info:
        env.unwrapped.sample_batch(-1)
    assert "n" in str(info.value)


# -- agents ----------------------------------------------------------------------------------------------

PRIVATE_AGENTS = [n for n in agent_names() if agent_is_private(n)]
ALL_AGENTS = list(agent_names())


@FUZZ
@given(st.sampled_from(PRIVATE_AGENTS), st.sampled_from(["epsilon", "delta"]),
       st.sampled_from([0.0, -1.0, 1.0, 2.0, *BAD_REALS, "1", None]))
def test_agent_privacy_parameters_are_validated(name, param, value):
    kwargs = {"epsilon": 1.0, param: value}      # a private agent needs epsilon
    ok = param == "epsilon" and value in (1.0, 2.0)
    if ok:
        agent = make_agent(name, **kwargs)
        assert getattr(agent.privacy, param) == value
        return
    if value is None and param == "delta":  # None means "the default" for delta; epsilon has none
        make_agent(name, **kwargs)
        return
    expect_error(param, make_agent, name, **kwargs)


@FUZZ
@given(st.sampled_from(["n_arms", "dim", "horizon", "bound"]), st.sampled_from(BAD_SIZES + [-0.5, math.inf]))
def test_bandit_spec_is_validated(field, value):
    kwargs = {"n_arms": 2, "dim": 2, "horizon": 4, "bound": 1.0}
    kwargs[field] = value
    if field == "bound" and value == 2.5:  # the one legal value in the list
        assert BanditSpec(**kwargs).bound == 2.5
        return
    expect_error(field, BanditSpec, **kwargs)


def fresh(name: str, k: int = 3, d: int = 2, horizon: int = 16):
    agent = make_agent(name, **({"epsilon": 1.0} if agent_is_private(name) else {}))
    agent.reset(BanditSpec(n_arms=k, dim=d, horizon=horizon), rng=0)
    return agent


@st.composite
def bad_features(draw, k: int = 3, d: int = 2):
    kind = draw(st.sampled_from(["nan", "inf", "shape-k", "shape-d", "ndim", "string"]))
    x = np.full((k, d), 0.1)
    if kind == "nan":
        x[draw(st.integers(0, k - 1)), draw(st.integers(0, d - 1))] = math.nan
    elif kind == "inf":
        x[draw(st.integers(0, k - 1)), draw(st.integers(0, d - 1))] = draw(st.sampled_from([math.inf, -math.inf]))
    elif kind == "shape-k":
        x = np.full((k + draw(st.sampled_from([-1, 1])), d), 0.1)
    elif kind == "shape-d":
        x = np.full((k, d + 1), 0.1)
    elif kind == "ndim":
        x = np.full(d, 0.1)
    else:
        x = "features"
    return x


@FUZZ
@given(st.sampled_from(ALL_AGENTS), bad_features())
def test_agents_refuse_bad_features(name, x):
    agent = fresh(name)
    expect_error("features", agent.act, x)
    if isinstance(x, np.ndarray) and x.ndim == 2:
        expect_error("features", agent.act_batch, x[None])
        expect_error("features", agent.action_probabilities, x)


@FUZZ
@given(st.sampled_from(ALL_AGENTS), st.sampled_from(["nan-x", "inf-x", "nan-y", "inf-y", "shape", "count"]))
def test_agents_refuse_bad_updates(name, kind):
    agent = fresh(name)
    x, y = np.full((1, 2), 0.1), np.array([0.5])
    if kind == "nan-x":
        x[0, 0] = math.nan
    elif kind == "inf-x":
        x[0, 1] = math.inf
    elif kind == "nan-y":
        y[0] = math.nan
    elif kind == "inf-y":
        y[0] = -math.inf
    elif kind == "shape":
        x = np.full((1, 3), 0.1)
    else:
        y = np.array([0.5, 0.5])
    with pytest.raises((ValueError, TypeError)) as info:
        agent.update(x, y)
    assert any(w in str(info.value) for w in ("features", "rewards", "rows")), info.value
    assert agent.t == 0  # a refused update changes nothing


@FUZZ
@given(st.sampled_from(ALL_AGENTS),
       st.floats(min_value=1.0 + 1e-6, max_value=1e300, allow_nan=False, allow_infinity=False),
       st.floats(min_value=-1e300, max_value=1e300, allow_nan=False, allow_infinity=False),
       st.booleans())
# found by hypothesis 6.80: a subnormal-range reward row made radius / max|row| overflow (a RuntimeWarning)
@example("elim-glm-ldp", 2.0, 1.1125369292536007e-308, False)
def test_huge_inputs_are_clipped_with_a_warning_never_nan(name, scale, reward, huge_context):
    """Rows above B and rewards outside [-1, 1] are clipped (ClippingWarning); no overflow, no NaN."""
    agent = fresh(name, horizon=8)
    rng = np.random.default_rng(0)
    base = rng.standard_normal((3, 2))
    base /= np.linalg.norm(base, axis=1, keepdims=True)
    big = base * scale
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(7):
            arm = agent.act(big if huge_context else base * 0.5)
            agent.update(big[arm], reward)
        probs = agent.action_probabilities(base * 0.5)
    kinds = {type(w.message) for w in caught}
    assert kinds <= {ClippingWarning}, [str(w.message) for w in caught]
    assert ClippingWarning in kinds
    assert np.all(np.isfinite(probs)) and probs.sum() == pytest.approx(1.0)
    assert 0 <= agent.act(base * 0.5) < 3


# -- oracles ---------------------------------------------------------------------------------------------

PRIVATE_ORACLES = [n for n in oracle_names() if oracle_class(n).privacy_models[0] != "none"]


def _public(name: str) -> np.ndarray:
    """The public sample of the distribution-specific oracles: norms uniform in [0, 1)."""
    rng = np.random.default_rng(99)
    public = rng.standard_normal((200, oracle_dim(name, 2)))
    public *= (rng.random(200) / np.linalg.norm(public, axis=1))[:, None]
    return public


@FUZZ
@given(st.sampled_from(PRIVATE_ORACLES), st.sampled_from(["epsilon", "delta"]),
       st.sampled_from([0.0, -0.5, 1.0, 1.5, *BAD_REALS, "x"]))
def test_oracle_privacy_parameters_are_validated(name, param, value):
    if value in (1.0, 1.5) and param == "epsilon":
        assert build_oracle(name, _public(name), **{param: value}).privacy.epsilon == value
        return
    expect_error(param, build_oracle, name, _public(name), **{param: value})


@FUZZ
@given(st.sampled_from(list(oracle_names())), st.sampled_from(["n_rounds", "dim", "bound"]),
       st.sampled_from([0, -1, 2.5, math.nan, math.inf, "4", None]))
def test_oracle_start_is_validated(name, field, value):
    kwargs = {"n_rounds": 8, "dim": oracle_dim(name, 2), "bound": 1.0}
    if field == "bound" and value == 2.5:
        return
    if field == "bound" and value is None:
        value = "none"
    kwargs[field] = value
    oracle = build_oracle(name, _public(name))
    n = kwargs.pop("n_rounds")
    expect_error(field, oracle.start, n, rng=0, **kwargs)


@FUZZ
@given(st.sampled_from(list(oracle_names())), st.sampled_from(["nan", "inf", "shape", "count", "too-many"]))
def test_oracle_fits_refuse_bad_rows(name, kind):
    d = oracle_dim(name, 2)
    fit = build_oracle(name, _public(name)).start(4, dim=d, rng=0)
    x, y = np.full((2, d), 0.1), np.array([0.5, -0.5])
    if kind == "nan":
        x[1, 0] = math.nan
    elif kind == "inf":
        y[0] = math.inf
    elif kind == "shape":
        x = np.full((2, d + 1), 0.1)
    elif kind == "count":
        y = np.array([0.5])
    else:
        x, y = np.full((5, d), 0.1), np.zeros(5)
    with pytest.raises(ValueError) as info:
        fit.add(x, y)
    assert any(w in str(info.value) for w in ("features", "rewards", "rows", "n_rounds")), info.value
    assert fit.n_seen == 0


@FUZZ
@given(st.sampled_from(list(oracle_names())),
       st.floats(min_value=2.0, max_value=1e300, allow_nan=False, allow_infinity=False),
       st.floats(min_value=-1e300, max_value=1e300, allow_nan=False, allow_infinity=False))
def test_oracles_clip_huge_rows_with_a_warning_and_stay_finite(name, scale, reward):
    d = oracle_dim(name, 2)
    rng = np.random.default_rng(1)
    x = rng.standard_normal((16, d))
    x *= scale / np.linalg.norm(x, axis=1, keepdims=True)
    y = np.full(16, reward)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est = build_oracle(name, _public(name)).fit(x, y, rng=2)
        width = est.width(x / scale)
    kinds = {type(w.message) for w in caught}
    assert kinds <= {ClippingWarning} and ClippingWarning in kinds, [str(w.message) for w in caught]
    assert np.all(np.isfinite(est.theta)) and np.all(np.isfinite(width)) and np.all(width >= 0)
