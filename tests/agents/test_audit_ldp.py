"""Local-DP audit of whole agents: per-user audits of the learner's view, and raw data never reaches aggregation.

`def:LDP`: in a sequentially interactive protocol each user's record goes through a randomizer fixed from
public parameters and the outputs already released; the mechanism is (epsilon, delta)-LDP when every such
randomizer is (epsilon, delta)-DP on one record. Two checks on every registered local-DP agent, which see the
agent only through public seams (its randomizers are handed to the ``mechanism`` hook of its oracle, or of the
agent itself when it builds them, and recorded there):

1. Per-user audit. The agent plays a real env (``privbandit.sim.run``); every randomizer it builds is
   recorded. For the first and the last of them, the learner's view of one user (the randomized output)
   is audited on the most distant pair among ~600 records spanning the input domain (features 0, +-B e_i
   and B times random unit vectors, rewards -1, 0, 1): 20 000 draws per record, the likelihood-ratio projection
   (the statistic's difference; the upper triangle for symmetric matrices), hockey-stick with 95%
   Clopper-Pearson bounds (:func:`privbandit.privacy.audit_delta`). The real channel must pass, and the
   same channel with sigma / 10 (an L2-ball channel: epsilon x 10, which shrinks its outputs' norm M and
   sharpens its hemisphere) must be refuted.
2. Structure. Every record fed to the agent goes through one of its randomizers once, and what a randomizer
   returns is one array row per record, never equal to a raw row or to the unnoised statistic; and the agent's
   other users' actions depend on a user's row only through what the randomizers released
   (:func:`privbandit.agents.check_actions_depend_only_on_releases`: a neighbour replayed the first run's
   releases). The twin whose randomizer skips the channel (planted through the seam), and the twin written on
   the public methods that lets its users' raw rewards pick its arms beside the releases, must be flagged.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import gymnasium as gym
import numpy as np
import pytest
from agent_helpers import DELTA, DIM, EPS, PLANT, audit_user
from conftest import planted_twin

import privbandit  # noqa: F401  (registers the envs)
from privbandit.agents import ContractError, agent_is_private, agent_names, make_agent
from privbandit.agents.checks import check_actions_depend_only_on_releases
from privbandit.privacy import ClippingWarning, LocalRandomizer
from privbandit.privacy.clipping import clip_features, clip_rewards
from privbandit.sim.runner import run

HORIZON, ARMS = 64, 3

LOCAL_AGENTS = [n for n in agent_names() if agent_is_private(n) and make_agent(n, epsilon=EPS).privacy.model == "ldp"]


def test_the_local_agents_are_all_found():
    assert {"elim-ldp", "elim-ldp-ssp", "elim-glm-ldp", "squarecb-ldp-sgd", "ldp-ucb",
            "ldp-glm-sgd"} <= set(LOCAL_AGENTS)


# -- recording what the agent's randomizers are handed and return, through the mechanism seam -----------

@dataclass
class Log:
    randomizers: list = None
    outputs: list = None        # (array returned by a randomizer, unnoised statistic, raw x, raw y)

    def __post_init__(self):
        self.randomizers, self.outputs = [], []


@dataclass(frozen=True)
class Logged:
    """Randomizes as ``randomizer`` and logs each call (``leak``: returns the unnoised statistic, a planted bug)."""

    randomizer: LocalRandomizer
    log: Log
    leak: bool = False

    def __call__(self, features, rewards, rng=None):
        r = self.randomizer
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ClippingWarning)
            x, y = clip_features(np.asarray(features, dtype=float), r.feature_bound), clip_rewards(rewards)
        stat = np.asarray(r.statistic(x, y), dtype=float)
        out = stat.copy() if self.leak else r(features, rewards, rng)
        self.log.outputs.append((out, stat, x.copy(), y.copy()))
        return out

    def ledger_entry(self):
        return self.randomizer.ledger_entry()


def recording(log: Log, leak: bool = False):
    """The ``mechanism`` hook that logs every local randomizer the agent builds and hands back a :class:`Logged` one."""

    def hook(r):
        if not isinstance(r, LocalRandomizer):
            return r
        log.randomizers.append(r)
        return Logged(r, log, leak)

    return hook


def play_instrumented(name: str, seed: int = 0, leak: bool = False) -> Log:
    log = Log()
    agent = planted_twin(name, recording(log, leak), epsilon=EPS, delta=DELTA)
    env = gym.make("PrivGLMCB-v0" if "glm" in name else "PrivLinCB-v0", dim=DIM, n_arms=ARMS, horizon=HORIZON,
                   family="heavy-tailed")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ClippingWarning)
        run(agent, env, seed=seed)
    return log


def structural_problems(log: Log) -> list[str]:
    """Everything a randomizer returned that is not a randomized output (see the module docstring)."""
    problems = []
    for i, (out, stat, x, _y) in enumerate(log.outputs):
        if not isinstance(out, np.ndarray):
            problems.append(f"output {i}: a {type(out).__name__}, not an array of outputs")
            continue
        flat = out.reshape(out.shape[0], -1)
        if out.shape[0] != x.shape[0]:
            problems.append(f"output {i}: {out.shape[0]} outputs for {x.shape[0]} records")
        if np.any(np.all(np.abs(flat - stat.reshape(stat.shape[0], -1)) <= 1e-12, axis=1)):
            problems.append(f"output {i}: the unnoised statistic")
        if flat.shape[1] == x.shape[1] and np.any(np.all(np.abs(flat - x) <= 1e-12, axis=1)):
            problems.append(f"output {i}: raw rows")
    return problems


def acting_on_raw_rewards(cls: type) -> type:
    """``cls`` with a planted leak written on the public methods only: the number of positive raw rewards of its
    last update, kept beside the releases, shifts every later arm."""

    class ActingOnRawRewards(cls):
        def reset(self, spec, rng=None):
            self.raw_ = 0
            return super().reset(spec, rng)

        def update(self, chosen_features, rewards):
            super().update(chosen_features, rewards)
            self.raw_ = int(np.sum(np.asarray(rewards) > 0))

        def act(self, features):
            return (super().act(features) + self.raw_) % np.shape(features)[0]

        def act_batch(self, features):
            return (np.asarray(super().act_batch(features)) + self.raw_) % np.shape(features)[1]

    return ActingOnRawRewards


CHANGED_USERS = (0, 9, 20)
"""The users the data-flow check changes (of its 32-user stream): the first, and two inside later policies."""


# -- 2. structure --------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", LOCAL_AGENTS)
def test_every_user_goes_through_a_randomizer_once(name):
    log = play_instrumented(name)
    assert log.outputs and log.randomizers
    assert structural_problems(log) == []
    assert sum(o[0].shape[0] for o in log.outputs) == HORIZON  # every user went through a randomizer once


@pytest.mark.parametrize("name", LOCAL_AGENTS)
def test_a_bypassed_randomizer_is_flagged(name):
    problems = structural_problems(play_instrumented(name, leak=True))
    assert any("unnoised statistic" in p for p in problems), problems


@pytest.mark.parametrize("name", LOCAL_AGENTS)
def test_the_other_users_see_a_user_only_through_the_releases(name):
    check_actions_depend_only_on_releases(lambda: make_agent(name, epsilon=EPS, delta=DELTA), users=CHANGED_USERS)


@pytest.mark.parametrize("name", LOCAL_AGENTS)
def test_raw_rewards_that_reach_the_policy_are_flagged(name):
    honest = make_agent(name, epsilon=EPS, delta=DELTA)
    twin = acting_on_raw_rewards(type(honest))
    with pytest.raises(ContractError, match="acts on data it did not release"):
        check_actions_depend_only_on_releases(lambda: twin(**honest.get_params()), users=CHANGED_USERS)


# -- 1. per-user audit of the learner's view -------------------------------------------------------------

@pytest.fixture(scope="module")
def recorded_randomizers():
    return {name: play_instrumented(name, seed=3).randomizers for name in LOCAL_AGENTS}


@pytest.mark.slow
@pytest.mark.parametrize("name", LOCAL_AGENTS)
def test_each_users_view_passes_the_audit_and_a_planted_bug_is_caught(name, recorded_randomizers):
    rands = recorded_randomizers[name]
    for k, r in enumerate([rands[0], rands[-1]] if len(rands) > 1 else rands):
        res, eps_lower, reach = audit_user(r, seed=100 + k)
        bug, bug_eps, _ = audit_user(r, seed=200 + k, divide=PLANT)
        print(f"{name} randomizer {k}: pair at {reach:.2f} x sensitivity; delta_lower={res.delta_lower:.4f} "
              f"eps_lower={eps_lower:.2f} (spec {EPS}); sigma/{PLANT:g}: delta_lower={bug.delta_lower:.4f} "
              f"eps_lower={bug_eps:.2f}")
        assert not res.violates(DELTA)
        assert eps_lower <= EPS
        assert bug.violates(DELTA)
        assert bug_eps > EPS
