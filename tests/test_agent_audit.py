"""privbandit audit: an empirical lower bound on any private agent's epsilon, and its ledger."""

from __future__ import annotations

import pytest

import privbandit.oracles.iw_jdp as iw_jdp_module
from privbandit import cli
from privbandit.agents import UniformAgent
from privbandit.agents import base as agents_base
from privbandit.agents import register_agent
from privbandit.privacy import GaussianMechanism, PrivacySpec
from privbandit.sim.audit import LEDGER_MISSING, audit_agent

UCB = {"first_epoch": 1}  # a public schedule option: users 1 and 2 act on the neighbour's epoch-0 release


class UndernoisedGaussian(GaussianMechanism):
    """The planted bug: the release's noise divided by 1000 behind the ledger's back."""

    def release(self, values, rng=None):
        return GaussianMechanism(self.sensitivity, self.sigma / 1000).release(values, rng)


def test_audit_passes_the_honest_agent_and_catches_its_under_noised_twin(monkeypatch):
    honest = audit_agent("elim-jdp-ucb", 1.0, agent_kwargs=UCB)
    assert not honest.refuted and honest.epsilon_lower <= 1.0 and "within the claim" in honest.ledger_status
    monkeypatch.setattr(iw_jdp_module, "GaussianMechanism", UndernoisedGaussian)
    planted = audit_agent("elim-jdp-ucb", 1.0, agent_kwargs=UCB)
    assert planted.refuted and planted.epsilon_lower > 2.0
    assert "within the claim" in planted.ledger_status  # the ledger alone would not have caught it


class ClaimsOnly(UniformAgent):
    """Claims joint DP, records nothing (it happens not to look at the data)."""

    def __init__(self, *, epsilon, delta=1e-5):
        super().__init__()
        self._spec = PrivacySpec("jdp", epsilon, delta)

    @property
    def privacy(self):
        return self._spec


def test_an_agent_without_a_ledger_is_reported_unverified(capsys):
    register_agent("claims-only", ClaimsOnly, private=True)
    try:
        res = audit_agent("claims-only", 1.0)
        assert res.ledger_epsilon is None and res.ledger_status == LEDGER_MISSING
        assert cli.main(["audit", "--agent", "claims-only", "--epsilon", "1"]) == 0
    finally:
        agents_base.AGENT_REGISTRY.unregister("claims-only")
    out = capsys.readouterr().out
    assert "empirical lower bound on epsilon: 0 " in out and "ledger missing: privacy not verified" in out


def test_audit_command_prints_the_bound_and_exits_1_when_refuted(monkeypatch, capsys):
    monkeypatch.setattr(iw_jdp_module, "GaussianMechanism", UndernoisedGaussian)
    code = cli.main(["audit", "--agent", "elim-jdp-ucb", "--epsilon", "1", "--agent-kwargs", '{"first_epoch": 1}'])
    out = capsys.readouterr().out
    assert code == 1 and "REFUTED" in out and "empirical lower bound on epsilon" in out
    for args, message in ((["--agent", "uniform", "--epsilon", "1"], "non-private"),
                          (["--agent", "elim-jdp", "--epsilon", "1", "--agent-kwargs", "[1]"], "JSON object")):
        with pytest.raises(SystemExit) as exc:
            cli.main(["audit", *args])
        err = capsys.readouterr().err.strip().splitlines()
        assert exc.value.code == 2 and len(err) == 1 and message in err[0]
