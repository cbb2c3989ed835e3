"""The public contract checkers: every registered oracle and agent passes each check, and planted bugs fail them.

The names come from the registries (``oracle_names()``, ``agent_names()``), never from a hand list, and a
name that fails to build fails here (nothing is dropped). Each (name, check) pair is one test, as sklearn's
``parametrize_with_checks`` does. Every planted bug must fail with a :class:`ContractError` naming the
check meant to catch it, so every check is shown to have power.
"""

from __future__ import annotations

import copy
import dataclasses

import numpy as np
import pytest

import privbandit  # noqa: F401  (registers everything)
from privbandit.agents import (
    AGENT_CHECKS,
    BanditSpec,
    EliminationAgent,
    LinUCBAgent,
    PolicyAgent,
    SSLinUCBAgent,
    UniformAgent,
    agent_is_private,
    agent_names,
    check_agent,
    make_agent,
)
from privbandit.agents.checks import PRIVACY_CHECKS, PRIVACY_HORIZON, play_batch, play_loop, synthetic_stream
from privbandit.constraints import Options
from privbandit.oracles import (
    ORACLE_CHECKS,
    SSP,
    ContractError,
    Estimate,
    Ridge,
    check_oracle,
    make_oracle,
    oracle_class,
    oracle_names,
)
from privbandit.oracles.checks import synthetic_rows
from privbandit.oracles.ridge import RidgeFit
from privbandit.oracles.ssp import SSPFit
from privbandit.privacy import (
    GaussianMechanism,
    L2BallChannel,
    LaplaceMechanism,
    LocalRandomizer,
    PrivacySpec,
)
from privbandit.privacy.replay import ReleaseTape, ReplayMismatch, sensitivity_ratio

ONE_DIMENSIONAL = {"ldp-1d"}     # oracles whose fits take d = 1 only (the others are checked at d = 3)
HORIZON = 128


def oracle_dim(name: str) -> int:
    return 1 if name in ONE_DIMENSIONAL else 3


def registered_oracle(name: str):
    """``make_oracle(name)`` with a budget if it is private and a public sample if it takes one."""
    cls = oracle_class(name)
    kwargs = {}
    fields = {f.name for f in dataclasses.fields(cls)}
    for key in ("features", "public_features"):
        if key in fields:
            kwargs[key] = synthetic_rows(oracle_dim(name), 400, 99)[0]
    if cls.privacy_models != ("none",):
        kwargs.update(epsilon=1.0, delta=1e-5)
    return make_oracle(name, **kwargs)


def agent_factory(name: str):
    budget = dict(epsilon=1.0, delta=1e-5) if agent_is_private(name) else {}
    return lambda: make_agent(name, **budget)


def _ids(value):
    return getattr(value, "__name__", str(value))


# --- every registered name passes every check ------------------------------------------------------
@pytest.mark.parametrize("check", ORACLE_CHECKS, ids=_ids)
@pytest.mark.parametrize("name", oracle_names())
def test_every_registered_oracle_passes(name, check):
    check(registered_oracle(name), dim=oracle_dim(name), n_rows=96, rng=0)


@pytest.mark.parametrize("check", AGENT_CHECKS, ids=_ids)
@pytest.mark.parametrize("name", agent_names())
def test_every_registered_agent_passes(name, check):
    """At check_agent's stream lengths: the privacy checks change every user of a PRIVACY_HORIZON-round stream."""
    check(agent_factory(name), horizon=PRIVACY_HORIZON if check in PRIVACY_CHECKS else HORIZON, rng=0)


def test_the_registry_lists_are_whole():
    # the parametrized lists above are the registries themselves: a new oracle or agent is checked at once
    assert len(oracle_names()) >= 13 and len(agent_names()) >= 19
    assert {"ridge", "iw-regression-dp", "iw-regression-ldp"} <= set(oracle_names())
    assert {"uniform", "elim-jdp", "elim-ldp", "linucb-jdp"} <= set(agent_names())


def test_check_oracle_and_check_agent_run_every_check(monkeypatch):
    ran = []
    import privbandit.agents.checks as agent_checks
    import privbandit.oracles.checks as oracle_checks

    def spy(fn):
        return lambda *a, **k: ran.append(fn.__name__)

    for module, table in ((oracle_checks, "ORACLE_CHECKS"), (agent_checks, "AGENT_CHECKS")):
        spies = tuple(spy(fn) for fn in getattr(module, table))
        monkeypatch.setattr(module, table, spies)
    check_oracle(Ridge())
    check_agent(UniformAgent())
    assert ran == [f.__name__ for f in ORACLE_CHECKS + AGENT_CHECKS]


# --- planted oracle bugs -----------------------------------------------------------------------------
class LastChunkFit(RidgeFit):
    def _add_rows(self, stage, start, x, y):      # forgets every earlier chunk
        self.gram, self.xty = x.T @ x, x.T @ y


class WrongDimFit(RidgeFit):
    def _estimate(self):                          # one coordinate too many
        d = self.dim + 1
        return Estimate(np.zeros(d), self.link, np.eye(d), 1.0)


class NanTolerantFit(RidgeFit):
    def add(self, features, rewards):             # "cleans" bad rows instead of refusing them
        super().add(np.nan_to_num(np.asarray(features, dtype=float)), np.nan_to_num(rewards, posinf=1.0))


class Unseeded:
    """Noise from a fresh generator, not the fit's rng (planted through the oracle's ``mechanism`` seam)."""

    def __init__(self, mechanism):
        self.mechanism = mechanism

    def release(self, values, rng=None):
        return self.mechanism.release(values, np.random.default_rng())

    def ledger_entry(self):
        return self.mechanism.ledger_entry()


class Unrecorded(Unseeded):
    """Draws the fit's noise but tells the ledger the release cost nothing."""

    def release(self, values, rng=None):
        return self.mechanism.release(values, rng)

    def ledger_entry(self):
        return dataclasses.replace(self.mechanism.ledger_entry(), family="pure", parameter=0.0)


def half_sensitivity(mechanism):
    """The noise calibrated to half the statistic's sensitivity (the same multiplier: the ledger is happy)."""
    return dataclasses.replace(mechanism, sensitivity=mechanism.sensitivity / 2, sigma=mechanism.sigma / 2)


class RawInfoFit(SSPFit):
    def _add_rows(self, stage, start, x, y):
        super()._add_rows(stage, start, x, y)
        self.raw_reward = getattr(self, "raw_reward", 0.0) + float(y.sum())

    def _estimate(self):                          # a diagnostic of raw rows in a private Estimate
        est = super()._estimate()
        return dataclasses.replace(est, info={**est.info, "mean_reward": self.raw_reward / self.n_seen})


def _planted(base, fit_class):
    return dataclasses.dataclass(frozen=True)(type(f"Planted{fit_class.__name__}", (base,), {"fit_class": fit_class}))


# a broken fit (a subclass of the oracle's fit, as an oracle author writes one) or, for the noise, a mechanism
# handed to the oracle through its public ``mechanism`` seam
PLANTED_ORACLES = [
    (Ridge, WrongDimFit, "check_fit_shapes"),
    (Ridge, LastChunkFit, "check_streaming_equals_one_shot"),
    (SSP, Unseeded, "check_deterministic_for_a_seed"),
    (SSP, Unrecorded, "check_ledger_within_budget"),
    (SSP, half_sensitivity, "check_releases_within_sensitivity"),
    (SSP, RawInfoFit, "check_estimate_holds_only_released_values"),
    (Ridge, NanTolerantFit, "check_bad_input_errors"),
]


@pytest.mark.parametrize("base, bug, check", PLANTED_ORACLES, ids=[c for _, _, c in PLANTED_ORACLES])
def test_a_broken_oracle_fails_the_check_that_names_its_bug(base, bug, check):
    honest = base() if base is Ridge else base(privacy=PrivacySpec("jdp", 1.0, 1e-5))
    check_oracle(honest)
    if isinstance(bug, type) and issubclass(bug, RidgeFit | SSPFit):
        broken = _planted(base, bug)(**{f.name: getattr(honest, f.name) for f in dataclasses.fields(honest)})
    else:
        broken = dataclasses.replace(honest, mechanism=bug)
    with pytest.raises(ContractError) as err:
        check_oracle(broken)
    assert err.value.check == check and str(err.value).startswith(f"{check}: ")
    assert isinstance(err.value, AssertionError) and not isinstance(err.value, ValueError)


def test_check_oracle_refuses_bad_arguments():
    with pytest.raises(TypeError, match="Oracle"):
        check_oracle("ridge")
    with pytest.raises(ValueError, match="dim"):
        check_oracle(Ridge(), dim=0)
    with pytest.raises(ValueError, match="n_rows"):
        check_oracle(Ridge(), n_rows=5)
    with pytest.raises(ContractError, match="check_fit_shapes: .*dim="):
        check_oracle(make_oracle("ldp-1d", epsilon=1.0))      # a 1-d oracle at the default d = 3


# --- planted agent bugs ------------------------------------------------------------------------------
# written on the public methods (act, act_batch, update), as a PolicyAgent of the tutorial (policy, combine), or, for
# the noise, through the agent's public ``mechanism`` seam
class FirstArm(UniformAgent):
    """Says uniform (its action_probabilities), always plays arm 0."""

    def act(self, features):
        super().act(features)
        return 0

    def act_batch(self, features):
        super().act_batch(features)
        return np.zeros(np.shape(features)[0], dtype=np.int64)


class ExtraDrawPerStep(UniformAgent):
    def act(self, features):                      # the step loop draws one uniform more than the batch path
        super().act(features)
        return super().act(features)


class StepLoopOtherArm(LinUCBAgent):
    def act(self, features):                      # the step loop plays the next arm, the batch path the best
        return (super().act(features) + 1) % np.shape(features)[0]


class UncheckedInput(UniformAgent):
    def act(self, features):                      # plays arm 0 on input it should refuse
        try:
            return super().act(features)
        except (ValueError, TypeError):
            return 0


class CentralLDP(PolicyAgent):
    """Claims local DP, releases centrally (a joint-DP oracle's calibrated releases); plays uniformly."""

    default_oracle = "iw-regression-dp"
    claim = "ldp"
    parameter_constraints = {"claim": [Options(("ldp", "jdp"))]}

    @property
    def privacy(self):
        return dataclasses.replace(super().privacy, model=self.claim)

    def policy(self, features, estimate):
        return np.full(features.shape[:2], 1.0 / features.shape[1])


class Greedy(PolicyAgent):
    """Greedy play on the latest IW-Regression-DP release (the tutorial's agent without exploration)."""

    default_oracle = "iw-regression-dp"

    def policy(self, features, estimate):
        return np.eye(features.shape[1])[np.argmax(estimate.mean(features), axis=1)]


class RawRidgeRelease(Greedy):
    """Runs the private fit (so its ledger is honest) but plays greedily on a ridge fit of the raw rows so far."""

    def reset(self, spec, rng=None):
        self.raw = []
        return super().reset(spec, rng)

    def update(self, chosen_features, rewards):
        self.raw.append((np.atleast_2d(chosen_features), np.atleast_1d(rewards)))
        super().update(chosen_features, rewards)

    def raw_rows(self):
        return tuple(np.concatenate(v) for v in zip(*self.raw))

    def combine(self, estimates):
        return Ridge().fit(*self.raw_rows()) if estimates else None


class StepLoopLeak(EliminationAgent):
    """Its step loop peeks at the last raw row: after a row -B e_d / 2 it plays the next arm.

    The batch path never peeks, and on a stream without such a row the two paths agree."""

    def update(self, chosen_features, rewards):
        x = np.asarray(chosen_features)
        self.peek = x.ndim == 1 and x[-1] < 0 and not x[:-1].any()
        super().update(chosen_features, rewards)

    def act(self, features):
        arm = super().act(features)
        return (arm + 1) % len(features) if getattr(self, "peek", False) else arm


PLANTED_AGENTS = [
    (lambda: FirstArm(), "check_action_probabilities"),
    (lambda: ExtraDrawPerStep(), "check_step_loop_equals_batch_path"),
    (lambda: StepLoopOtherArm(), "check_step_loop_equals_batch_path"),
    (lambda: CentralLDP(epsilon=1.0), "check_ledger_within_budget"),
    (lambda: SSLinUCBAgent(epsilon=1.0, delta=1e-5, mechanism=half_sensitivity), "check_releases_within_sensitivity"),
    (lambda: RawRidgeRelease(epsilon=1.0, delta=1e-5), "check_actions_depend_only_on_releases"),
    (lambda: UncheckedInput(), "check_bad_input_errors"),
]


@pytest.mark.parametrize("factory, check", PLANTED_AGENTS, ids=[c for _, c in PLANTED_AGENTS])
def test_a_broken_agent_fails_the_check_that_names_its_bug(factory, check):
    with pytest.raises(ContractError) as err:
        check_agent(factory, horizon=HORIZON)
    assert err.value.check == check, str(err.value)


@pytest.mark.slow
def test_the_planted_agents_honest_twins_pass():
    check_agent(lambda: CentralLDP(epsilon=1.0, claim="jdp"), horizon=HORIZON)   # central releases are fine under JDP
    check_agent(lambda: SSLinUCBAgent(epsilon=1.0, delta=1e-5), horizon=HORIZON)
    check_agent(lambda: EliminationAgent("iw-regression-dp", epsilon=1.0, delta=1e-5, play="ucb"), horizon=HORIZON)
    check_agent(lambda: Greedy(epsilon=1.0, delta=1e-5), horizon=HORIZON)     # RawRidgeRelease on the releases


def test_check_agent_takes_an_instance_and_leaves_it_untouched():
    agent = make_agent("elim-jdp", epsilon=1.0, delta=1e-5)
    check_agent(agent, horizon=32)
    assert agent.spec is None and not agent.ledger.releases       # only copies were run
    with pytest.raises(TypeError, match="Agent"):
        check_agent(42)
    with pytest.raises(TypeError, match="factory must return"):
        check_agent(lambda: "elim-jdp", horizon=32)
    with pytest.raises(ValueError, match="horizon"):
        check_agent(UniformAgent(), horizon=4)


def test_play_loop_and_play_batch_agree_on_a_fixed_stream():
    x, r = synthetic_stream(3, 2, 50, rng=4)
    assert x.shape == (50, 3, 2) and r.shape == (50, 3) and np.all(np.linalg.norm(x, axis=2) < 1)
    assert np.all(np.abs(r) <= 1)
    loop = play_loop(make_agent("squarecb-nonprivate"), x, r, rng=2)
    played = play_batch(make_agent("squarecb-nonprivate"), x, r, rng=2, probabilities=True)
    np.testing.assert_array_equal(loop, played.actions)
    assert played.probabilities.shape == (50, 3)
    np.testing.assert_allclose(played.probabilities.sum(axis=1), 1.0)


# --- the record-and-replay tape the privacy checks stand on ------------------------------------------
class Halving(GaussianMechanism):
    """Releases through its parent with half the noise: one release for the tape, not two."""

    def release(self, values, rng=None):
        return GaussianMechanism(self.sensitivity, self.sigma / 2).release(values, rng)


def test_a_tape_records_replays_and_restores_the_mechanisms():
    mech, nested = GaussianMechanism(1.0, 1.0), Halving(1.0, 1.0)
    originals = (GaussianMechanism.__dict__["release"], Halving.__dict__["release"])
    with ReleaseTape() as tape:
        assert GaussianMechanism.__dict__["release"] is not originals[0]       # wrapped while open
        a = mech.release(np.zeros(3), rng=0)
        b = nested.release(np.ones(2), rng=1)
        local = LocalRandomizer.gaussian(lambda x, y: x, 1.0, 1.0, 1e-5)(np.eye(2) * 0.5, np.zeros(2), rng=2)
    assert (GaussianMechanism.__dict__["release"], Halving.__dict__["release"]) == originals   # restored on exit
    assert len(tape) == 3 and [type(m) for m in tape.mechanisms] == [GaussianMechanism, Halving, GaussianMechanism]
    np.testing.assert_array_equal(tape.inputs[1], np.ones(2))
    np.testing.assert_array_equal(tape.outputs[2], local)
    with ReleaseTape(replay=tape) as again:
        np.testing.assert_array_equal(mech.release(np.full(3, 5.0), rng=9), a)      # the recorded output
        np.testing.assert_array_equal(nested.release(np.zeros(2), rng=9), b)
        with pytest.raises(ReplayMismatch, match="shape"):
            mech.release(np.zeros(4))
    np.testing.assert_array_equal(again.inputs[0], np.full(3, 5.0))
    with ReleaseTape(replay=tape):
        for values in (np.zeros(3), np.zeros(2), np.zeros((2, 2))):
            mech.release(values)
        with pytest.raises(ReplayMismatch, match="no recorded counterpart"):
            mech.release(np.zeros(3))
    assert np.array_equal(mech.release(np.zeros(3), rng=0), a)       # unpatched: the mechanism's own draw
    with pytest.raises(TypeError, match="ReleaseTape"):
        ReleaseTape(replay=[a])


def test_sensitivity_ratio_in_each_mechanisms_norm():
    gauss, laplace = GaussianMechanism(2.0, 1.0), LaplaceMechanism(4.0, 1.0)
    ball = L2BallChannel(1.0, 2, radius=1.0)
    assert sensitivity_ratio(gauss, [0.0, 0.0], [1.2, 1.6]) == pytest.approx(1.0)        # L2: 2 / 2
    assert sensitivity_ratio(laplace, [0.0, 0.0], [1.0, -1.0]) == pytest.approx(0.5)     # L1: 2 / 4
    rows = np.zeros((3, 2))
    moved = rows.copy()
    moved[1] = [0.6, 0.8]
    assert sensitivity_ratio(ball, rows, moved, local=True) == pytest.approx(0.5)         # 1 / (2 r)
    moved[2] = [0.1, 0.0]
    assert sensitivity_ratio(gauss, rows, moved, local=True) == np.inf                     # two records changed
    assert sensitivity_ratio(ball, rows, rows * 0 + [2.0, 0.0], local=False) == np.inf    # outside the ball
    assert sensitivity_ratio(gauss, rows, rows[:2]) == np.inf and sensitivity_ratio(gauss, rows, rows) == 0.0


def test_the_release_replay_holds_the_step_loop_to_the_same_data_flow():
    """A leak only in the lean per-round path: the step loop equals the batch path on an ordinary stream, and
    only the neighbour's replay through the step loop (act one round at a time) sees the leak."""
    from privbandit.agents.checks import check_actions_depend_only_on_releases, check_step_loop_equals_batch_path

    def leaky():
        return StepLoopLeak("iw-regression-dp", epsilon=1.0, delta=1e-5, play="ucb")

    check_step_loop_equals_batch_path(leaky, horizon=HORIZON)
    with pytest.raises(ContractError, match="in the step loop"):
        check_actions_depend_only_on_releases(leaky)


def test_a_differing_arm_passes_only_at_a_tie_within_the_stated_tolerance():
    """The step-vs-batch check's margin: with two identical arms (an exact tie, broken by argmax towards the
    first) a step loop that took the other one is explained by a perturbation below STEP_BATCH_RTOL; an arm
    whose score is clearly lower is not, and neither is a tie only a larger perturbation would break."""
    from privbandit.agents.checks import STEP_BATCH_RTOL, _rounding_tie

    agent = LinUCBAgent().reset(BanditSpec(n_arms=4, dim=3, horizon=50), rng=0)
    rng = np.random.default_rng(3)
    for _ in range(20):
        x = rng.uniform(-0.5, 0.5, (4, 3))
        agent.update(x[0], float(x[0].sum()) / 2)
    top = rng.uniform(-0.5, 0.5, 3)
    ctx = np.stack([0.3 * top, top, top, 0.3 * top])[None]                  # arms 1 and 2 tie at the top
    assert agent.act(ctx[0]) == 1
    assert _rounding_tie(agent, ctx, 2, seed=0)
    worst = int(np.argmin(agent._scores(ctx)[0]))
    assert not _rounding_tie(agent, ctx, worst, seed=0)
    for factor in (1.0 - 1e3 * STEP_BATCH_RTOL, 1.0 + 1e3 * STEP_BATCH_RTOL):    # a margin far above it
        apart = ctx.copy()
        apart[0, 2] *= factor
        if agent._scores(apart)[0, 1] > agent._scores(apart)[0, 2]:
            break
    assert agent.act(apart[0]) == 1 and not _rounding_tie(agent, apart, 2, seed=0)


class CopyRedraws(EliminationAgent):
    """A private agent whose deep copies draw other uniforms than the agent itself would (a fresh generator)."""

    def __deepcopy__(self, memo):
        new = type(self).__new__(type(self))
        memo[id(self)] = new
        new.__dict__.update(copy.deepcopy(self.__dict__, memo))
        if new.spec is not None:                   # one uniform more than the agent: its copy plays on other draws
            new.act(np.zeros((new.spec.n_arms, new.spec.dim)))
        return new


@pytest.mark.slow
def test_every_user_is_changed_from_a_copy_of_the_run_before_it_and_a_copy_must_continue_the_run():
    """The privacy checks replay each user from a deep copy of the run before its policy block; one user's pair is
    also played whole and must agree, so an agent whose copies do not continue as itself is refused, saying why.
    Every user of the stream is changed: a leak keyed to the user in the middle of the stream is found."""
    from privbandit.agents.checks import check_actions_depend_only_on_releases, check_releases_within_sensitivity

    with pytest.raises(ContractError, match="a deep copy of the agent taken mid-run .* did not continue"):
        check_actions_depend_only_on_releases(lambda: CopyRedraws("iw-regression-dp", epsilon=1.0, delta=1e-5))
    key = PRIVACY_HORIZON // 2 + 1

    class KeyedRaw(RawRidgeRelease):
        """Plays on the release, turned around once user ``key``'s raw reward is positive."""

        def combine(self, estimates):
            est = Greedy.combine(self, estimates)
            y = self.raw_rows()[1] if self.raw else np.zeros(0)
            if est is not None and y.shape[0] > key and y[key] > 0:
                est = dataclasses.replace(est, theta=-est.theta)
            return est

    build = lambda: KeyedRaw(epsilon=1.0, delta=1e-5)  # noqa: E731
    with pytest.raises(ContractError, match=f"changing only user {key}'s data"):
        check_actions_depend_only_on_releases(build)
    others = [u for u in range(PRIVACY_HORIZON) if u != key]
    check_actions_depend_only_on_releases(build, users=others)
    check_releases_within_sensitivity(build, users=others)


def test_check_agent_plays_the_batch_paths_neighbouring_runs_once_for_both_privacy_checks(monkeypatch):
    """Both privacy checks replay the batch path's neighbouring runs of every user: inside check_agent they share
    them (played once), while each check called alone plays its own."""
    import privbandit.agents.checks as agent_checks

    played = []
    original = agent_checks.replayed_pair
    monkeypatch.setattr(agent_checks, "replayed_pair", lambda *a, **k: played.append(a[2]) or original(*a, **k))
    build = lambda: make_agent("elim-jdp", epsilon=1.0, delta=1e-5)  # noqa: E731
    check_agent(build, horizon=16)
    assert played == list(range(16)) * 2          # the batch path once, the step loop once
    played.clear()
    agent_checks.check_releases_within_sensitivity(build, horizon=16)
    agent_checks.check_actions_depend_only_on_releases(build, horizon=16)
    assert played == list(range(16)) * 3
