"""Batched action elimination with any regression oracle: joint DP, local DP, GLM and non-private.

Rounds are cut into epochs 1 = T_0 < T_1 < ... < T_J = T (`alg:batch-cb-meta`, `alg:batch-cb-JDP`). In
epoch j the policy is fixed: the planner (`alg:plan`, :mod:`.planner`) eliminates, for each context, the
arms that an earlier epoch's interval (f_tau, b_tau) rules out, then the agent plays on the survivors
(uniformly on their C-approximate barycentric spanner, :mod:`.spanner`, by default). The epoch's rows
feed one fresh oracle fit, whose Estimate gives f_j = nu(<phi, theta_j>) and b_j = min(L_nu c_j ||M_j
phi||, 2) (`appdx:proof-JDP-gen-linear`: the GLM width carries the link's Lipschitz constant L_nu).

Privacy. The agent touches data only through the oracle fits: epoch j's users enter only fit j, and
the actions of other users depend on them only through the fit's private release, so the agent is
(epsilon, delta)-JDP (LDP) when the oracle is (epsilon, delta)-DP (LDP) (`thm:regret-upper-meta`). Every
play rule post-processes released estimates only. The agent's ledger is the union of the fits' ledgers
at the epochs' round offsets.

References
----------
Source paper, `alg:batch-cb-meta`, `alg:plan`, `alg:batch-cb-JDP`, `appdx:regret-upper-LDP`,
`appdx:proof-JDP-gen-linear`, `def:spanner`, `lem:bary-spanner`, `thm:regret-upper-meta`.
"""

from __future__ import annotations

import abc
import dataclasses
import functools
import numbers
from collections.abc import Callable, Iterator, Sequence
from typing import Any, ClassVar, NamedTuple

import numpy as np

from .._validation import (
    POSITIVE,
    Boolean,
    InstanceOf,
    Interval,
    IsCallable,
    Options,
    ParameterConstraints,
    check_int,
)
from ..bandit_spec import BanditSpec
from ..oracles.base import EpochFit, Estimate, Oracle
from ..oracles.ridge import Ridge, RidgeFit
from ._oracle_arg import register_variant
from .base import Learner
from .planner import (
    ELIMINATION_TOLERANCE,
    EstimateStack,
    best_arms,
    can_eliminate,
    eliminate_all,
    stack_estimates,
    stacked_bounds,
    stacked_survivors,
    surviving_actions,
    uniform_over,
)
from .policy import PolicyAgent
from .registry import register_preset
from .spanner import masked_spanner

__all__ = ["PLAY_RULES", "PLAY_RULE_CLASSES", "POOLING", "EliminationAgent", "GreedyPlay", "Law", "PlayRule",
           "PlayValues", "RidgePool", "SpannerPlay", "UCBPlay", "law_choice", "law_probabilities", "can_eliminate",
           "cube_root_exploration",
           "surviving_actions", "theory_confidence", "uniform_over"]

_PLAN_CHUNK = 4096
_PLAY_BUDGET = 1 << 19   # entries of the (mK, J (d + 1)) product per pass of the UCB and greedy rules (4 MiB)

PLAY_RULES = ("spanner", "ucb", "greedy")
"""The play rules of :class:`EliminationAgent` among the survivors (``"spanner"``: the paper's `alg:plan`)."""

JDP_UCB_FIRST_EPOCH = 256
"""First epoch of ``elim-jdp-ucb``: long enough that the first release is informative under joint-DP noise
(public, fixed before the run; the changelog records the choice)."""

POOLING = ("none", "ridge")
"""``"ridge"``: the non-private reference fits ridge on all past rows at each epoch end."""


def cube_root_exploration(dim: int) -> Callable[[np.ndarray], np.ndarray]:
    """The default exploration schedule of greedy play: eps_t = min(1, (d / t)^(1/3)) for rounds t = 1, 2, ...

    A function of the public dimension and the round alone (no data), fixed before the run (picklable, as the agent
    holding it).
    """
    return functools.partial(_cube_root_rate, dim)


def _cube_root_rate(dim: int, t: np.ndarray) -> np.ndarray:
    return np.minimum(1.0, (dim / np.asarray(t, dtype=float)) ** (1.0 / 3.0))


def theory_confidence(horizon: int) -> float:
    """The statistical confidence of every epoch's fit in the regret proofs: delta = 1/T.

    Every epoch j runs its regression with the same delta (`alg:batch-cb-JDP`: JDPLinearRegression(D_j,
    delta)); `thm:regret-upper-meta` takes the union bound over the J epochs (the success event has
    probability >= 1 - J delta, which costs the 4 T J delta term of the bound), and the proofs of
    `thm:regret-upper-JDP-better`, `thm:regret-upper-JDP` and `thm:regret-upper-LDP` set delta = 1/T.
    So the per-epoch confidence is 1/T, not split further over the epochs (J delta T = J = O(log T)
    regret). The algorithm needs delta in (0, 1): at T = 1 (one epoch, whose estimate is never used)
    it is 1/2.

    References
    ----------
    Source paper, `alg:batch-cb-JDP`, `thm:regret-upper-meta`, `appdx:proof-regret-upper-JDP-better`,
    `appdx:proof-JDP-gen-linear`, `appdx:regret-upper-LDP`.
    """
    return 1.0 / max(check_int("horizon", horizon, low=1), 2)


class PlayValues(NamedTuple):
    """What a play rule reads, never the agent: every release (``estimates``, oldest first), ``stacks``
    (:meth:`EliminationAgent.stacked_estimates`, None before the first release), the agent's ``width_cap``,
    ``spanner``, ``spanner_constant`` and ``exploration`` (greedy play's eps_t), ``t`` (the rounds played are
    t + 1, t + 2, ...), ``chunk`` (contexts per pass of the planner, at most this many per call) and
    ``informative`` (the planned releases whose test can remove an arm, :func:`can_eliminate`)."""

    estimates: tuple[Estimate, ...]
    stacks: tuple[EstimateStack, EstimateStack | None, np.ndarray | slice] | None
    width_cap: float
    spanner: bool
    spanner_constant: float
    exploration: Callable[[np.ndarray], np.ndarray]
    t: int
    chunk: int
    informative: tuple[Estimate, ...] = ()

    def survivors(self, features: np.ndarray) -> np.ndarray:
        """:func:`surviving_actions` of the informative released estimates: (m, K) booleans."""
        m = features.shape[0]
        informative = None if self.stacks is None else self.stacks[1]
        if informative is None or m == 0:
            return np.ones(features.shape[:2], dtype=bool)
        return np.concatenate([stacked_survivors(informative, features[lo:lo + self.chunk], self.width_cap,
                                                 ELIMINATION_TOLERANCE) for lo in range(0, m, self.chunk)])

    def spanner_of(self, features: np.ndarray, alive: np.ndarray) -> np.ndarray:
        """The survivors' spanner (the survivors with ``spanner=False``): where spanner play plays and greedy
        play explores."""
        if not self.spanner:
            return alive
        return masked_spanner(features, alive, self.spanner_constant)

    def play_set(self, features: np.ndarray) -> np.ndarray:
        """The spanner of the survivors, (m, K) booleans."""
        out = np.empty(features.shape[:2], dtype=bool)
        for lo in range(0, features.shape[0], _PLAN_CHUNK):
            part = features[lo:lo + _PLAN_CHUNK]
            out[lo:lo + _PLAN_CHUNK] = self.spanner_of(part, self.survivors(part))
        return out

    def exploration_rates(self, m: int) -> np.ndarray:
        """eps_t of the rounds t = self.t + 1, ..., self.t + m (public: t and d only)."""
        eps = np.asarray(self.exploration(np.arange(self.t + 1, self.t + m + 1, dtype=np.int64)), dtype=float)
        if eps.shape != (m,) or not np.all((eps >= 0.0) & (eps <= 1.0)):
            raise ValueError("exploration(t) must return one rate in [0, 1] per round of the int array t")
        return eps


Law = list[tuple[Any, Callable[[np.ndarray], np.ndarray]]]
"""A play rule's law: a mixture of uniform laws on sets of arms, as (weight, sets) pairs: the weight of each
round ((m,) or a scalar; the weights of a round sum to 1) and ``sets(rows)``, the (len(rows), K) booleans of the
given rounds (computed only for the rounds drawn from it)."""


def law_probabilities(law: Law, m: int) -> np.ndarray:
    """The probabilities (m, K) of a play rule's law (sum over its parts of weight x uniform on the set)."""
    rows, out = np.arange(m), 0.0
    for weight, sets in law:
        s = sets(rows)
        out = out + np.reshape(weight, (-1, 1)) * (s / s.sum(axis=1, keepdims=True))
    return out


def law_choice(law: Law, u: np.ndarray) -> np.ndarray:
    """Arms drawn from a play rule's law with one uniform per round: the part whose cumulative weights bracket u,
    then uniformly on its set with u rescaled to [0, 1) (the probabilities are :func:`law_probabilities`)."""
    m = u.shape[0]
    arms = np.empty(m, dtype=np.int64)
    todo, lo = np.ones(m, dtype=bool), np.zeros(m)
    for i, (weight, sets) in enumerate(law):
        w = np.broadcast_to(np.asarray(weight, dtype=float), (m,))
        pick = todo if i == len(law) - 1 else todo & (u < lo + w)
        rows = np.flatnonzero(pick)
        if rows.size:
            arms[rows] = uniform_over(sets(rows), (u[rows] - lo[rows]) / w[rows])
        todo &= ~pick
        lo = lo + w
    return arms


class PlayRule(abc.ABC):
    """How an elimination agent picks among the arms that survive elimination: one law per rule.

    A rule writes :meth:`law`, given :class:`PlayValues` (the releases and public values) and the rounds'
    features, never the agent: so it reads only what keeps the oracle's guarantee. The law is a mixture of
    uniform laws on sets of arms (:data:`Law`); the agent draws each round's arm from it with one uniform
    (:func:`law_choice`) and reports the same law (:func:`law_probabilities`). The agent calls a rule only once
    something was released (the first epoch plays uniformly on a spanner of all arms).

    A rule is given to the agent as ``play=MyRule()``; the built-in ones also by name (:data:`PLAY_RULES`).
    """

    reads_every_estimate: ClassVar[bool] = False
    """Whether a pass of the rule stacks every released estimate (not only the informative ones): the agent
    sizes its passes over the contexts by it."""

    @abc.abstractmethod
    def law(self, values: PlayValues, features: np.ndarray) -> Law:
        """The law of the arms of rounds with features (m, K, d) (at most ``values.chunk`` of them)."""

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and vars(other) == vars(self)

    def __hash__(self) -> int:
        return hash(type(self))

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class SpannerPlay(PlayRule):
    """Uniform play on the survivors' spanner (on all survivors with ``spanner=False``): `alg:plan`."""

    def law(self, values: PlayValues, features: np.ndarray) -> Law:
        return [(1.0, lambda rows: values.play_set(features[rows]))]


class UCBPlay(PlayRule):
    """The survivor with the largest upper bound min_tau (f_tau + b_tau) over every release, ties uniform."""

    reads_every_estimate: ClassVar[bool] = True

    def law(self, values: PlayValues, features: np.ndarray) -> Law:
        # one pass gives every needed estimate's bounds; elimination uses the informative ones (as
        # surviving_actions does), the score is the top of each arm's intersected interval over all of them
        stack, informative, index = values.stacks
        mean, width = stacked_bounds(stack, features, values.width_cap)
        upper = mean + width
        alive = np.ones(features.shape[:2], dtype=bool)
        if informative is not None:
            alive = eliminate_all(alive, mean, width, upper, ELIMINATION_TOLERANCE, index)
        best = best_arms(alive, np.min(upper, axis=0))
        return [(1.0, lambda rows: best[rows])]


class GreedyPlay(PlayRule):
    """The survivor with the best mean of the latest release, ties uniform; with probability eps_t (the agent's
    ``exploration`` rate of round t) uniformly on the survivors' spanner instead."""

    def law(self, values: PlayValues, features: np.ndarray) -> Law:
        alive = values.survivors(features)
        best = best_arms(alive, values.estimates[-1].mean(features))
        eps = values.exploration_rates(features.shape[0])
        return [(eps, lambda rows: values.spanner_of(features[rows], alive[rows])),
                (1.0 - eps, lambda rows: best[rows])]


PLAY_RULE_CLASSES: dict[str, type[PlayRule]] = {"spanner": SpannerPlay, "ucb": UCBPlay, "greedy": GreedyPlay}
"""The built-in play rules by name (``play="ucb"`` is ``play=UCBPlay()``)."""


@dataclasses.dataclass(frozen=True)
class RidgePool(Learner):
    """``pooling="ridge"`` (non-private only): one ridge fit over the whole run, read (never finished) at each
    epoch end; the epochs' own fits get no rows (they would never be released)."""

    def check(self, oracle: Oracle) -> None:
        if oracle.privacy.is_private:
            raise ValueError(f"pooling='ridge' fits every past user's raw rows: it is for the non-private "
                             f"reference only, and private oracles never pool (oracle {oracle.name!r} is "
                             f"{oracle.privacy.model!r}); use pooling='none'")
        if not isinstance(oracle, Ridge):
            raise ValueError(f"pooling='ridge' needs the 'ridge' oracle, got {oracle.name!r}")

    def start(self, spec: BanditSpec, oracle: Oracle) -> RidgeFit:
        return oracle.start(spec.horizon, dim=spec.dim, bound=spec.bound, link=spec.link, rng=0)

    def add(self, state: RidgeFit, fit: EpochFit, x: np.ndarray, y: np.ndarray) -> None:
        state.add_clipped(x, y)

    def epoch_estimate(self, state: RidgeFit, fit: EpochFit) -> Estimate:
        return state.current()


_POOLING_CLASSES: dict[str, type[Learner]] = {"none": Learner, "ridge": RidgePool}


class EliminationAgent(PolicyAgent):
    """Action elimination over past epochs' confidence intervals, playing uniformly on a spanner.

    Parameters
    ----------
    oracle : Oracle or str
        The L1-regression oracle (an instance, or a registered name such as ``"ridge"``,
        ``"iw-regression-dp"``, ``"ssp"``, ``"iw-regression-ldp"``, ``"ssp-local"``, ``"iw-glm-dp"``).
    epsilon, delta, model, oracle_kwargs :
        Per-user privacy budget, privacy model and oracle hyperparameters, when the oracle is given by name.
    spanner : bool
        Play uniformly on a C-approximate barycentric spanner of the survivors (default, `alg:plan`),
        or on all survivors (the footnote's variant for few actions).
    spanner_constant : float
        C > 1 of the approximate barycentric spanner (2 in the source).
    width_cap : float
        Cap on the confidence radius (2 in `alg:batch-cb-JDP`).
    play : {"spanner", "ucb", "greedy"} or PlayRule
        How to pick among the survivors (elimination always runs first): a :class:`PlayRule` (a user's own too),
        or the name of a built-in one (:data:`PLAY_RULE_CLASSES`): ``"spanner"`` (default, the paper's `alg:plan`,
        :class:`SpannerPlay`), ``"ucb"`` (:class:`UCBPlay`) or ``"greedy"`` (:class:`GreedyPlay`). Every rule
        reads only released estimates, the current context and the agent's uniforms: post-processing of the
        releases, at no privacy cost.
    exploration : callable, optional
        Greedy play's eps_t: ``exploration(t)`` maps an int array of rounds t >= 1 to rates in [0, 1]
        (vectorised). Default min(1, (d/t)^(1/3)) (:func:`cube_root_exploration`). It must depend on
        public parameters and t only. Only with ``play="greedy"``.
    pooling : {"none", "ridge"} or Learner
        How the fits become releases (a :class:`~privbandit.agents.base.Learner`; ``"none"``: each epoch's own
        fit, :class:`~privbandit.agents.pooled.PooledReleases`: statistics pooled over the epochs).
        ``"ridge"`` (:class:`RidgePool`): release at each epoch end the ridge fit on ALL past rows (the
        ``ridge`` oracle's fit, kept open over the run) instead of the epoch's own fit (which then gets no
        rows: it would never be released). Non-private only: a private oracle never pools (its epochs compose in
        parallel only because each user enters one fit).
    first_epoch, growth : int, float
        The epoch schedule (:func:`~privbandit.agents.base.epoch_schedule`; default the paper's doubling).

    Notes
    -----
    The first epoch has no estimate (f_0 = 0, b_0 = 1 eliminate nothing) and plays uniformly on a
    spanner of all actions, whatever the play rule. Ties are broken towards the lowest action index by
    the spanner rule. Greedy play's eps_t is the rate of the round being played: the rows of a batch
    (``act_batch``, ``action_probabilities``) are the next rounds self.t + 1, self.t + 2, ... One uniform
    per round serves every rule (greedy: u < eps_t explores with u / eps_t, else exploits with
    (u - eps_t) / (1 - eps_t)), so all rules consume the same stream.

    Statistical confidence. With an oracle in theory mode (``constants="theory"``) every epoch's fit
    gets the confidence the regret proofs use, delta = 1/T (:func:`theory_confidence`), whatever the
    oracle's own ``confidence``; otherwise the oracle's ``confidence`` applies to each epoch.

    References
    ----------
    Source paper, `alg:batch-cb-meta`, `alg:plan`, `alg:batch-cb-JDP`, `appdx:regret-upper-LDP`,
    `appdx:proof-JDP-gen-linear`.
    """

    name: ClassVar[str] = "elimination"
    privacy_model: ClassVar[str | None] = None     # the oracle's (the registered variants declare it)
    parameter_constraints: ClassVar[ParameterConstraints] = {
        "spanner": [Boolean()], "spanner_constant": [Interval(numbers.Real, 1.0, None, closed="right")],
        "width_cap": [POSITIVE], "play": [InstanceOf(PlayRule, "a PlayRule", example=UCBPlay), Options(PLAY_RULES)],
        "exploration": [None, IsCallable("exploration(t: int array) -> rates in [0, 1]")],
        "pooling": [InstanceOf(Learner, "a Learner", example=RidgePool), Options(POOLING)]}

    def __init__(self, oracle: Oracle | str = "ridge", *, epsilon: float | None = None, delta: float | None = None,
                 model: str | None = None, oracle_kwargs: dict[str, Any] | None = None, spanner: bool = True,
                 spanner_constant: float = 2.0, width_cap: float = 2.0, play: str | PlayRule = "spanner",
                 exploration: Callable[[np.ndarray], np.ndarray] | None = None, pooling: str | Learner = "none",
                 first_epoch: int = 1, growth: float = 2.0) -> None:
        super().__init__(oracle, epsilon=epsilon, delta=delta, model=model, oracle_kwargs=oracle_kwargs,
                         first_epoch=first_epoch, growth=growth, spanner=spanner, spanner_constant=spanner_constant,
                         width_cap=width_cap, play=play, exploration=exploration, pooling=pooling)
        self.play_rule = PLAY_RULE_CLASSES[play]() if isinstance(play, str) else play
        if exploration is not None and not isinstance(self.play_rule, GreedyPlay):
            raise ValueError(f"exploration is greedy play's rate: it needs play='greedy', got play={play!r}")
        self.learner = _POOLING_CLASSES[pooling]() if isinstance(pooling, str) else pooling
        self.learner.check(self.oracle)

    def _fit_oracle(self) -> Oracle:
        """The oracle with the proofs' per-epoch confidence for the run's horizon in theory mode, else
        ``self.oracle``."""
        if getattr(self.oracle, "constants", None) == "theory" and hasattr(self.oracle, "confidence"):
            return dataclasses.replace(self.oracle, confidence=theory_confidence(self._require_spec().horizon))
        return self.oracle

    def combine(self, estimates: Sequence[Estimate]) -> PlayValues:
        """The releases the play rule reads and the agent's public values (:class:`PlayValues`; its ``t`` and
        ``chunk`` are set per call): the releases planned on (:meth:`Learner.planned`) stacked, and those of
        them whose test can remove an arm (:func:`can_eliminate`; the planner skips the others, same survivors)
        stacked apart, with their indices among the planned ones (a slice when consecutive: a view, no copy)."""
        spec = self._require_spec()
        estimates = tuple(estimates)
        planned = self.learner.planned(list(estimates))
        informative = tuple(e for e in planned if can_eliminate(e, spec.bound, self.width_cap))
        stacks = None
        if estimates:
            chosen = {id(e) for e in informative}
            index = np.array([j for j, e in enumerate(planned) if id(e) in chosen], dtype=np.int64)
            if index.size and index[-1] - index[0] + 1 == index.size:
                index = np.s_[int(index[0]):int(index[-1]) + 1]
            stacks = (stack_estimates(planned), stack_estimates(list(informative)) if informative else None, index)
        return PlayValues(estimates, stacks, self.width_cap, self.spanner, self.spanner_constant,
                          self.exploration or cube_root_exploration(spec.dim), self.t, 0, informative)

    def stacked_estimates(self) -> tuple[EstimateStack, EstimateStack | None, np.ndarray | slice] | None:
        """The planned releases stacked, the informative ones stacked (None if none) and their indices
        (:meth:`combine`; None before the first release): what a play rule scores arms with, e.g.
        ``stacked_bounds(stack, features, agent.width_cap)``."""
        return self.estimate.stacks

    def play_values(self, shape: tuple[int, ...], offset: int = 0) -> PlayValues:
        """What the play rule reads for rounds of features of ``shape`` (m, K, d), the first ``offset`` rounds
        after ``self.t``: the releases and public values (:class:`PlayValues`)."""
        values = self.estimate
        rule = self.play_rule if values.estimates else _FIRST_EPOCH_PLAY
        _, k, d = shape
        stacked = len(values.estimates) if rule.reads_every_estimate else len(values.informative)
        return values._replace(t=self.t + offset, chunk=max(16, _PLAY_BUDGET // (k * (d + 1) * max(stacked, 1))))

    def _laws(self, features: np.ndarray) -> Iterator[tuple[slice, Law]]:
        """The play rule's law over passes of the planner: (the pass's rows, their law)."""
        rule = self.play_rule if self.estimate.estimates else _FIRST_EPOCH_PLAY
        step = self.play_values(features.shape).chunk
        for lo in range(0, features.shape[0], step):
            part = features[lo:lo + step]
            yield slice(lo, lo + part.shape[0]), rule.law(self.play_values(part.shape, lo), part)

    def policy(self, features: np.ndarray, estimate: PlayValues) -> np.ndarray:
        """The play rule's law (:func:`law_probabilities`; the first epoch's: uniform on a spanner of all arms)."""
        out = np.empty(features.shape[:2])
        for rows, law in self._laws(features):
            out[rows] = law_probabilities(law, rows.stop - rows.start)
        return out

    def _choose(self, features: np.ndarray, uniforms: np.ndarray) -> np.ndarray:
        """Arms drawn from the same law with one uniform per round (:func:`law_choice`, which builds a part's
        sets only for the rounds drawn from it; ``check_agent`` compares the draws with :meth:`policy`)."""
        out = np.empty(features.shape[0], dtype=np.int64)
        for rows, law in self._laws(features):
            out[rows] = law_choice(law, uniforms[rows, 0])
        return out


_FIRST_EPOCH_PLAY = SpannerPlay()


_factory = functools.partial(register_variant, EliminationAgent)   # (name, oracle name, model, description, ...)


_factory("elim-nonprivate", "ridge", "none",
         "action elimination with non-private ridge/OLS (alg:batch-cb-meta, reference)", counterpart="elim-jdp")
_factory("elim-jdp", "iw-regression-dp", "jdp",
         "joint-DP action elimination with IW-Regression-DP (alg:batch-cb-JDP)")
_factory("elim-ssp", "ssp", "jdp",
         "joint-DP action elimination with central sufficient-statistics perturbation (def:SSP)")
_factory("elim-glm-jdp", "iw-glm-dp", "jdp",
         "joint-DP GLM action elimination with IW-GLM-DP (appdx:proof-JDP-gen-linear)")
_factory("elim-ucb", "ridge", "none",
         "non-private action elimination, ridge pooled over all past epochs, UCB play among the survivors "
         "(alg:batch-cb-meta with UCB play; practical reference)", counterpart="elim-jdp-ucb", play="ucb",
         pooling="ridge")
_factory("elim-jdp-ucb", "iw-regression-dp", "jdp",
         f"joint-DP action elimination with IW-Regression-DP, UCB play among the survivors, first epoch of "
         f"{JDP_UCB_FIRST_EPOCH} rounds (alg:batch-cb-JDP with UCB play)", play="ucb", first_epoch=JDP_UCB_FIRST_EPOCH)
_factory("elim-ldp", "iw-regression-ldp", "ldp",
         "local-DP action elimination with IW-Regression-LDP (appdx:regret-upper-LDP)")
_factory("elim-ldp-ssp", "ssp-local", "ldp",
         "local-DP action elimination with local sufficient-statistics perturbation (def:SSP)")
_factory("elim-glm-ldp", "iw-glm-ldp", "ldp",
         "local-DP GLM action elimination with IW-GLM-LDP (appdx:regret-upper-LDP, remark)")
register_preset("elim-glm-jdp-ucb", "elim-glm-jdp", play="ucb", first_epoch=JDP_UCB_FIRST_EPOCH)

_factory("elim-ldp-greedy", "iw-regression-ldp", "ldp",
         "local-DP action elimination with IW-Regression-LDP, greedy play among the survivors with (d/t)^(1/3) "
         "exploration on their spanner (appdx:regret-upper-LDP with greedy play)", play="greedy")
