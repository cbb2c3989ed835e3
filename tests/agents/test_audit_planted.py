"""Leaky agents written as a user writes one from the tutorial (docs/tutorials/own_agent.md): each claims joint DP,
each acts on data it did not release, and each must be refuted by ``privbandit audit``.

- LEAKY acts every round on a running sum of the raw x y it is given;
- SNEAKY lets user 0's raw reward sign fix the arm of every later user (on the audit's own neighbouring
  streams that leak is invisible: user 0's random arm masks the sign, which only the contract's replay sees);
- EPOCH-LEAK plays, each epoch, one bit of the previous epoch's raw rewards;
- MIDDLE-USER lets the raw reward sign of user 5, inside its first epoch of 8 users, fix every later arm.

Each is written with the public :class:`~privbandit.agents.PolicyAgent` interface only (``policy``, ``combine``
and the public ``reset``, ``update`` and ``act``): the first three through ``GreedyIW``, the tutorial's agent.
"""

from __future__ import annotations

import numbers

import numpy as np
import pytest

from privbandit import cli
from privbandit._validation import Interval
from privbandit.agents import PolicyAgent
from privbandit.agents.audit import CONTRACT_HORIZON, CONTRACT_NOT_PRIVACY, ContractUsers, audit_agent, plan_designs
from privbandit.oracles import make_oracle

SMALL = ["--horizon", "32", "--draws", "100", "--pilot-draws", "16", "--jobs", "1", "--no-progress"]
"""Audit sizes that keep a planted agent's audit to seconds (the contract stage runs in full), in this process,
without progress bars."""


class GreedyIW(PolicyAgent):
    """The tutorial's agent: greedy play on the latest IW-Regression-DP estimate, exploring uniformly with
    probability ``explore``."""

    name = "greedy-iw"
    default_oracle = "iw-regression-dp"
    explore = 0.1
    parameter_constraints = {"explore": [Interval(numbers.Real, 0.0, 1.0, closed="both")]}

    def greedy(self, features, estimate):
        """The arm of each round when it does not explore (None: play uniformly)."""
        return np.argmax(estimate.mean(features), axis=1)

    def policy(self, features, estimate):
        m, k = features.shape[:2]
        greedy = self.greedy(features, estimate)
        if greedy is None:
            return np.full((m, k), 1.0 / k)
        p = np.full((m, k), self.explore / k)
        p[np.arange(m), greedy] += 1.0 - self.explore
        return p


class Leaky(GreedyIW):
    """LEAKY: greedy every round on the running sum of the raw x y (updated with every row it is given)."""

    def reset(self, spec, rng=None):
        self.raw = np.zeros(spec.dim)
        return super().reset(spec, rng)

    def update(self, chosen_features, rewards):
        super().update(chosen_features, rewards)
        self.raw = self.raw + np.atleast_2d(chosen_features).T @ np.atleast_1d(rewards)     # raw, unreleased

    def greedy(self, features, estimate):
        return None if not self.raw.any() else np.argmax(features @ self.raw, axis=1)


class Sneaky(GreedyIW):
    """SNEAKY: the sign of user 0's raw reward fixes the arm of every later user (arm 0 or the last arm)."""

    def reset(self, spec, rng=None):
        self.sign = None
        return super().reset(spec, rng)

    def update(self, chosen_features, rewards):
        first = self.t == 0
        super().update(chosen_features, rewards)
        if first:
            self.sign = bool(np.atleast_1d(rewards)[0] > 0)                                   # raw, unreleased

    def greedy(self, features, estimate):
        if self.sign is None:
            return None
        return np.full(features.shape[0], 0 if self.sign else features.shape[1] - 1)


class EpochLeak(GreedyIW):
    """EPOCH-LEAK: one bit per epoch from the raw rewards: greedy on the release if the last epoch's raw reward sum
    was positive, else the release's worst arm."""

    def reset(self, spec, rng=None):
        self.raw_sum, self.bit = 0.0, True
        return super().reset(spec, rng)

    def update(self, chosen_features, rewards):
        self.raw_sum += float(np.sum(rewards))        # raw, unreleased (before the epoch's release is combined)
        super().update(chosen_features, rewards)

    def combine(self, estimates):
        if estimates:                                 # after each release
            self.bit, self.raw_sum = self.raw_sum > 0, 0.0
        return super().combine(estimates)

    def greedy(self, features, estimate):
        means = estimate.mean(features)
        return np.argmax(means, axis=1) if self.bit else np.argmin(means, axis=1)


def _factory(cls):
    def make(*, epsilon: float, delta: float = 1e-5, **kwargs):
        return cls(make_oracle("iw-regression-dp", epsilon=epsilon, delta=delta), **kwargs)

    return make


make_leaky, make_sneaky, make_epoch_leak = _factory(Leaky), _factory(Sneaky), _factory(EpochLeak)


PLANTED = {
    "make_leaky": ("check_actions_depend_only_on_releases", "acts on data it did not release"),
    "make_sneaky": ("check_releases_within_sensitivity", "times the declared sensitivity"),
    "make_epoch_leak": ("check_actions_depend_only_on_releases", "acts on data it did not release"),
}
"""Each planted agent's factory, the contract check that refutes it and words of that check's message."""


@pytest.mark.slow
@pytest.mark.parametrize("factory", sorted(PLANTED))
def test_each_planted_agent_is_refuted_by_the_audit_command_naming_its_leak(factory, capsys):
    """The contract stage refutes each one with the check's own message; the exit code is 1 whatever the
    empirical bound says (SNEAKY's is 0: its leak hides behind user 0's random arm on the audit's streams), and
    the ledger line says that it is the agent's own account and within the claim."""
    check, words = PLANTED[factory]
    code = cli.main(["audit", "--agent", f"{__name__}:{factory}", "--epsilon", "1", *SMALL])
    out = capsys.readouterr().out
    refuted = [line for line in out.splitlines() if line.startswith("REFUTED by the contract: ")]
    assert code == 1, out
    assert any(check in line and words in line for line in refuted), out
    (verdict,) = [line for line in out.splitlines() if line.startswith("verdict: ")]
    assert verdict.startswith("verdict: REFUTED: the agent leaks more than it claims (the contract's "), out
    assert f"the contract's {check}" in verdict, out
    assert "the agent's own ledger says: worst user's epsilon 1 at delta=1e-05, within the claim 1" in out
    assert "the verdict does not rest on it" in out


@pytest.mark.slow
def test_sneaky_is_refuted_by_the_contract_not_by_the_empirical_bound():
    """The audit's neighbouring streams give the target the rewards (1, -1) and (-1, 1): the sign SNEAKY reads
    depends on user 0's random arm as much as on the stream, so only the contract's replay sees the leak."""
    res = audit_agent(f"{__name__}:make_sneaky", 1.0, max_horizon=32, n_draws=100, pilot_draws=16)
    assert res.refuted and res.refuted_by_contract and not res.refuted_empirically and res.ledger_ok
    assert {f.check for f in res.contract} == {"check_releases_within_sensitivity",
                                               "check_actions_depend_only_on_releases"}
    assert all(f.privacy and f.line.startswith("REFUTED by the contract: " + f.check) for f in res.contract)


@pytest.mark.slow
def test_a_contract_failure_that_is_not_about_privacy_says_so_and_exits_5(capsys):
    """LEAKY also breaks the step loop (it acts on rows the batch path has not seen yet); a variant that keeps
    the data flow private but draws its exploration uniforms differently on the two paths fails that check
    alone: reported as a contract failure, not a privacy finding, with exit code 5."""
    code = cli.main(["audit", "--agent", f"{__name__}:make_two_rules", "--epsilon", "1", *SMALL])
    out = capsys.readouterr().out
    assert code == cli.EXIT_CONTRACT == 5, out
    assert f"{CONTRACT_NOT_PRIVACY}: check_step_loop_equals_batch_path: " in out
    assert "REFUTED" not in out
    assert f"verdict: not refuted (a lower bound, never a proof of privacy); but {CONTRACT_NOT_PRIVACY}: " in out
    assert "5 audit: contract failure, not a privacy finding" in " ".join(cli.build_parser().format_help().split())


class TwoRules(GreedyIW):
    """Private data flow, but the step loop draws two uniforms a round (and plays on the second), the batch path one."""

    def act(self, features):
        super().act(features)
        return super().act(features)


make_two_rules = _factory(TwoRules)


class Stalled(GreedyIW):
    """Private, but its policy never ends: ``rounds_until_update()`` is 0 before the horizon."""

    def rounds_until_update(self) -> int:
        return 0


make_stalled = _factory(Stalled)


def test_an_agent_whose_policy_never_ends_is_a_contract_failure_not_an_endless_audit(capsys):
    """The audit plays the agent's blocks to find its schedule: a block of 0 rounds would never reach the horizon.
    It stops with the shapes check's message, a contract failure (exit 5) in one line."""
    code = cli.main(["audit", "--agent", f"{__name__}:make_stalled", "--epsilon", "1", *SMALL])
    captured = capsys.readouterr()
    assert code == cli.EXIT_CONTRACT, captured
    assert captured.err.startswith(f"privbandit audit: {CONTRACT_NOT_PRIVACY}: check_act_and_update_shapes: ")
    assert "rounds_until_update() at round 0 of" in captured.err and "got 0" in captured.err
    assert len(captured.err.strip().splitlines()) == 1 and captured.out == ""


class MiddleUser(PolicyAgent):
    """MIDDLE-USER, written with the public PolicyAgent interface as the tutorial's user writes one: greedy on the
    release, except that the raw reward sign of user :data:`KEY_USER` (in the middle of its first epoch of 8 users,
    neither the epoch's first nor its last) fixes every later arm: arm 0 if positive, else the last arm."""

    default_oracle = "iw-regression-dp"

    def update(self, chosen_features, rewards):
        y = np.atleast_1d(rewards)
        if self.t == 0:
            self.sign = None
        if self.t <= KEY_USER < self.t + y.shape[0]:
            self.sign = bool(y[KEY_USER - self.t] > 0)          # raw, unreleased
        super().update(chosen_features, rewards)

    def policy(self, features, estimate):
        m, k = features.shape[:2]
        arm = np.argmax(estimate.mean(features), axis=1) if self.sign is None else np.full(m, 0 if self.sign else k - 1)
        return np.eye(k)[arm]


KEY_USER = 5
"""The user whose raw reward sign MIDDLE-USER leaks (its first epoch is users 0 .. 7)."""


def make_middle_user(*, epsilon: float, delta: float = 1e-5, **kwargs):
    return MiddleUser(epsilon=epsilon, delta=delta, first_epoch=8, **kwargs)


def test_a_leak_keyed_to_a_user_in_the_middle_of_the_first_epoch_fails_check_agent():
    """Until now the privacy checks changed users 0 and T // 3: MIDDLE-USER passed check_agent. Changing every user
    of the stream catches it in both privacy checks (its later arms follow user 5's sign, and so do the rows its
    later fits are given); changing every other user finds nothing."""
    from privbandit.agents import check_agent
    from privbandit.agents.checks import PRIVACY_HORIZON, check_actions_depend_only_on_releases
    from privbandit.oracles import ContractError

    build = lambda: make_middle_user(epsilon=1.0)  # noqa: E731
    with pytest.raises(ContractError, match="changing user 5 moved release") as err:
        check_agent(build)
    assert err.value.check == "check_releases_within_sensitivity"
    with pytest.raises(ContractError, match="changing only user 5's data changed user 8's arm"):
        check_actions_depend_only_on_releases(build)
    check_actions_depend_only_on_releases(build, users=[u for u in range(PRIVACY_HORIZON) if u != KEY_USER])


@pytest.mark.slow
def test_a_leak_keyed_to_a_user_in_the_middle_of_the_first_epoch_is_refuted_by_the_contract_stage():
    """Until now the audit's contract stage changed about nine users at epoch boundaries (and one random one):
    MIDDLE-USER was "not refuted". Now both privacy checks refute it; the empirical stage does not target user 5."""
    res = audit_agent(f"{__name__}:make_middle_user", 1.0, max_horizon=32, n_draws=100, pilot_draws=16)
    assert res.refuted_by_contract and res.refuted and res.ledger_ok, res.lines()
    assert {f.check for f in res.contract} == {"check_releases_within_sensitivity",
                                               "check_actions_depend_only_on_releases"}
    assert all("user 5" in f.message for f in res.contract)
    assert KEY_USER not in {d.target for d in res.designs}
    assert "users changed one at a time: every user 0..31 of a 32-round stream" in res.lines()[1]


@pytest.mark.slow
def test_the_contract_stage_changes_every_user_of_its_stream_and_says_so():
    """The stream is min(max_horizon, CONTRACT_HORIZON) rounds and every user of it is changed; the report names
    the users as a range, not a list."""
    res = audit_agent("elim-jdp", 1.0, max_horizon=40, n_draws=100, pilot_draws=16)
    assert res.contract_horizon == CONTRACT_HORIZON == 32 and res.contract_ok, res.lines()
    assert res.contract_users == ContractUsers(32, tuple(range(32))) and res.contract_users.every_user
    line = res.contract_lines()[0]
    assert line.endswith("users changed one at a time: every user 0..31 of a 32-round stream): passed"), line
    assert ContractUsers(64, (0, 3, 9)).description == "3 of the 64 users of the stream (0, 3, 9)"


def test_the_empirical_targets_include_a_random_user_released_in_time():
    designs = plan_designs((0, 1, 3, 7, 15, 31, 63), 64, 32, rng=7)
    roles = {d.target: d.role for d in designs}
    assert roles[0] == "first user" and roles[15] == "first user of epoch 4" and roles[30] == "last user of epoch 4"
    (random,) = [u for u, role in roles.items() if role == "random user"]
    assert random < 31 and random not in (0, 15, 30)


def test_the_privacy_checks_change_the_users_they_are_given():
    """LEAKY's running sum carries user 5's raw row to every later round: changing user 5 alone changes a later
    arm, which the check names; a user outside the stream, or no user, is refused with the argument's name."""
    from privbandit.agents.checks import PRIVACY_CHECKS, check_actions_depend_only_on_releases
    from privbandit.oracles import ContractError

    assert check_actions_depend_only_on_releases in PRIVACY_CHECKS
    with pytest.raises(ContractError, match=r"changing only user 5's data changed user ([6-9]|[1-5]\d|6[0-3])'s arm"):
        check_actions_depend_only_on_releases(lambda: make_leaky(epsilon=1.0), horizon=64, users=[5])
    with pytest.raises(ValueError, match=r"user must be an integer in \[0, 63\], got 64"):
        check_actions_depend_only_on_releases(lambda: make_leaky(epsilon=1.0), horizon=64, users=[64])
    with pytest.raises(ValueError, match="users must name at least one user"):
        check_actions_depend_only_on_releases(lambda: make_leaky(epsilon=1.0), horizon=64, users=[])
