"""Local-DP audit of whole agents: per-user audits of the learner's view, and raw data never reaches aggregation.

`def:LDP`: in a sequentially interactive protocol each user's record goes through a randomizer fixed from
public parameters and the outputs already released; the mechanism is (epsilon, delta)-LDP when every such
randomizer is (epsilon, delta)-DP on one record. Two checks on every registered local-DP agent:

1. Per-user audit. The agent plays a real env (``privbandit.sim.run``); every randomizer it builds is
   recorded. For the first and the last of them, the learner's view of one user (the randomized output)
   is audited on the most distant pair among ~600 records spanning the input domain (features 0, +-B e_i
   and B times random unit vectors, rewards -1, 0, 1): 20 000 draws per record, the likelihood-ratio projection
   (the statistic's difference; the upper triangle for symmetric matrices), hockey-stick with 95%
   Clopper-Pearson bounds (:func:`privbandit.privacy.audit_delta`). The real channel must pass, and the
   same channel with sigma / 10 (an L2-ball channel: epsilon x 10, which shrinks its outputs' norm M and
   sharpens its hemisphere) must be refuted.
2. Structure. Every object the aggregation step (``_absorb``) receives must be an array that a
   randomizer returned, with one row per record fed to the agent, never sharing memory with the raw
   rows and never equal to a raw row or to the unnoised statistic. The twin whose randomizer skips the
   channel, and the twin that passes raw rows to aggregation, must be flagged.
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
from privbandit.agents import Agent, PolicyAgent, agent_is_private, agent_names, make_agent
from privbandit.agents.ldp_glm import LDPGLMSGDAgent
from privbandit.agents.linucb import LDPUCBAgent, augmented_outer
from privbandit.privacy import (
    ClippingWarning,
    LocalRandomizer,
)
from privbandit.sim.runner import run

HORIZON, ARMS = 64, 3

LOCAL_AGENTS = [n for n in agent_names() if agent_is_private(n) and make_agent(n, epsilon=EPS).privacy.model == "ldp"]


def test_the_local_agents_are_all_found():
    assert {"elim-ldp", "elim-ldp-ssp", "elim-glm-ldp", "squarecb-ldp-sgd", "ldp-ucb",
            "ldp-glm-sgd"} <= set(LOCAL_AGENTS)


# -- recording what the agent's randomizers return and what aggregation receives ----------------------

@dataclass
class Log:
    randomizers: list = None
    outputs: list = None        # (array returned by a randomizer, unnoised statistic, raw x, raw y)
    absorbed: list = None       # objects aggregation received

    def __post_init__(self):
        self.randomizers, self.outputs, self.absorbed = [], [], []


def recording(r: LocalRandomizer, log: Log, leak: bool = False) -> LocalRandomizer:
    """A randomizer that behaves like ``r`` and logs its outputs (``leak``: skips the channel, a planted bug)."""

    class Recording(LocalRandomizer):
        def _privatize(self, x, y, rng):            # where every entry point ends, on clipped rows
            stat = np.asarray(self.statistic(x, y), dtype=float)
            out = stat.copy() if leak else super()._privatize(x, y, rng)
            log.outputs.append((out, stat, x.copy(), y.copy()))
            return out

    rec = Recording(r.statistic, r.radius, r.channel, r.feature_bound)
    log.randomizers.append(rec)
    return rec


def instrument(agent: Agent, log: Log, leak: bool = False, raw_bypass: bool = False) -> Agent:
    """Patch an agent instance (before ``run`` resets it) so every absorb is logged, and every randomizer of an agent
    without an oracle (an epoch agent's are logged through its oracle's seam: :func:`play_instrumented`)."""
    if isinstance(agent, PolicyAgent):     # its randomizers are recorded through its oracle's mechanism seam
        start_fit = agent._start_fit

        def patched_start():
            start_fit()
            fit = agent.fit
            inner_a = fit._absorb

            def absorb(stage, outputs):
                log.absorbed.append(outputs)
                return inner_a(stage, outputs)

            fit._absorb = absorb
            if raw_bypass:  # the structural violation: raw rows reach aggregation (next to the real outputs)
                add_rows = fit._add_rows

                def leaky_add_rows(stage, start, x, y):
                    log.absorbed.append(x)
                    add_rows(stage, start, x, y)

                fit._add_rows = leaky_add_rows

        agent._start_fit = patched_start
    elif isinstance(agent, LDPUCBAgent):
        reset = agent._reset

        def patched_reset():
            reset()
            agent.randomizer = recording(agent.randomizer, log, leak)

        def absorb(outputs):
            log.absorbed.append(outputs)
            return LDPUCBAgent._absorb(agent, outputs)

        agent._reset = patched_reset
        agent._absorb = absorb
        if raw_bypass:  # the unnoised v v^T of the rows reaches aggregation next to the real outputs
            absorb_rows = agent._absorb_rows

            def leaky_absorb_rows(x, y):
                log.absorbed.append(augmented_outer(x, y))
                absorb_rows(x, y)

            agent._absorb_rows = leaky_absorb_rows
    elif isinstance(agent, LDPGLMSGDAgent):     # a new randomizer per batch (its statistic reads the iterate)
        make_randomizer = agent._randomizer
        agent._randomizer = lambda: recording(make_randomizer(), log, leak)

        def absorb(outputs):
            log.absorbed.append(outputs)
            return LDPGLMSGDAgent._absorb(agent, outputs)

        agent._absorb = absorb
        if raw_bypass:  # the raw rows reach aggregation next to the real outputs
            observe = agent._observe

            def leaky_observe(x, y):
                log.absorbed.append(x)
                observe(x, y)

            agent._observe = leaky_observe
    else:  # pragma: no cover - a new local agent needs its hook here
        raise TypeError(f"no instrumentation for {type(agent).__name__}")
    return agent


def play_instrumented(name: str, seed: int = 0, leak: bool = False, raw_bypass: bool = False) -> Log:
    log = Log()
    agent = make_agent(name, epsilon=EPS, delta=DELTA)
    if isinstance(agent, PolicyAgent):
        agent = planted_twin(name, lambda r: recording(r, log, leak), epsilon=EPS, delta=DELTA)
    agent = instrument(agent, log, leak=leak, raw_bypass=raw_bypass)
    env = gym.make("PrivGLMCB-v0" if "glm" in name else "PrivLinCB-v0", dim=DIM, n_arms=ARMS, horizon=HORIZON,
                   family="heavy-tailed")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ClippingWarning)
        run(agent, env, seed=seed)
    return log


def structural_problems(log: Log) -> list[str]:
    """Everything aggregation received that is not a randomized output (see the module docstring)."""
    problems = []
    returned = {id(out): (out, stat, x, y) for out, stat, x, y in log.outputs}
    for i, obj in enumerate(log.absorbed):
        if not isinstance(obj, np.ndarray):
            problems.append(f"absorb {i}: a {type(obj).__name__}, not an array of outputs")
            continue
        if id(obj) not in returned:
            problems.append(f"absorb {i}: not an array a randomizer returned")
            continue
        out, stat, x, _y = returned[id(obj)]
        flat = out.reshape(out.shape[0], -1)
        if out.shape[0] != x.shape[0]:
            problems.append(f"absorb {i}: {out.shape[0]} outputs for {x.shape[0]} records")
        if np.any(np.all(np.abs(flat - stat.reshape(stat.shape[0], -1)) <= 1e-12, axis=1)):
            problems.append(f"absorb {i}: the unnoised statistic")
        if flat.shape[1] == x.shape[1] and np.any(np.all(np.abs(flat - x) <= 1e-12, axis=1)):
            problems.append(f"absorb {i}: raw rows")
    return problems


# -- 2. structure --------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", LOCAL_AGENTS)
def test_aggregation_receives_only_randomized_outputs(name):
    log = play_instrumented(name)
    assert log.absorbed and log.randomizers
    assert structural_problems(log) == []
    assert sum(o[0].shape[0] for o in log.outputs) == HORIZON  # every user went through a randomizer once


@pytest.mark.parametrize("name", LOCAL_AGENTS)
def test_a_bypassed_randomizer_is_flagged(name):
    problems = structural_problems(play_instrumented(name, leak=True))
    assert any("unnoised statistic" in p for p in problems), problems


@pytest.mark.parametrize("name", LOCAL_AGENTS)
def test_raw_rows_passed_to_aggregation_are_flagged(name):
    problems = structural_problems(play_instrumented(name, raw_bypass=True))
    assert any("not an array a randomizer returned" in p for p in problems), problems


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
