"""PrivCBify-v0: real classification data as a bandit (Gymnasium contract, batch sampler, vector env,
clipping rule, both reward models, user arrays, the optional scikit-learn extra, U*/W* on digits)."""

from __future__ import annotations

import re
import sys
import warnings

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import privbandit  # noqa: F401  (registers the envs)
from privbandit import infomatrix
from privbandit.envs import BLOCK_SIZE, PrivCBifyEnv, RoundBatch
from privbandit.envs import data as data_module

pytest.importorskip("sklearn")


def _wine_row_labels(env):
    """Map each scaled row (as bytes) of the env's dataset to its label (wine's rows are distinct)."""
    fam = env.data.family
    table = {fam.rows[i].tobytes(): int(fam.labels[i]) for i in range(fam.n_rows)}
    assert len(table) == fam.n_rows
    return table


def _context(env, obs):
    """The row x behind an observation (block a of phi(x, a) = e_a (x) x, for arm a = 0)."""
    p = env.dim // env.n_arms
    return obs[0, :p]


# -- the Gymnasium contract -----------------------------------------------------------------------
@pytest.mark.parametrize("reward", ["label", "linear-fit"])
@pytest.mark.parametrize("feature_map", ["disjoint", "shared"])
def test_check_env_both_feature_maps_and_reward_models(feature_map, reward):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        env = gym.make("privbandit:PrivCBify-v0", dataset="wine", feature_map=feature_map, reward=reward)
        check_env(env.unwrapped)
        obs, _ = env.reset(seed=0)
        assert obs.shape == (3, 39) and obs in env.observation_space


def test_digits_passes_check_env_with_the_card_defaults():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        env = gym.make("privbandit:PrivCBify-v0", dataset="digits")
        check_env(env.unwrapped)
    u = env.unwrapped
    assert (u.n_arms, u.dim, u.bound, u.horizon) == (10, 640, 1.0, 2 ** 16)
    assert gym.spec("PrivCBify-v0").max_episode_steps is None  # the episode length is the horizon
    assert u.data.family.n_rows == 1797 and u.data.n_clipped == 0


# -- the batch sampler and the vector env ---------------------------------------------------------
@pytest.mark.parametrize("kwargs", [dict(reward="label"), dict(reward="linear-fit", feature_map="shared"),
                                    dict(reward="linear-fit", noise="gaussian")])
def test_batch_sampler_equals_step_loop(kwargs):
    n = 2 * BLOCK_SIZE + 300
    actions = np.random.default_rng(1).integers(0, 3, size=n)
    env = PrivCBifyEnv(dataset="wine", horizon=n + 1, **kwargs)
    obs, _ = env.reset(seed=21)
    feats, rewards, means, regrets, opts = [], [], [], [], []
    for a in actions:
        feats.append(obs)
        obs, r, _, _, info = env.step(int(a))
        rewards.append(r)
        means.append(info["expected_reward"])
        regrets.append(info["regret"])
        opts.append(info["optimal_action"])
    twin = PrivCBifyEnv(dataset="wine", horizon=n + 1, **kwargs)
    twin.reset(seed=21)
    chunks = [twin.sample_batch(k) for k in (1, BLOCK_SIZE - 1, 7, BLOCK_SIZE + 200, n - 2 * BLOCK_SIZE - 207)]
    batch = RoundBatch(*(np.concatenate(parts) for parts in zip(*chunks)))
    assert np.array_equal(batch.features, np.array(feats))
    assert np.array_equal(batch.expected_rewards, np.array(means))
    assert np.array_equal(batch.rewards_of(actions), np.array(rewards))
    assert np.array_equal(batch.regret(actions), np.array(regrets))
    assert np.array_equal(batch.optimal_actions, np.array(opts))
    assert np.array_equal(twin.step(0)[0], env.step(0)[0])


def test_vector_sub_env_i_equals_single_env_seeded_seed_plus_i():
    kw = dict(dataset="iris", reward="linear-fit", horizon=1500)
    vec = gym.make_vec("privbandit:PrivCBify-v0", num_envs=3, vectorization_mode="vector_entry_point", **kw)
    singles = [PrivCBifyEnv(**kw) for _ in range(3)]
    obs, _ = vec.reset(seed=40)
    first = [s.reset(seed=40 + i)[0] for i, s in enumerate(singles)]
    for i in range(3):
        assert np.array_equal(obs[i], first[i])
    rng = np.random.default_rng(2)
    for _ in range(1100):  # crosses the 1024-round block boundary
        acts = rng.integers(0, 3, size=3)
        o, r, _, _, info = vec.step(acts)
        for i, s in enumerate(singles):
            so, sr, _, _, sinfo = s.step(int(acts[i]))
            assert np.array_equal(o[i], so) and r[i] == sr and info["regret"][i] == sinfo["regret"]
    vec.close()


# -- features: standardisation and the clipping rule ----------------------------------------------
@pytest.mark.parametrize("feature_map", ["disjoint", "shared"])
def test_features_within_bound_and_the_clipping_rule(feature_map):
    env = PrivCBifyEnv(dataset="wine", bound=2.0, clip_quantile=0.8, feature_map=feature_map, horizon=3000)
    env.reset(seed=3)
    feats = env.sample_batch(3000).features
    norms = np.linalg.norm(feats, axis=-1)
    assert norms.max() <= 2.0
    # the rule: rows times B / r_q, the longer ones projected onto the sphere of radius B
    x, _ = data_module.load_dataset("wine")
    z = (x - x.mean(0)) / x.std(0)
    r = np.linalg.norm(z, axis=1)
    r_q = np.quantile(r, 0.8)
    want = z * (2.0 / r_q) / np.maximum(1.0, r / r_q)[:, None]
    assert np.allclose(env.data.family.rows, want, rtol=1e-10)
    assert env.data.n_clipped == int(np.sum(r > r_q)) > 0
    # the default keeps every norm (no row clipped): the largest row has norm exactly B (up to rounding)
    default = PrivCBifyEnv(dataset="wine")
    assert default.data.n_clipped == 0
    assert np.linalg.norm(default.data.family.rows, axis=1).max() == pytest.approx(1.0)


def test_constant_columns_standardise_to_zero_and_pca_is_fixed_before_the_run():
    env = PrivCBifyEnv(dataset="digits", reward="linear-fit")
    rows = env.data.family.rows
    constant = np.flatnonzero(env.data.family.rows.std(axis=0) == 0)
    assert constant.size >= 3 and np.all(rows[:, constant] == 0.0)  # digits has always-blank pixels
    small = PrivCBifyEnv(dataset="digits", n_components=8)
    assert small.dim == 80 and small.data.components.shape == (64, 8)


# -- reward models ---------------------------------------------------------------------------------
def test_label_reward_and_regret_are_against_the_true_label():
    env = PrivCBifyEnv(dataset="wine", reward="label")
    table = _wine_row_labels(env)
    obs, _ = env.reset(seed=5)
    rng = np.random.default_rng(0)
    seen_right = seen_wrong = 0
    for _ in range(400):
        label = table[_context(env, obs).tobytes()]
        a = int(rng.integers(0, 3))
        obs, r, _, _, info = env.step(a)
        assert info["optimal_action"] == label
        assert r == (1.0 if a == label else -1.0)
        assert info["regret"] == (0.0 if a == label else 2.0)
        assert np.array_equal(info["expected_reward"], np.where(np.arange(3) == label, 1.0, -1.0))
        seen_right += a == label
        seen_wrong += a != label
    assert seen_right > 50 and seen_wrong > 50


@pytest.mark.parametrize("feature_map", ["disjoint", "shared"])
def test_linear_fit_mean_is_the_linear_model_and_theta_is_the_scaled_ridge_fit(feature_map):
    from sklearn.linear_model import Ridge

    env = PrivCBifyEnv(dataset="wine", reward="linear-fit", feature_map=feature_map, ridge=3.0, horizon=2 ** 15)
    env.reset(seed=0)
    batch = env.sample_batch(2 ** 15)
    assert np.allclose(batch.expected_rewards, batch.features @ env.theta, rtol=0, atol=1e-12)
    # the rewards' mean is the linear model's (Rademacher rewards, 3 * 2^15 draws)
    resid = batch.rewards - batch.expected_rewards
    assert abs(resid.mean()) < 4 * np.sqrt(1.0 / resid.size)
    # theta* = sklearn's ridge fit of the signed one-hot labels, scaled into the model's range
    fam = env.data.family
    targets = np.where(fam.labels[:, None] == np.arange(3), 1.0, -1.0)
    coef = Ridge(alpha=3.0, fit_intercept=False).fit(fam.rows, targets).coef_
    assert np.allclose(env.theta * env.data.fit_scale, coef.reshape(-1), atol=1e-8)
    assert np.linalg.norm(env.theta) <= 1.0 and env.instance.predictor_bound <= 1.0
    # the fit is a good classifier: its argmax is the true label on most rows
    assert np.mean(np.argmax(fam.rows @ coef.T, axis=1) == fam.labels) > 0.9


# -- user arrays and errors -----------------------------------------------------------------------
def test_user_arrays_work_and_labels_are_the_sorted_classes():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((60, 4))
    y = np.array(["b", "a", "c"] * 20)
    env = gym.make("privbandit:PrivCBify-v0", X=x, y=y, reward="linear-fit")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(env.unwrapped)
    assert env.unwrapped.n_arms == 3 and env.unwrapped.dim == 12
    assert env.unwrapped.data.family.labels[:3].tolist() == [1, 0, 2]


@pytest.mark.parametrize("kwargs, match", [
    (dict(X=np.ones(5), y=np.zeros(5)), "X must have 2 dimensions"),
    (dict(X=np.ones((5, 2)), y=np.zeros(4)), r"y must have shape \(5,\)"),
    (dict(X=np.ones((5, 2)), y=np.zeros((5, 1))), r"y must have shape \(5,\)"),
    (dict(X=np.array([[0.0, np.nan], [1.0, 2.0]]), y=[0, 1]), "X must contain only finite"),
    (dict(X=np.ones((4, 2)), y=[0.0, np.nan, 1.0, 1.0]), "y must contain no NaN"),
    (dict(X=np.eye(3), y=[1, 1, 1]), "at least 2 classes"),
    (dict(X=np.ones((3, 2)), y=[0, 1, 0]), "quantile of the standardised row norms is 0"),
    (dict(X=np.eye(3)), "pass both X and y"),
    (dict(X=np.eye(3), y=[0, 1, 0], dataset="iris"), "either dataset='iris' or arrays"),
    (dict(dataset="mnist"), "dataset must be one of"),
    (dict(dataset="iris", reward="regression"), "reward must be one of"),
    (dict(dataset="iris", feature_map="hybrid"), "feature_map must be one of"),
    (dict(dataset="iris", clip_quantile=0.0), "clip_quantile must be in"),
    (dict(dataset="iris", n_components=5), r"n_components must be an integer in \[1, 4\]"),
    (dict(dataset="iris", ridge=-1.0), "ridge must be in"),
])
def test_bad_input_gives_clear_errors(kwargs, match):
    with pytest.raises(ValueError, match=match):
        PrivCBifyEnv(**kwargs)


def test_without_scikit_learn_named_datasets_name_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "sklearn", None)  # `from sklearn import ...` now raises ImportError
    monkeypatch.setattr(data_module, "_load", data_module._load.__wrapped__)  # no cached copy
    with pytest.raises(ImportError, match=r'pip install "privbandit\[data\]"'):
        PrivCBifyEnv(dataset="digits")
    with pytest.raises(ImportError, match=r"privbandit\[data\]"):
        gym.make_vec("privbandit:PrivCBify-v0", num_envs=2, vectorization_mode="vector_entry_point")
    # user arrays need no scikit-learn
    env = PrivCBifyEnv(X=np.random.default_rng(0).standard_normal((20, 3)), y=[0, 1] * 10)
    assert env.reset(seed=0)[0].shape == (2, 6)


# -- diagnostics ------------------------------------------------------------------------------------
def test_feature_second_moment_is_exact_and_u_star_w_star_run_on_digits():
    env = PrivCBifyEnv(dataset="digits", n_components=4)
    sigma = env.feature_second_moment()
    x, w = env.uniform_policy_atoms()
    assert x.shape == (17970, 40) and np.isclose(w.sum(), 1.0)
    assert np.allclose(sigma, infomatrix.second_moment(x, w), atol=1e-14)
    assert np.allclose(sigma, env.feature_second_moment(n_rounds=2 ** 14), atol=2e-3)  # sampled rounds agree
    u = env.u_star(0.01, tol=1e-9)
    assert np.allclose(infomatrix.f_ldp(u.matrix, x, w, lam=0.01), np.eye(40), atol=1e-8)
    wm = env.w_star(0.01, 0.01, tol=1e-9)
    assert np.allclose(infomatrix.f_dp(wm.matrix, x, w, gamma=0.01, lam=0.01), np.eye(40), atol=1e-8)
    shared = PrivCBifyEnv(dataset="digits", n_components=4, feature_map="shared")
    assert np.allclose(shared.feature_second_moment(), sigma, atol=1e-15)


def _without_scikit_learn(monkeypatch) -> None:
    """Make this process an install without the `data` extra (scikit-learn unimportable, no cached dataset)."""
    monkeypatch.setitem(sys.modules, "sklearn", None)
    monkeypatch.setattr(data_module, "_load", data_module._load.__wrapped__)


def test_the_quick_suite_leaves_the_real_data_cell_out_without_scikit_learn(monkeypatch):
    """The README's first command needs only `pip install -e .`: without the `data` extra the suite drops the
    digits grid and names it, instead of failing inside a worker."""
    from privbandit.bench.suites import get_suite

    quick = get_suite("quick")
    assert "cbify-digits-pca4" in {e.label for g in quick.available_grids() for e in g.envs}
    _without_scikit_learn(monkeypatch)
    labels = {e.label for g in quick.available_grids() for e in g.envs}
    assert "cbify-digits-pca4" not in labels and "rare-direction-d5k5" in labels
    assert "cbify-digits-pca4" in quick.missing()
    assert all(c.env.label != "cbify-digits-pca4" for c in quick.cells())


def test_the_readme_says_how_many_cells_a_default_install_runs(monkeypatch):
    """The quick start's numbers: the suite's cells with the `data` extra, and without it (a default install)."""
    from pathlib import Path

    from privbandit.bench.suites import get_suite

    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    said = re.search(r"default install runs (\d+) of the suite's (\d+) cells: the\s+other (\d+) are", readme)
    assert said, "the quick start's sentence on a default install's cells went missing"
    default, total, other = map(int, said.groups())
    assert len(get_suite("quick").cells()) == total and f"`privbandit bench --suite quick --out DIR`, {total} cells" \
        in readme
    _without_scikit_learn(monkeypatch)
    quick = get_suite("quick")
    assert (len(quick.cells()), total - default) == (default, other)
    assert quick.left_out().startswith(f"{other} of the suite's {total} cells left out: the real-data env "
                                       "cbify-digits-pca4 needs the data extra")


@pytest.mark.slow
def test_bench_says_what_it_leaves_out_before_it_runs(monkeypatch, capsys, tmp_path):
    """Without the `data` extra, bench names the cells it leaves out, and why, on stderr before the sweep
    (and its progress bar) starts, and in the report's notes."""
    from privbandit import cli
    from privbandit.bench import workflow

    _without_scikit_learn(monkeypatch)
    run_sweep = workflow.run_cells
    before = []

    def watched(*args, **kwargs):
        before.append(capsys.readouterr().err)
        return run_sweep(*args, **kwargs)

    monkeypatch.setattr(workflow, "run_cells", watched)
    out = tmp_path / "out"
    assert cli.main(["bench", "--suite", "quick", "--seeds", "1", "--horizon", "64", "--out", str(out)]) == 0
    said = re.search(r"(\d+) of the suite's (\d+) cells left out: the real-data env cbify-digits-pca4 needs the "
                     r"data extra \(pip install -e \"\.\[data\]\"", before[0] if len(before) == 1 else "")
    assert said, before
    left, total = map(int, said.groups())
    assert left > 0 and f"\n{total - left} cells ({total - left} run, 0 already finished)" in capsys.readouterr().out
    assert said[0] in (out / "report.md").read_text()
