"""PrivLinCB-v0 / PrivGLMCB-v0: Gymnasium contract, seeding, batch sampler == step loop, vector env,
errors, rewards and diagnostics."""

from __future__ import annotations

import subprocess
import sys
import warnings

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.error import ResetNeeded
from gymnasium.utils.env_checker import check_env

import privbandit  # noqa: F401  (registers the envs)
from privbandit import infomatrix
from privbandit.agents import BanditSpec
from privbandit.envs import (
    BLOCK_SIZE,
    ENV_IDS,
    InstanceOptions,
    Isotropic,
    PrivGLMCBEnv,
    PrivLinCBEnv,
    PrivLinCBVectorEnv,
    RoundBatch,
    build_instance,
    family_names,
    make_family,
    register_envs,
)
from privbandit.links import Link


def _cubic(z):
    return 0.5 * z + 0.25 * z ** 3


def _cubic_derivative(z):
    return 0.5 + 0.75 * z ** 2


CUBIC = Link("cubic", _cubic, _cubic_derivative, mu=0.5, lipschitz=1.25)
"""A user link: nu(z) = z/2 + z^3/4 on |z| <= 1 (values in [-3/4, 3/4], 1/2 <= nu' <= 5/4)."""

SMALL = dict(n_arms=2, dim=6, horizon=50)


# -- registration --------------------------------------------------------------------------------
def test_ids_registered_with_vector_entry_point_and_no_time_limit():
    for env_id in ENV_IDS:
        spec = gym.spec(env_id)
        assert spec.vector_entry_point is not None
        assert spec.max_episode_steps is None  # the env truncates at its horizon
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        register_envs()  # idempotent: no "overriding" warning


LONG_KWARGS = {"PrivLinCB-v0": dict(n_arms=2, dim=2), "PrivGLMCB-v0": dict(n_arms=2, dim=2),
               "PrivCBify-v0": dict(X=np.eye(4), y=np.arange(4) % 2)}
"""Small instances of every registered env (the CBify one on a dataset given as arrays, no extra needed)."""


@pytest.mark.parametrize("env_id", sorted(ENV_IDS))
def test_gym_make_plays_a_horizon_beyond_the_default_to_its_end(env_id):
    """horizon = 2^17 through gym.make: the episode ends at round 2^17 exactly, no registered TimeLimit cuts it
    at the default 2^16; make_vec's sub-envs have the same horizon."""
    assert set(LONG_KWARGS) == set(ENV_IDS)
    horizon = 2 ** 17
    env = gym.make(env_id, horizon=horizon, **LONG_KWARGS[env_id])
    env.reset(seed=0)
    steps, truncated = 0, False
    while not truncated:
        _, _, terminated, truncated, _ = env.step(0)
        steps += 1
        assert not terminated and steps <= horizon
    assert steps == horizon and env.unwrapped.bandit_spec().horizon == horizon
    vec = gym.make_vec(env_id, num_envs=2, vectorization_mode="vector_entry_point", horizon=horizon,
                       **LONG_KWARGS[env_id])
    assert vec.unwrapped.horizon == horizon
    vec.close()
    short = gym.make(env_id, horizon=horizon, max_episode_steps=3, **LONG_KWARGS[env_id])  # a limit given: kept
    short.reset(seed=0)
    assert [short.step(0)[3] for _ in range(3)] == [False, False, True]


@pytest.mark.slow
def test_make_with_module_prefix_needs_no_prior_import():
    code = ("import sys, gymnasium as gym; assert 'privbandit' not in sys.modules; "
            "env = gym.make('privbandit:PrivLinCB-v0'); obs, _ = env.reset(seed=0); print(obs.shape)")
    out = subprocess.run([sys.executable, "-W", "error", "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "(10, 10)"


# -- the Gymnasium contract -----------------------------------------------------------------------
@pytest.mark.parametrize("feature_map", ["shared", "disjoint"])
@pytest.mark.parametrize("link", ["identity", "logistic", CUBIC], ids=["identity", "logistic", "user"])
@pytest.mark.parametrize("family", family_names())
def test_check_env_every_family_link_and_feature_map(family, link, feature_map):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        env = gym.make("PrivGLMCB-v0", family=family, link=link, feature_map=feature_map, **SMALL)
        check_env(env.unwrapped)
        obs, _ = env.reset(seed=1)
        assert obs.shape == (2, 6) and obs in env.observation_space


def test_check_env_defaults_and_linear_env():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for env_id in ("PrivLinCB-v0", "PrivGLMCB-v0"):
            env = gym.make(env_id)
            check_env(env.unwrapped)
            assert env.observation_space.shape == (10, 10)
            assert env.action_space == gym.spaces.Discrete(10)


def test_defaults_match_the_env_card():
    env = gym.make("PrivLinCB-v0").unwrapped
    fam = env.instance.family
    assert (env.n_arms, env.dim, env.bound, env.horizon) == (10, 10, 1.0, 2 ** 16)
    assert fam.name == "heavy-tailed" and (fam.tail, fam.scale) == (2.0, 0.05)
    assert fam.radius_moment(2) == pytest.approx(0.0175, abs=5e-5)
    assert fam.radius_moment(1) == pytest.approx(0.0975, abs=5e-5)
    assert env.feature_lambda_min() == pytest.approx(0.00175, abs=5e-6)
    assert np.linalg.norm(env.theta) == pytest.approx(1.0)
    glm = gym.make("PrivGLMCB-v0").unwrapped
    assert glm.instance.link.name == "logistic"
    assert glm.instance.link.mu == pytest.approx(1 - np.tanh(1.0) ** 2)


def test_step_info_and_truncation():
    env = gym.make("PrivLinCB-v0", horizon=5, family="isotropic")
    obs, info = env.reset(seed=3)
    assert info == {"t": 0}
    for t in range(1, 6):
        action = t % 10
        obs, reward, terminated, truncated, info = env.step(action)
        m = info["expected_reward"]
        assert m.shape == (10,) and reward in (-1.0, 1.0) and isinstance(reward, float)
        assert info["optimal_action"] == int(np.argmax(m))
        assert info["regret"] == pytest.approx(m.max() - m[action]) and info["regret"] >= 0
        assert info["t"] == t and terminated is False
        assert truncated is (t == 5)
    with pytest.raises(ResetNeeded, match="horizon"):
        env.unwrapped.step(0)
    env.reset()
    assert env.step(0)[4]["t"] == 1


def test_optimal_action_has_zero_regret():
    env, twin = PrivLinCBEnv(family="isotropic"), PrivLinCBEnv(family="isotropic")
    env.reset(seed=0)
    twin.reset(seed=0)
    best = twin.sample_batch(50).optimal_actions
    regrets = [env.step(int(a))[4]["regret"] for a in best]
    assert np.all(np.array(regrets) == 0.0)
    assert env.step(int((best[0] + 1) % 10))[4]["regret"] >= 0.0


# -- seeding and the batch sampler ----------------------------------------------------------------
def _trajectory(env, seed, n, actions):
    obs, _ = env.reset(seed=seed)
    rows = []
    for a in actions[:n]:
        nxt, r, _, _, info = env.step(int(a))
        rows.append((obs, r, info["expected_reward"], info["regret"], info["optimal_action"]))
        obs = nxt
    return rows


def test_seeding_is_deterministic():
    actions = np.random.default_rng(0).integers(0, 10, size=300)
    a = _trajectory(PrivLinCBEnv(), 11, 300, actions)
    b = _trajectory(PrivLinCBEnv(), 11, 300, actions)
    c = _trajectory(PrivLinCBEnv(), 12, 300, actions)
    for ra, rb in zip(a, b):
        assert np.array_equal(ra[0], rb[0]) and ra[1] == rb[1] and np.array_equal(ra[2], rb[2])
    assert not np.array_equal(a[0][0], c[0][0])
    # the instance (theta*) comes from the constructor, not from the reset seed
    assert np.array_equal(PrivLinCBEnv(instance_seed=4).theta, PrivLinCBEnv(instance_seed=4).theta)
    assert not np.array_equal(PrivLinCBEnv(instance_seed=4).theta, PrivLinCBEnv(instance_seed=5).theta)


@pytest.mark.parametrize("kwargs", [dict(), dict(family="spiky", feature_map="disjoint", n_arms=5, dim=10),
                                    dict(family="rare-direction", noise="gaussian")])
def test_batch_sampler_equals_step_loop(kwargs):
    n = 2 * BLOCK_SIZE + 300
    actions = np.random.default_rng(1).integers(0, kwargs.get("n_arms", 10), size=n)
    env = PrivGLMCBEnv(**kwargs)
    obs, _ = env.reset(seed=21)
    feats, rewards, means, regrets, opts = [], [], [], [], []
    for a in actions:
        feats.append(obs)
        obs, r, _, _, info = env.step(int(a))
        rewards.append(r)
        means.append(info["expected_reward"])
        regrets.append(info["regret"])
        opts.append(info["optimal_action"])
    twin = PrivGLMCBEnv(**kwargs)
    twin.reset(seed=21)
    chunks = [twin.sample_batch(k) for k in (1, BLOCK_SIZE - 1, 7, BLOCK_SIZE + 200, n - 2 * BLOCK_SIZE - 207)]
    batch = RoundBatch(*(np.concatenate(parts) for parts in zip(*chunks)))
    assert batch.features.shape[0] == n
    assert np.array_equal(batch.features, np.array(feats))
    assert np.array_equal(batch.expected_rewards, np.array(means))
    assert np.array_equal(batch.rewards_of(actions), np.array(rewards))
    assert np.array_equal(batch.regret(actions), np.array(regrets))
    assert np.array_equal(batch.optimal_actions, np.array(opts))
    # after the batch, the step loop continues with the same next round
    assert np.array_equal(twin.step(0)[0], env.step(0)[0])


def test_mixing_step_and_batch_keeps_the_stream():
    env, twin = PrivLinCBEnv(), PrivLinCBEnv()
    obs, _ = env.reset(seed=5)
    twin.reset(seed=5)
    for _ in range(3):
        env.step(0)
    nxt = env.step(0)[0]
    batch = twin.sample_batch(4)
    assert np.array_equal(batch.features[0], obs)
    assert np.array_equal(twin.sample_batch(1).features[0], nxt)
    f, r, m = batch  # a RoundBatch unpacks as (features, rewards, expected_rewards)
    assert f.shape == (4, 10, 10) and r.shape == m.shape == (4, 10)


def test_sample_batch_errors():
    env = PrivLinCBEnv(horizon=10)
    with pytest.raises(ResetNeeded):
        env.sample_batch(1)
    env.reset(seed=0)
    with pytest.raises(ValueError, match="at most the 10 rounds"):
        env.sample_batch(11)
    env.sample_batch(10)
    with pytest.raises(ResetNeeded):
        env.step(0)


# -- rewards --------------------------------------------------------------------------------------
@pytest.mark.parametrize("noise", ["rademacher", "gaussian"])
def test_rewards_are_unbiased_and_bounded(noise):
    env = PrivLinCBEnv(family="isotropic", dim=3, n_arms=4, noise=noise, noise_scale=0.8)
    env.reset(seed=2)
    b = env.sample_batch(20_000)
    assert np.all(np.abs(b.rewards) <= 1.0)
    if noise == "rademacher":
        assert set(np.unique(b.rewards)) == {-1.0, 1.0}
    assert np.allclose(b.expected_rewards, b.features @ env.theta)
    # unbiased, also where |m| is near 1 (naive clipping to [-1, 1] would bias it toward 0 there)
    for sel in (np.ones_like(b.rewards, dtype=bool), b.expected_rewards > 0.7, b.expected_rewards < -0.7):
        diff = (b.rewards - b.expected_rewards)[sel]
        assert sel.sum() > 1000
        assert abs(diff.mean()) <= 5 * diff.std() / np.sqrt(diff.size) + 1e-12


def test_glm_links_shape_expected_rewards():
    env = PrivGLMCBEnv(family="isotropic", link_kwargs={"scale": 4.0})
    env.reset(seed=0)
    b = env.sample_batch(100)
    assert np.allclose(b.expected_rewards, np.tanh(2.0 * (b.features @ env.theta)))
    user = PrivGLMCBEnv(family="isotropic", link=CUBIC)
    user.reset(seed=0)
    b = user.sample_batch(100)
    assert np.allclose(b.expected_rewards, _cubic(b.features @ user.theta))


def test_bandit_spec():
    spec = gym.make("PrivGLMCB-v0", n_arms=3, dim=6, horizon=77, bound=2.0).unwrapped.bandit_spec()
    assert isinstance(spec, BanditSpec)
    assert (spec.n_arms, spec.dim, spec.horizon, spec.bound, spec.link.name) == (3, 6, 77, 2.0, "logistic")
    assert PrivLinCBEnv().bandit_spec().link.is_identity


# -- errors ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("kwargs, match", [
    (dict(n_arms=0), "n_arms"),
    (dict(dim=0), "dim"),
    (dict(horizon=0), "horizon"),
    (dict(bound=-1.0), "bound"),
    (dict(family="nope"), "family must be one of"),
    (dict(family_kwargs={"bogus": 1}), "unknown parameter"),
    (dict(family="isotropic", conditioning=2.0), "no conditioning parameter"),
    (dict(conditioning=0.1, family_kwargs={"scale": 0.1}), "either as conditioning"),
    (dict(conditioning=2.0), "scale"),
    (dict(feature_map="nope"), "feature_map"),
    (dict(feature_map="disjoint", n_arms=3, dim=10), "multiple of n_arms"),
    (dict(theta=np.ones(3)), "theta must have shape"),
    (dict(theta=np.ones(10)), "unit ball"),
    (dict(theta=np.ones(10) / np.sqrt(10), bound=2.0), "identity link"),
    (dict(noise="nope"), "noise"),
    (dict(noise="gaussian", noise_scale=0.0), "noise_scale"),
])
def test_bad_kwargs_raise_clear_errors(kwargs, match):
    with pytest.raises(ValueError, match=match):
        gym.make("PrivLinCB-v0", **kwargs)


def _family_parameters() -> list[tuple[str, str, str | None]]:
    """(family, parameter, dial) for every parameter of every named family, read from the families."""
    out = []
    for name in family_names():
        cls = type(make_family(name, dim=6, n_arms=2))
        out += [(name, param, cls.dial) for param in cls.parameter_names()]
    return out


@pytest.mark.parametrize("family, param, dial", _family_parameters())
def test_bad_family_parameter_errors_name_the_users_keyword(family, param, dial):
    bad = float("nan")  # refused by every parameter: reals, integers, vectors and matrices alike
    with pytest.raises((ValueError, TypeError)) as err:
        PrivLinCBEnv(n_arms=2, dim=6, family=family, family_kwargs={param: bad})
    assert str(err.value).startswith(f"family_kwargs[{param!r}] ")
    if param == dial:
        with pytest.raises((ValueError, TypeError)) as err:
            gym.make("PrivLinCB-v0", n_arms=2, dim=6, family=family, conditioning=bad)
        assert str(err.value).startswith(f"conditioning (the {family!r} family's {dial}) must be ")


def test_the_parameter_list_covers_every_family():
    listed = _family_parameters()
    assert {f for f, _, _ in listed} == set(family_names()) - {"isotropic"}  # the one with no parameters
    assert ("rare-direction", "rho", "rho") in listed and ("spiky", "mass", "condition") in listed


def test_disjoint_context_dimension_and_link_kwargs_errors_name_the_users_keywords():
    with pytest.raises(ValueError, match=r"^dim / n_arms \(the context dimension of the 'disjoint' feature map\)"):
        PrivLinCBEnv(n_arms=5, dim=5, family="rare-direction", feature_map="disjoint")
    with pytest.raises(ValueError, match=r"^link_kwargs\['scale'\] must be"):
        PrivGLMCBEnv(link_kwargs={"scale": float("nan")})
    with pytest.raises(ValueError, match=r"^mix must be"):  # a family built by the user keeps its own names
        make_family("heavy-tailed-direction", dim=3, mix=2.0)


def test_bad_links_raise():
    with pytest.raises(ValueError, match="link must be"):
        PrivGLMCBEnv(link="probit")
    with pytest.raises(ValueError, match="derivative"):    # nu'(0) = 0.5 < mu: refused when made (Link's check)
        Link("lying", _cubic, _cubic_derivative, mu=0.6, lipschitz=1.25)
    short = Link("short", _cubic, _cubic_derivative, mu=0.5, lipschitz=0.6875, domain=0.5)   # honest on |z| <= 0.5
    with pytest.raises(ValueError, match="derivative"):    # ... but the env's predictors reach |z| = 1
        PrivGLMCBEnv(link=short)
    big = Link("big", lambda z: 3 * z, lambda z: np.full_like(z, 3.0), mu=3.0, lipschitz=3.0)
    with pytest.raises(ValueError, match=r"into \[-1, 1\]"):
        PrivGLMCBEnv(link=big)
    with pytest.raises(TypeError):
        gym.make("PrivLinCB-v0", link="logistic")  # the linear env has no link argument
    with pytest.raises(TypeError):
        gym.make("PrivLinCB-v0", colour="red")


@pytest.mark.parametrize("action, err", [(-1, ValueError), (10, ValueError), (1.5, TypeError), ("a", TypeError),
                                         (None, TypeError), (True, TypeError), (np.array([1, 2]), TypeError)])
def test_bad_actions_raise_clear_errors(action, err):
    env = PrivLinCBEnv()
    env.reset(seed=0)
    with pytest.raises(err, match="action"):
        env.step(action)


def test_numpy_actions_and_step_before_reset():
    env = PrivLinCBEnv()
    with pytest.raises(ResetNeeded):
        env.step(0)
    env.reset(seed=0)
    assert env.step(np.int64(3))[4]["t"] == 1
    assert env.step(np.array(4))[4]["t"] == 2


# -- family objects -------------------------------------------------------------------------------
class _Corner:
    """A foreign family: every arm at (B/2, B/2) or a bad variant."""

    def __init__(self, scale=0.5, shape=None):
        self.scale, self.shape = scale, shape

    def sample(self, n, rng):
        return np.full(self.shape or (n, 2, 2), self.scale)


def test_family_objects():
    env = PrivLinCBEnv(family=make_family("low-rank", dim=6, n_arms=2, rank=2), n_arms=2, dim=6)
    env.reset(seed=0)
    assert env.sample_batch(3).features.shape == (3, 2, 6)
    with pytest.raises(ValueError, match="family.dim"):
        PrivLinCBEnv(family=make_family("isotropic", dim=5, n_arms=2), n_arms=2, dim=6)
    with pytest.raises(ValueError, match="family object"):
        PrivLinCBEnv(family=make_family("isotropic", dim=6, n_arms=2), n_arms=2, dim=6, conditioning=1.0)
    ok = PrivLinCBEnv(family=_Corner(), n_arms=2, dim=2)
    ok.reset(seed=0)
    assert np.allclose(ok.sample_batch(2).features, 0.5)
    with pytest.raises(ValueError, match="norm > bound"):
        PrivLinCBEnv(family=_Corner(scale=1.0), n_arms=2, dim=2).reset(seed=0)
    with pytest.raises(ValueError, match="shape"):
        PrivLinCBEnv(family=_Corner(shape=(3, 2, 2)), n_arms=2, dim=2).reset(seed=0)
    with pytest.raises(TypeError, match="family must be"):
        PrivLinCBEnv(family=3)
    with pytest.raises(ValueError, match="norm > bound"):  # subclasses of the built-ins are checked too
        PrivLinCBEnv(family=_TooLong(dim=2, n_arms=2), n_arms=2, dim=2).reset(seed=0)


class _TooLong(Isotropic):
    def _sample_rows(self, m, rng):
        return 2.0 * super()._sample_rows(m, rng)


# -- diagnostics ----------------------------------------------------------------------------------
@pytest.mark.parametrize("family", family_names())
def test_second_moment_exact_matches_monte_carlo(family):
    env = PrivLinCBEnv(family=family, n_arms=3, dim=4)
    exact = env.feature_second_moment()
    mc = env.feature_second_moment(n_rounds=20_000, rng=1)
    assert np.allclose(exact, mc, atol=0.02 * np.trace(exact) + 1e-3)
    assert env.feature_lambda_min() == pytest.approx(np.linalg.eigvalsh(exact)[0])


def test_disjoint_second_moment_is_block_diagonal():
    env = PrivLinCBEnv(family="isotropic", feature_map="disjoint", n_arms=3, dim=6)
    sig = env.feature_second_moment()
    expect = np.kron(np.eye(3), np.eye(2) / 2) / 3
    assert np.allclose(sig, expect)
    assert np.allclose(env.feature_second_moment(n_rounds=20_000), expect, atol=0.01)
    pts, probs = PrivLinCBEnv(family="spiky", feature_map="disjoint", n_arms=3, dim=6).uniform_policy_atoms()
    assert probs.sum() == pytest.approx(1.0) and pts.shape[1] == 6


def test_u_star_and_w_star_of_the_env():
    spiky = PrivLinCBEnv(family="spiky", n_arms=3, dim=4)
    pts, probs = spiky.uniform_policy_atoms()
    w = spiky.w_star(0.1, 0.01)
    assert w.residual < 1e-8 and w.matrix.shape == (4, 4)
    assert np.allclose(infomatrix.f_dp(w.matrix, pts, probs, gamma=0.1, lam=0.01), np.eye(4), atol=1e-8)
    u = spiky.u_star(0.01)
    assert np.allclose(infomatrix.f_ldp(u.matrix, pts, probs, lam=0.01), np.eye(4), atol=1e-8)
    heavy = PrivLinCBEnv(n_arms=3, dim=4)  # continuous: solved on a sample
    assert heavy.uniform_policy_atoms() is None
    uh = heavy.u_star(0.01, n_rounds=4000)
    x = heavy.uniform_policy_features(4000)
    assert np.allclose(infomatrix.f_ldp(uh.matrix, x, lam=0.01), np.eye(4), atol=1e-8)


# -- vector env -----------------------------------------------------------------------------------
def test_make_vec_vector_entry_point_equals_sync():
    kw = dict(num_envs=3, horizon=600, n_arms=4, dim=5)
    vec = gym.make_vec("PrivGLMCB-v0", vectorization_mode="vector_entry_point", **kw)
    sync = gym.make_vec("PrivGLMCB-v0", vectorization_mode="sync", **kw)
    assert vec.observation_space == sync.observation_space and vec.action_space == sync.action_space
    o1, i1 = vec.reset(seed=9)
    o2, i2 = sync.reset(seed=9)
    assert np.array_equal(o1, o2)
    rng = np.random.default_rng(0)
    truncations = 0
    for _ in range(1300):  # crosses two autoresets and the 1024-round block boundary
        acts = rng.integers(0, 4, size=3)
        r1, r2 = vec.step(acts), sync.step(acts)
        for x, y in zip(r1[:4], r2[:4]):
            assert np.array_equal(x, y)
        assert set(r1[4]) == set(r2[4])
        for key in r2[4]:
            assert np.array_equal(r1[4][key], r2[4][key]), key
        truncations += int(r1[3].sum())
    assert truncations == 6
    assert r1[0] in vec.observation_space
    vec.close()
    sync.close()


def test_vector_env_errors_and_limits():
    vec = gym.make_vec("PrivLinCB-v0", num_envs=2, vectorization_mode="vector_entry_point", max_episode_steps=3)
    assert vec.unwrapped.horizon == 3 and vec.unwrapped.bandit_spec().horizon == 3
    with pytest.raises(ResetNeeded):
        vec.step(np.array([0, 0]))
    vec.reset(seed=[4, 8])
    with pytest.raises(ValueError, match="shape"):
        vec.step(np.array([0, 0, 0]))
    with pytest.raises(ValueError, match="arm indices"):
        vec.step(np.array([0, 10]))
    with pytest.raises(ValueError, match="integer"):
        vec.step(np.array([0.5, 1.0]))
    out = [vec.step(np.array([1, 2]))[3] for _ in range(3)]
    assert out[-1].tolist() == [True, True]
    single = PrivLinCBEnv()
    obs, _ = single.reset(seed=8)
    assert np.array_equal(vec.reset(seed=np.int64(7))[0][1], obs)  # int seed s: sub-env i gets s + i
    vec.reset(seed=[4, 8])
    assert np.array_equal(vec.step(np.array([0, 5]))[1][1], single.step(5)[1])


def test_instance_options_check_the_scalars_and_name_the_callers_keywords():
    with pytest.raises(ValueError, match="^n_arms must be"):
        InstanceOptions(n_arms=0)
    with pytest.raises(ValueError, match="^noise_scale must be"):
        InstanceOptions(noise_scale=-1.0)
    with pytest.raises(TypeError, match="^link_kwargs must be a dict or None"):
        InstanceOptions(link_kwargs=[("scale", 2.0)])
    with pytest.raises(TypeError, match=r"^PrivGLMCBEnv got unexpected keyword argument\(s\) 'colour'"):
        PrivGLMCBEnv(colour="red")
    with pytest.raises(TypeError, match=r"\(and its vector env\) has the identity link and takes no link_kwargs"):
        PrivLinCBVectorEnv(link_kwargs={"scale": 2.0})


def test_an_env_builds_the_instance_its_keywords_name_as_instance_options_do():
    options = InstanceOptions(n_arms=3, dim=4, family="spiky", conditioning=5.0, instance_seed=7, noise="gaussian")
    built = build_instance(options)
    env = PrivLinCBEnv(n_arms=3, dim=4, family="spiky", conditioning=5.0, instance_seed=7, noise="gaussian")
    np.testing.assert_array_equal(built.theta, env.theta)
    assert built.noise == env.instance.noise and built.family.condition == env.instance.family.condition == 5.0
