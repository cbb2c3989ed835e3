"""privbandit audit: an empirical lower bound on any private agent's epsilon, and its ledger.

The leaky agents are planted here: a non-private ridge agent with the paper's spanner play that claims
joint DP, and ``elim-jdp-ucb`` whose releases carry a quarter (or 1/1000) of their noise behind the ledger's back,
planted through its oracle's public ``mechanism`` seam.
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import twin_factory, undernoised

from privbandit import cli
from privbandit.agents import AGENT_REGISTRY, UniformAgent, agent_is_private, agent_names, register_agent
from privbandit.agents.audit import (
    LEDGER_MISSING,
    MIN_PILOT_HITS,
    NO_POWER,
    POWER_FLOOR,
    Design,
    audit_agent,
    detectable_epsilon,
    draws_for,
    neighbouring_streams,
    plan_designs,
    refutation_chance,
    select_tests,
)
from privbandit.agents.elimination import JDP_UCB_FIRST_EPOCH, EliminationAgent
from privbandit.oracles.iw_jdp import IWRegressionDP
from privbandit.privacy import PrivacySpec

UCB = {"first_epoch": 1}  # a public schedule option: users 1 and 2 act on the neighbour's epoch-0 release


def quarter_noise_twin(*, epsilon, delta=1e-5):
    """elim-jdp-ucb (UCB play, first epoch 256) with its (psi, Psi) noise cut 4x behind the ledger's back."""
    return EliminationAgent(IWRegressionDP(PrivacySpec("jdp", epsilon, delta), mechanism=undernoised(4.0)),
                            play="ucb", first_epoch=JDP_UCB_FIRST_EPOCH)


class Claims(EliminationAgent):
    """An elimination agent whose privacy spec is a claim, not what its oracle gives."""

    claim: PrivacySpec

    @property
    def privacy(self):
        return self.claim


def ridge_claiming_jdp(*, epsilon, delta=1e-5):
    """Non-private ridge elimination with the paper's spanner play that claims joint DP (records nothing)."""
    agent = Claims("ridge")
    agent.claim = PrivacySpec("jdp", epsilon, delta)
    return agent


def jdp_at_one_and_a_half(*, epsilon, delta=1e-5):
    """elim-jdp built with epsilon 1.5 that claims ``epsilon``: its ledger shows the breach."""
    agent = Claims("iw-regression-dp", epsilon=1.5, delta=delta)
    agent.claim = PrivacySpec("jdp", epsilon, delta)
    return agent


class ClaimsOnly(UniformAgent):
    """Claims joint DP, records nothing (it happens not to look at the data)."""

    def __init__(self, *, epsilon, delta=1e-5):
        super().__init__()
        self._spec = PrivacySpec("jdp", epsilon, delta)

    @property
    def privacy(self):
        return self._spec


@pytest.fixture
def planted():
    """Register the planted agents for one test."""
    names = {"claims-only": ClaimsOnly, "ridge-claiming-jdp": ridge_claiming_jdp,
             "elim-jdp-ucb-quarter-noise": quarter_noise_twin, "jdp-at-1.5": jdp_at_one_and_a_half,
             **{f"{name}-thousandth-noise": twin_factory(name, 1000.0)
                for name in ("elim-jdp-ucb", "elim-glm-jdp-pooled", "elim-glm-ldp-pooled")}}
    for name, factory in names.items():
        register_agent(name, factory, private=True)
    yield names
    for name in names:
        AGENT_REGISTRY.unregister(name)


def test_neighbouring_streams_differ_in_the_target_only():
    (f, r), (f2, r2) = neighbouring_streams(5, 2, offset=0.25)
    assert np.array_equal(f, f2) and (np.flatnonzero((r != r2).any(axis=1)) == [2]).all()
    assert r[2].tolist() == [1, -1] and r2[2].tolist() == [-1, 1] and r[0].tolist() == [0.25, -0.25]


def test_designs_target_the_first_epoch_and_the_largest_one_released_in_time():
    doubling = (0, 1, 3, 7, 15, 31, 63)
    designs = plan_designs(doubling, 64, 32)
    assert [(d.target, d.release, d.horizon) for d in designs] == [(0, 1, 33), (15, 31, 63), (30, 31, 63)]
    assert designs[0].windows == ((1, 3), (1, 33)) and designs[1].windows == ((31, 63),)
    assert plan_designs((0, 256), 200, 32) == []  # the first release is outside the stream
    assert [d.target for d in plan_designs((0, 256), 512, 32)] == [0, 255]


def test_detectable_epsilon_grows_with_the_draws():
    small, large = detectable_epsilon(100, 1e-5, 0.05), detectable_epsilon(8000, 1e-5, 0.05)
    assert 3 < small < large and detectable_epsilon(1000, 0.9999, 0.05) == 0.0
    at_1000 = detectable_epsilon(1000, 1e-5, 0.05)
    assert draws_for(at_1000 - 0.1, 1e-5, 0.05) == 1000 and draws_for(at_1000 + 0.1, 1e-5, 0.05) == 2000


def test_the_pilots_keep_the_one_test_with_power():
    """Target 0's pilots see no difference between D and D' (its reward reaches no release); target 9's
    watched users take arm 1 in 12% of the runs of D' and 2% of D: the kept test is that tail, D' first."""
    blind, seen = Design(0, 10, 20, ((10, 20),)), Design(9, 10, 20, ((10, 20),))
    same = np.full((400, 1), 10.0)
    same[:20] = 0
    on_d, on_prime = np.full((400, 1), 10.0), np.full((400, 1), 10.0)
    on_d[:8], on_prime[:48] = 0, 0
    (test,) = select_tests([blind, seen], [(same, same.copy()), (on_d, on_prime)], 4000, 1.0, 0.05)
    assert test.design is seen and test.swap and not test.above and test.threshold == 1
    assert test.counts(on_d, on_prime) == (48, 8) and test.pilot_delta > 0



def test_the_refutation_chance_is_high_for_a_leak_and_nil_for_equal_laws():
    """48 of 400 pilot runs of P against 8 of Q is a leak 4000 runs see; equal counts are not; a set seen once
    in P and never in Q is uncertain (neither); equal counts give equal chances (common draws)."""
    chance = refutation_chance(np.array([48, 48, 200, 1, 48]), np.array([8, 48, 200, 0, 8]), 400, 4000, 1.0,
                               1e-5, 0.05, rng=3)
    assert chance[0] > 0.9 and chance[1] == chance[2] == 0.0 and 0.0 < chance[3] < 0.9
    assert chance[4] == chance[0] and ((chance >= 0) & (chance <= 1)).all()


def test_a_set_the_pilots_saw_too_rarely_is_not_scored():
    """Three runs of P and none of Q in a set: a chance the posterior cannot rule out, but too rare to tell
    from chance; with nothing else to test, the kept test is the set farthest below the claim."""
    design = Design(9, 10, 20, ((10, 20),))
    on_d, on_prime = np.full((400, 1), 5.0), np.full((400, 1), 5.0)
    on_d[:MIN_PILOT_HITS - 2] = 10.0  # {t >= 10}: 3 runs of D, none of D'
    (test,) = select_tests([design], [(on_d, on_prime)], 6000, 1.0, 0.05)
    assert test.pilot_chance < POWER_FLOOR and test.counts(on_d, on_prime) != (MIN_PILOT_HITS - 2, 0)
    # the set is {t < 10} on D' first: frequency ~1 on both, so its e^epsilon q - p is the largest
    assert test.pilot_p > 0.99 and test.pilot_q > 0.99


@pytest.mark.slow
def test_an_honest_audit_at_the_defaults_ends_its_final_runs_at_the_first_look():
    """No set of elim-jdp's pilots has a chance to refute: the final runs test the set farthest below the
    claim and stop at the first look, and the report says why that test was kept."""
    res = audit_agent("elim-jdp", 1.0, max_horizon=64, watch=16, pilot_draws=16)
    (test,) = res.tests
    assert not res.refuted and res.runs_made == 100 and test.pilot_chance < POWER_FLOOR
    assert any("the set farthest below the claim" in line for line in res.lines())

@pytest.mark.slow
def test_audit_passes_the_honest_agent_and_catches_its_under_noised_twin(planted):
    small = dict(agent_kwargs=UCB, max_horizon=8, watch=4, pilot_draws=16, n_draws=300)
    honest = audit_agent("elim-jdp-ucb", 1.0, **small)
    assert not honest.refuted and honest.epsilon_lower <= 1.0 and "within the claim" in honest.ledger_status
    twin = audit_agent("elim-jdp-ucb-thousandth-noise", 1.0, **small)
    assert twin.refuted and twin.epsilon_lower > 2.0
    assert "within the claim" in twin.ledger_status and twin.ledger_ok  # the ledger alone misses it


@pytest.mark.slow
@pytest.mark.parametrize("name", ["elim-glm-jdp-pooled", "elim-glm-ldp-pooled"])
def test_audit_passes_the_pooled_glm_agents_and_catches_their_under_noised_twins(name, planted):
    """The end-to-end audit on the pooled GLM agents (one-user first epoch, a public schedule option) and on their
    twins whose regression releases (joint DP: the curator's Gaussian; local DP: each user's Gaussian channel)
    carry 1/1000 of their noise behind the ledger's back."""
    small = dict(agent_kwargs={"first_epoch": 1, "growth": 2.0}, max_horizon=8, watch=4, pilot_draws=16,
                 n_draws=300)
    honest = audit_agent(name, 1.0, **small)
    assert not honest.refuted and honest.epsilon_lower <= 1.0 and honest.ledger_ok
    twin = audit_agent(f"{name}-thousandth-noise", 1.0, **small)
    assert twin.refuted and twin.epsilon_lower > 2.0 and twin.ledger_ok


@pytest.mark.slow
def test_no_release_inside_the_stream_means_no_power(capsys):
    res = audit_agent("elim-jdp-ucb", 1.0, max_horizon=100)
    assert res.designs == () and not res.refuted and NO_POWER in "\n".join(res.lines())
    assert cli.main(["audit", "--agent", "elim-jdp-ucb", "--epsilon", "1", "--horizon", "100"]) == 0
    assert NO_POWER in capsys.readouterr().out


def test_a_missing_ledger_exits_with_its_own_code(planted, capsys):
    res = audit_agent("claims-only", 1.0, max_horizon=16)
    assert res.ledger_epsilon is None and res.ledger_status == LEDGER_MISSING and not res.ledger_ok
    assert cli.main(["audit", "--agent", "claims-only", "--epsilon", "1", "--horizon", "16"]) == cli.EXIT_LEDGER == 4
    out = capsys.readouterr().out
    assert NO_POWER in out and LEDGER_MISSING in out


@pytest.mark.slow
def test_a_ledger_above_the_claim_exits_with_its_own_code(planted, capsys):
    code = cli.main(["audit", "--agent", "jdp-at-1.5", "--epsilon", "1", "--horizon", "8", "--jobs", "1",
                     "--draws", "300", "--pilot-draws", "16"])
    out = capsys.readouterr().out
    assert "ABOVE the claim 1" in out and "verdict: not refuted" in out and code == cli.EXIT_LEDGER
    assert "4 audit: ledger missing or above the claim" in cli.build_parser().format_help()


@pytest.mark.slow
def test_audit_command_prints_the_bound_and_exits_1_when_refuted(planted, capsys):
    # --jobs 1: the planted agent is registered in this process, which worker processes would not see
    code = cli.main(["audit", "--agent", "elim-jdp-ucb-thousandth-noise", "--epsilon", "1",
                     "--agent-kwargs", '{"first_epoch": 1}', "--jobs", "1", "--horizon", "8", "--draws", "300",
                     "--pilot-draws", "16"])
    out = capsys.readouterr().out
    assert code == 1 and "REFUTED" in out and "empirical lower bound on epsilon" in out and "detectable" in out
    for args, message in ((["--agent", "uniform", "--epsilon", "1"], "non-private"),
                          (["--agent", "elim-jdp", "--epsilon", "1", "--agent-kwargs", "[1]"], "JSON object")):
        with pytest.raises(SystemExit) as exc:
            cli.main(["audit", *args])
        err = capsys.readouterr().err.strip().splitlines()
        assert exc.value.code == 2 and len(err) == 1 and message in err[0]


@pytest.mark.slow
def test_a_non_private_ridge_agent_with_spanner_play_is_refuted(planted, capsys):
    """At the default horizon, with fewer final and pilot runs than the default: the ridge agent is
    deterministic, so every run of a stream is the same run; the test is all or nothing, 300 runs refute up to
    epsilon ~5, and 16 pilot runs per step find the same offset and test as 64."""
    code = cli.main(["audit", "--agent", "ridge-claiming-jdp", "--epsilon", "1", "--draws", "300",
                     "--pilot-draws", "16"])
    out = capsys.readouterr().out
    assert code == 1 and "REFUTED" in out and LEDGER_MISSING in out


@pytest.mark.slow
def test_elim_jdp_ucb_with_a_quarter_of_its_noise_is_refuted_at_the_default_settings(planted, capsys):
    """The pair of streams reaches ~0.7 of the release's sensitivity, so the twin's privacy loss on it is a
    Gaussian shift of ~0.7 noise sds: delta(1) ~ 0.04. The pilots find that only the last user of the first
    epoch has power (the first half of IW-Regression-DP's epoch learns W from features only: its rewards
    reach no release), and the default 6000 runs of that one test see it. The honest agent on the same design
    (its target only, 1000 runs: a false refutation is no likelier with fewer runs, and a design that refuted
    every agent would refute it too) is not refuted."""
    code = cli.main(["audit", "--agent", "elim-jdp-ucb-quarter-noise", "--epsilon", "1"])
    out = capsys.readouterr().out
    target = JDP_UCB_FIRST_EPOCH - 1
    assert code == 1 and "REFUTED" in out and f"tested (chosen by independent pilot runs): target {target}" in out
    assert "within the claim 1" in out  # the ledger alone misses it
    honest = audit_agent("elim-jdp-ucb", 1.0, n_draws=1000, targets=(target,))
    assert [t.design.target for t in honest.tests] == [target] and not honest.refuted and honest.ledger_ok
    assert "verdict: not refuted (a lower bound, never a proof of privacy)" in honest.lines()


@pytest.mark.slow
@pytest.mark.parametrize("name", [n for n in agent_names() if agent_is_private(n)])
def test_no_registered_private_agent_is_refuted(name):
    """Short streams and 300 final runs keep this fast. A false refutation is no likelier with fewer runs
    (the bound holds at 95% for every draw count; fewer runs only widen the Clopper-Pearson bars), so this
    still checks each agent's schedule, pilots and chosen test against its claim; the default settings are
    checked on elim-jdp-ucb beside its quarter-noise twin. The contract stage (deterministic) passes in full."""
    res = audit_agent(name, 1.0, max_horizon=48, watch=8, pilot_draws=16, n_draws=300)
    assert not res.refuted and res.ledger_ok, res.lines()
    # the contract stage ran, changing every user of its stream, and every check passed
    assert res.contract_ok and res.contract_horizon == 32 and res.contract_users.every_user, res.lines()
    assert res.verdict.startswith("verdict: not refuted (") and "contract" not in res.verdict
