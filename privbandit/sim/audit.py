"""An empirical privacy audit of any agent: a lower bound on its epsilon from the other users' actions.

:func:`audit_agent` runs the end-to-end audit of the agent suite on one agent (a registered name, an
entry point or an import path ``"pkg.module:factory"``):

- two neighbouring streams that differ only in one user's data (user ``neighbour``'s reward vector is
  (+1, -1) in D and (-1, +1) in D'; the arms' features are +e_1 and -e_1; every other user's rewards
  are 0), the largest change one user's reward can make;
- ``n_draws`` independent runs of the agent on each stream; the test statistic is how many of the
  *other* users (rounds ``watch``) got arm 0 (joint DP, `def:JDP-interactive`, bounds exactly their
  joint law; local DP implies it);
- :func:`privbandit.privacy.audit_delta` at each epsilon of a grid (hockey-stick over half-lines,
  Clopper-Pearson bounds at 95%): ``epsilon_lower`` is the largest epsilon it refutes, a 95% lower
  confidence bound on the privacy loss that this statistic reveals.

It also checks the agent's ledger: the worst user's composed epsilon against the claim, or, for an agent
that claims privacy and records nothing, "ledger missing: privacy not verified".

What an audit can and cannot show: ``epsilon_lower > epsilon`` is evidence (at 95%) that the agent
breaks its claim. ``epsilon_lower <= epsilon`` proves nothing: the audit looks at one pair of streams,
one statistic and a few thousand runs, so a bug that this pair or statistic does not reach (or a leak
smaller than the Clopper-Pearson error bars) passes. It is a lower bound, never a proof; the proof is
the ledger's accounting plus the paper's analysis.

References
----------
Source paper, `def:JDP-interactive`, `def:JDP`, `def:LDP`. Auditing by hypothesis testing: Jagielski,
Ullman & Oprea (2020); Nasr et al. (2021).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np

from .._validation import check_delta, check_epsilon, check_int

__all__ = ["LEDGER_MISSING", "AgentAudit", "audit_agent", "neighbouring_streams"]

LEDGER_MISSING = "ledger missing: privacy not verified"
"""What the audit says of an agent that claims privacy but records no release."""

EPS_GRID = tuple(round(0.05 * k, 2) for k in range(1, 161))
"""The epsilons the audit tests (0.05 .. 8)."""


def neighbouring_streams(horizon: int, neighbour: int = 0, dim: int = 2
                         ) -> tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]:
    """Two streams (features (T, 2, d), rewards (T, 2)) that differ only in user ``neighbour``'s rewards."""
    feats = np.zeros((horizon, 2, dim))
    feats[:, 0, 0], feats[:, 1, 0] = 1.0, -1.0
    rewards = np.zeros((horizon, 2))
    rewards[neighbour] = (1.0, -1.0)
    rewards_prime = rewards.copy()
    rewards_prime[neighbour] = (-1.0, 1.0)
    return (feats, rewards), (feats.copy(), rewards_prime)


def play_stream(agent, feats: np.ndarray, rewards: np.ndarray,
                rng: np.random.Generator) -> tuple[np.ndarray, float | None]:
    """One run on a fixed stream through the batch interface (:func:`privbandit.agents.checks.play_batch`): the
    actions (T,) and the ledger's worst epsilon (None if it recorded nothing)."""
    from ..agents.checks import play_batch

    actions = play_batch(agent, feats, rewards, rng).actions
    spent = agent.ledger.guarantee(agent.privacy.delta) if agent.ledger.releases else None
    return actions, spent


@dataclass(frozen=True)
class AgentAudit:
    """The outcome of :func:`audit_agent`.

    Attributes
    ----------
    agent : str
    model : str
        The privacy model the agent claims ("jdp", "ldp").
    epsilon, delta : float
        The claim.
    epsilon_lower : float
        The largest epsilon of :data:`EPS_GRID` at which the audit refutes (epsilon, delta)-DP (0 if none).
    delta_lower : float
        Lower confidence bound on delta at the claimed epsilon.
    ledger_epsilon : float or None
        The worst user's composed epsilon over the runs (None: the ledger recorded nothing).
    n_draws, horizon : int
    """

    agent: str
    model: str
    epsilon: float
    delta: float
    epsilon_lower: float
    delta_lower: float
    ledger_epsilon: float | None
    n_draws: int
    horizon: int

    @property
    def refuted(self) -> bool:
        """Whether the audit found evidence (95%) that the agent breaks its claim."""
        return self.epsilon_lower > self.epsilon or self.delta_lower > self.delta

    @property
    def ledger_status(self) -> str:
        """``"ledger: worst user's epsilon ... <= claim"``, a breach, or :data:`LEDGER_MISSING`."""
        if self.ledger_epsilon is None:
            return LEDGER_MISSING
        ok = self.ledger_epsilon <= self.epsilon * (1 + 1e-9)
        return (f"ledger: worst user's epsilon {self.ledger_epsilon:.4g} at delta={self.delta:g} "
                + ("within" if ok else "ABOVE") + f" the claim {self.epsilon:g}")

    def lines(self) -> list[str]:
        """The audit's report, one statement a line."""
        verdict = ("REFUTED: the agent leaks more than it claims" if self.refuted else
                   "not refuted (a lower bound, never a proof of privacy)")
        return [f"agent {self.agent}: claims {self.model} (epsilon={self.epsilon:g}, delta={self.delta:g})",
                f"empirical lower bound on epsilon: {self.epsilon_lower:g} (95%, {self.n_draws} runs per stream, "
                f"T={self.horizon}); delta lower bound at the claimed epsilon: {self.delta_lower:.4g}",
                f"verdict: {verdict}", self.ledger_status]


def audit_agent(agent: str, epsilon: float, delta: float = 1e-5, *, agent_kwargs: Mapping[str, Any] | None = None,
                horizon: int = 3, neighbour: int = 0, watch: tuple[int, ...] | None = None, n_draws: int = 1000,
                seed: int = 0) -> AgentAudit:
    """Audit a private agent's claim on neighbouring streams (see the module docstring).

    Parameters
    ----------
    agent : str
        A registered name, an entry point name or an import path ``"pkg.module:factory"``.
    epsilon, delta : float
        The claimed budget the agent is built with.
    agent_kwargs : mapping, optional
        More keyword arguments of the agent (public hyperparameters that make it act on the neighbour's
        release sooner give the audit more power, e.g. a first epoch of one round).
    horizon : int
        T >= 2 rounds of each run.
    neighbour : int
        The user whose data differs, in [0, T).
    watch : tuple of int, optional
        The users whose actions the statistic counts (default: every user after the neighbour).
    n_draws : int
        Runs per stream, >= 1000.
    seed : int

    Returns
    -------
    AgentAudit

    Raises
    ------
    ValueError
        For a non-private agent (nothing to audit) or bad sizes.
    """
    from ..agents import agent_is_private, make_agent
    from ..privacy import audit_delta

    epsilon, delta = check_epsilon(epsilon), check_delta(delta)
    horizon = check_int("horizon", horizon, low=2)
    neighbour = check_int("neighbour", neighbour, low=0, high=horizon - 1)
    n_draws = check_int("n_draws", n_draws, low=1000)
    if agent_is_private(agent) is False:
        raise ValueError(f"agent {agent!r} is non-private: there is no privacy claim to audit")
    watch = tuple(range(neighbour + 1, horizon)) if watch is None else tuple(watch)
    if not watch or neighbour in watch or not all(0 <= w < horizon for w in watch):
        raise ValueError(f"watch must be users in [0, {horizon}) other than the neighbour {neighbour}, got {watch}")
    kwargs = dict(agent_kwargs or {})

    def build():
        return make_agent(agent, epsilon=epsilon, delta=delta, **kwargs)

    model = build().privacy.model
    if model == "none":
        raise ValueError(f"agent {agent!r} built with epsilon={epsilon:g} is non-private: nothing to audit")
    streams = neighbouring_streams(horizon, neighbour)
    outs, spent = [], []
    for i, (feats, rewards) in enumerate(streams):
        a = build()
        runs = [play_stream(a, feats, rewards, np.random.default_rng(s))
                for s in np.random.SeedSequence([seed, i]).spawn(n_draws)]
        outs.append(np.array([r[0] for r in runs]))
        spent += [r[1] for r in runs]
    ledger = None if any(s is None for s in spent) else float(max(spent))
    columns = np.array(watch)

    def statistic(outputs):
        return (np.asarray(outputs)[:, columns] == 0).sum(axis=1).astype(float)

    def at(eps: float):
        return audit_delta(lambda k, g: outs[0], lambda k, g: outs[1], eps, n_draws=n_draws, rng=seed,
                           project=statistic)

    refuted = [e for e in EPS_GRID if at(e).violates(delta)]
    return AgentAudit(agent, model, epsilon, delta, float(max(refuted, default=0.0)), at(epsilon).delta_lower,
                      ledger, n_draws, horizon)
