"""Rendering of PrivLinCB-v0, PrivGLMCB-v0 and PrivCBify-v0: Gymnasium's render conventions, what a frame
shows, frame recording, and the environment builder of Stable-Baselines3."""

from __future__ import annotations

import os
import subprocess
import sys
import warnings
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.error import ResetNeeded, UnsupportedMode
from gymnasium.utils.env_checker import check_env
from gymnasium.wrappers import RenderCollection

import privbandit  # noqa: F401  (registers the envs)
from privbandit.envs import ENV_IDS, PrivLinCBEnv
from privbandit.envs.render import HEIGHT, RENDER_MODES, RoundView, frame_width, render_rgb

_X = np.random.default_rng(0).standard_normal((60, 4))
KWARGS = {
    "PrivLinCB-v0": dict(n_arms=4, dim=3, horizon=40),
    "PrivGLMCB-v0": dict(n_arms=5, dim=3, horizon=40),
    "PrivCBify-v0": dict(X=_X, y=np.arange(60) % 3, horizon=40),
}
"""Small instances of every registered env (a user dataset for cbify, which needs no extra)."""

BLUE, GREEN = (31, 119, 180), (44, 160, 44)


def _played(env: gym.Env, actions) -> list[dict]:
    env.reset(seed=3)
    return [env.step(int(a))[-1] for a in actions]


def test_every_env_id_is_covered():
    assert set(KWARGS) == set(ENV_IDS)


@pytest.mark.parametrize("env_id", sorted(ENV_IDS))
def test_make_render_returns_an_image_and_a_string_after_reset(env_id):
    env = gym.make(f"privbandit:{env_id}", render_mode="rgb_array", **KWARGS[env_id])
    assert env.metadata["render_modes"] == list(RENDER_MODES) and env.metadata["render_fps"] > 0
    env.reset(seed=0)
    frame = env.render()
    k = env.action_space.n
    assert frame.dtype == np.uint8 and frame.shape == (HEIGHT, frame_width(k), 3)
    text = gym.make(env_id, render_mode="ansi", **KWARGS[env_id])
    text.reset(seed=0)
    out = text.render()
    assert isinstance(out, str) and "no arm played yet" in out and out.count("\n") == 2 + k


@pytest.mark.parametrize("env_id", sorted(ENV_IDS))
def test_check_env_is_clean_with_its_render_checks(env_id):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for mode in (None, *RENDER_MODES):  # the checker also remakes the env in every declared mode
            env = gym.make(env_id, render_mode=mode, **KWARGS[env_id])
            check_env(env.unwrapped)


def test_unknown_mode_gymnasium_warns_and_the_env_refuses():
    refused = pytest.raises(UnsupportedMode, match=r"render_mode must be None or one of \['ansi', 'rgb_array'\]")
    with pytest.warns(UserWarning, match="not in the possible render_modes"), refused:
        gym.make("PrivLinCB-v0", render_mode="rgb")
    with pytest.raises(UnsupportedMode, match="got 'human'"):
        PrivLinCBEnv(render_mode="human")
    with pytest.raises(UnsupportedMode, match="render_mode"):
        gym.make_vec("PrivLinCB-v0", num_envs=2, render_mode="rgb")


def test_no_render_mode_keeps_nothing_and_render_warns():
    env = PrivLinCBEnv(n_arms=3, dim=2, horizon=20)
    _played(env, [0, 1, 2])
    assert env._last is None and env._trace.array().size == 0  # step did no rendering work
    with pytest.warns(UserWarning, match="without specifying any render mode"):
        assert env.render() is None


def test_render_before_reset_needs_a_reset():
    with pytest.raises(ResetNeeded):
        PrivLinCBEnv(render_mode="ansi").render()


def test_ansi_block_shows_the_last_round():
    env = PrivLinCBEnv(n_arms=4, dim=3, horizon=40, family="isotropic", render_mode="ansi")
    infos = _played(env, [0, 3, 1])
    text = env.render()
    lines = text.splitlines()
    regret = sum(i["regret"] for i in infos)
    assert lines[0] == f"t = 3 of 40   cumulative regret {regret:.4f}"
    assert lines[1].startswith("last round: arm 1 played, reward ") and f"regret {infos[-1]['regret']:.4f}" in lines[1]
    means, best = infos[-1]["expected_reward"], infos[-1]["optimal_action"]
    for a in range(4):
        row = lines[3 + a]
        assert f"{means[a]:+.4f}" in row
        assert ("best" in row) == (a == best) and ("played" in row) == (a == 1)


def test_rgb_frame_marks_the_chosen_and_the_optimal_arm():
    env = PrivLinCBEnv(n_arms=4, dim=3, horizon=40, family="isotropic", render_mode="rgb_array")
    actions = [2, 2, 2, 2, 2, 2]
    infos = _played(env, actions)
    frame = env.render()
    best = infos[-1]["optimal_action"]
    width = frame_width(4) // 4

    def centre(a: int) -> int:
        return a * width + width // 2

    assert tuple(frame[168, centre(best)]) == GREEN and tuple(frame[178, centre(2)]) == BLUE
    for a in range(4):  # one green marker, one blue marker, nothing else on those rows
        assert (tuple(frame[168, centre(a)]) == GREEN) == (a == best)
        assert (tuple(frame[178, centre(a)]) == BLUE) == (a == 2)
    column = frame[24:161, centre(2)]  # the chosen arm's bar is blue
    assert np.any(np.all(column == BLUE, axis=1))
    env.reset(seed=3)  # a new episode: no chosen arm, empty regret curve
    fresh = env.render()
    assert not np.any(np.all(fresh[174:182] == BLUE, axis=2))


def test_rgb_frame_bars_follow_the_expected_rewards():
    view = RoundView(1, 5, np.array([0.5, -0.25, 0.0, -0.5]), 0, 1, 1.0, 0.75, np.array([0.75]))
    frame = render_rgb(view)
    zero, half, width = 92, 68, frame_width(4) // 4
    coloured = ~np.all(frame[24:161] == 255, axis=2)
    heights = [int(coloured[:, a * width + width // 2].sum()) for a in range(4)]
    # |m| / max |m| of the half-height, plus the zero line's pixel
    assert heights == [half + 1, half // 2 + 1, 1, half + 1]
    assert np.all(frame[zero, :] == 0)


def test_sample_batch_rounds_are_not_drawn_as_played():
    env = PrivLinCBEnv(n_arms=3, dim=2, horizon=40, render_mode="ansi")
    _played(env, [0, 1])
    env.sample_batch(5)
    text = env.render()
    assert text.startswith("t = 7 of 40") and "no arm played yet" in text


@pytest.mark.parametrize("env_id", sorted(ENV_IDS))
def test_render_collection_records_one_frame_per_round(env_id):
    env = RenderCollection(gym.make(env_id, render_mode="rgb_array", **KWARGS[env_id]))
    env.reset(seed=1)
    for _ in range(5):
        env.step(env.action_space.sample())
    frames = env.render()
    assert len(frames) == 6 and all(f.shape == frames[0].shape and f.dtype == np.uint8 for f in frames)
    listed = gym.make(env_id, render_mode="rgb_array_list", **KWARGS[env_id])  # Gymnasium adds the wrapper
    listed.reset(seed=1)
    assert isinstance(listed.render(), list)


def _sb3_make_vec_env_init(env_id: str, env_kwargs: dict) -> gym.Env:
    """What ``stable_baselines3.common.env_util.make_vec_env`` builds for each sub-env given an env id.

    Its ``make_env(rank)._init`` (stable-baselines3 2.9.2, ``stable_baselines3/common/env_util.py``) asks for
    ``render_mode="rgb_array"`` unless the caller set one, and falls back to no render mode only on a TypeError::

        kwargs = {"render_mode": "rgb_array"}
        kwargs.update(env_kwargs)
        try:
            env = gym.make(env_id, **kwargs)
        except TypeError:
            env = gym.make(env_id, **env_kwargs)

    then wraps it in its Monitor (a recorder of episode returns, not needed here). SB3 needs torch, too heavy
    for the test extra; :func:`test_stable_baselines3_make_vec_env_when_installed` runs the real builder
    wherever SB3 is installed.
    """
    kwargs = {"render_mode": "rgb_array"}
    kwargs.update(env_kwargs)
    try:
        return gym.make(env_id, **kwargs)
    except TypeError:
        return gym.make(env_id, **env_kwargs)


@pytest.mark.parametrize("env_id", sorted(ENV_IDS))
def test_stable_baselines3_builder_path_makes_rendering_envs(env_id):
    envs = [_sb3_make_vec_env_init(env_id, KWARGS[env_id]) for _ in range(4)]
    assert all(e.render_mode == "rgb_array" for e in envs)
    for i, e in enumerate(envs):
        e.reset(seed=i)
        e.step(0)
    frames = [e.render() for e in envs]  # what SB3's DummyVecEnv.get_images collects
    assert all(f.shape == (HEIGHT, frame_width(e.action_space.n), 3) for f, e in zip(frames, envs))


def test_stable_baselines3_make_vec_env_when_installed():
    env_util = pytest.importorskip("stable_baselines3.common.env_util")
    vec = env_util.make_vec_env("privbandit:PrivLinCB-v0", n_envs=4, seed=0, env_kwargs=KWARGS["PrivLinCB-v0"])
    obs = vec.reset()
    assert obs.shape == (4, 4, 3) and vec.render_mode == "rgb_array"
    vec.step(np.zeros(4, dtype=np.int64))
    images = vec.get_images()
    assert len(images) == 4 and images[0].shape == (HEIGHT, frame_width(4), 3)
    vec.close()


@pytest.mark.slow
def test_the_guides_ppo_script_runs_when_stable_baselines3_is_installed():
    """The guide shows ``scripts/demo_sb3_ppo.py`` (PPO learning through ``make_vec_env``); it runs (minutes)."""
    pytest.importorskip("stable_baselines3")
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(root), os.environ.get("PYTHONPATH")]))}
    proc = subprocess.run([sys.executable, str(root / "scripts" / "demo_sb3_ppo.py")], capture_output=True,
                          text=True, env=env, cwd=root, check=False, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "tiled frame (480, 640, 3)" in proc.stdout


@pytest.mark.parametrize("mode", RENDER_MODES)
def test_vector_env_renders_one_frame_per_sub_env_as_sync(mode):
    kw = dict(num_envs=3, render_mode=mode, n_arms=3, dim=2, horizon=3)
    vec = gym.make_vec("PrivGLMCB-v0", vectorization_mode="vector_entry_point", **kw)
    sync = gym.make_vec("PrivGLMCB-v0", vectorization_mode="sync", **kw)
    for v in (vec, sync):
        v.reset(seed=5)
    for step in range(5):  # crosses a truncation and the autoreset step after it
        acts = np.array([step % 3, 1, 2])
        vec.step(acts)
        sync.step(acts)
        f1, f2 = vec.render(), sync.render()
        assert isinstance(f1, tuple) and len(f1) == 3
        for a, b in zip(f1, f2):
            assert np.array_equal(a, b) if mode == "rgb_array" else a == b
    vec.close()
    sync.close()


def test_vector_env_without_render_mode_warns():
    vec = gym.make_vec("PrivLinCB-v0", num_envs=2, vectorization_mode="vector_entry_point")
    vec.reset(seed=0)
    vec.step(np.array([0, 1]))
    assert all(last is None for last in vec.unwrapped._last)
    with pytest.warns(UserWarning, match="without specifying any render mode"):
        assert vec.render() is None
