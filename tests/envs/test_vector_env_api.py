"""Gymnasium's vector API (call, get_attr, set_attr) on the native vector env, answered as SyncVectorEnv
answers it on the same env's sub-envs."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

KW = dict(num_envs=3, horizon=40, n_arms=4, dim=5)


def pair(**kwargs):
    """The native vector env and gymnasium's SyncVectorEnv over the same env, both reset with seed 3."""
    native = gym.make_vec("PrivLinCB-v0", **{**KW, **kwargs})
    sync = gym.make_vec("PrivLinCB-v0", vectorization_mode="sync", **{**KW, **kwargs})
    native.reset(seed=3)
    sync.reset(seed=3)
    return native, sync


def step_both(native, sync, n):
    rng = np.random.default_rng(0)
    for _ in range(n):
        actions = rng.integers(0, KW["n_arms"], size=KW["num_envs"])
        native.step(actions)
        sync.step(actions)


def test_make_vec_gives_the_native_env_with_the_vector_api():
    native, _sync = pair()
    assert type(native).__name__ == "PrivLinCBVectorEnv"
    assert all(callable(getattr(native, name)) for name in ("call", "get_attr", "set_attr"))


@pytest.mark.parametrize("name", ["n_arms", "dim", "bound", "horizon", "render_mode", "observation_space",
                                  "action_space", "metadata", "np_random_seed", "spec"])
def test_get_attr_equals_sync(name):
    native, sync = pair()
    step_both(native, sync, 5)
    got, want = native.get_attr(name), sync.get_attr(name)
    assert isinstance(got, tuple) and len(got) == KW["num_envs"]
    assert got == want


def test_each_sub_env_has_its_own_generator_in_the_state_of_syncs():
    native, sync = pair()
    step_both(native, sync, 25)
    got, want = native.get_attr("np_random"), sync.get_attr("np_random")
    assert [g.bit_generator.state for g in got] == [g.bit_generator.state for g in want]
    assert len({str(g.bit_generator.state) for g in got}) == KW["num_envs"]      # seeds 3, 4, 5: all differ


def test_call_calls_methods_with_their_arguments_and_returns_attributes():
    native, sync = pair()
    for got, want in zip(native.call("theta"), sync.call("theta")):
        np.testing.assert_array_equal(got, want)
    assert native.call("bandit_spec") == sync.call("bandit_spec")
    assert native.call("feature_lambda_min", n_rounds=64, rng=1) == sync.call("feature_lambda_min", n_rounds=64,
                                                                                rng=1)
    assert native.call("n_arms") == sync.call("n_arms") == (4, 4, 4)    # a non-callable is returned as it is
    thetas = native.call("theta")
    assert thetas[0] is not thetas[1]                                   # one call per sub-env, as sync's


def test_call_render_gives_each_sub_envs_frame():
    native, sync = pair(render_mode="ansi")
    step_both(native, sync, 3)
    frames = native.call("render")
    assert frames == sync.call("render") and len(set(frames)) == KW["num_envs"]


def test_set_attr_sets_every_sub_env_as_sync_does():
    native, sync = pair()
    for env in (native, sync):
        env.set_attr("horizon", 9)                          # one value for all
        assert env.get_attr("horizon") == (9, 9, 9)
        env.set_attr("horizon", [6] * 3)                    # a list, one per sub-env
        with pytest.raises(AttributeError, match="render_mode"):   # gym.make's wrappers make it read-only
            env.set_attr("render_mode", "ansi")
    assert native.get_attr("horizon") == sync.get_attr("horizon") == (6, 6, 6)
    assert native.call("bandit_spec") == sync.call("bandit_spec")
    native.reset(seed=3)
    sync.reset(seed=3)
    for t in range(1, 7):                                   # the new horizon ends the episodes
        actions = np.full(3, t % 4)
        got, want = native.step(actions), sync.step(actions)
        np.testing.assert_array_equal(got[3], want[3])
    assert got[3].all()


def test_set_attr_refuses_what_the_shared_instance_cannot_hold():
    native, sync = pair()
    for env in (native, sync):
        with pytest.raises(ValueError, match="Got `2` values for 3 environments"):
            env.set_attr("horizon", [5, 6])
    with pytest.raises(ValueError, match="share one instance"):
        native.set_attr("horizon", [5, 6, 7])
    with pytest.raises(AttributeError, match="seeded by reset"):
        native.set_attr("np_random", np.random.default_rng(0))
    assert native.get_attr("horizon") == (40, 40, 40)


@pytest.mark.parametrize(("name", "match"), [("step", "use the vector env's own step"),
                                             ("sample_batch", "steps as one"),
                                             ("_t", "public attribute"),
                                             ("no_such_thing", "have no attribute 'no_such_thing'")])
def test_call_refuses_names_that_are_no_sub_env_attribute(name, match):
    native, sync = pair()
    with pytest.raises(AttributeError, match=match):
        native.call(name)
    with pytest.raises(AttributeError, match=match):
        native.get_attr(name)
    if name == "no_such_thing":
        with pytest.raises(AttributeError):
            sync.get_attr(name)


def test_the_api_does_not_change_the_rounds():
    native, sync = pair()
    native.get_attr("np_random")
    native.call("uniform_policy_features", n_rounds=8)
    step_both(native, sync, 10)
    rng = np.random.default_rng(1)
    actions = rng.integers(0, 4, size=3)
    for got, want in zip(native.step(actions)[:4], sync.step(actions)[:4]):
        np.testing.assert_array_equal(got, want)


def test_with_max_episode_steps_the_sub_env_spec_is_syncs_and_the_horizon_is_the_episode_length():
    native, sync = pair(max_episode_steps=7)
    assert native.get_attr("spec") == sync.get_attr("spec") and native.get_attr("spec")[0].max_episode_steps == 7
    # the documented difference: sync's sub-envs keep their horizon under a TimeLimit, the native env's is 7
    assert native.get_attr("horizon") == (7, 7, 7) and sync.get_attr("horizon") == (40, 40, 40)
    assert native.call("bandit_spec")[0].horizon == native.unwrapped.bandit_spec().horizon == 7
