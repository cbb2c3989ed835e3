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

import dataclasses
import functools
import numbers
from collections.abc import Callable
from typing import Any, ClassVar

import numpy as np

from .._validation import (
    POSITIVE,
    Boolean,
    Interval,
    IsCallable,
    Options,
    ParameterConstraints,
    check_int,
)
from ..oracles.base import EpochFit, Estimate, Oracle
from ..oracles.ridge import Ridge, RidgeFit
from ._oracle_arg import ORACLE_ARGUMENT_CONSTRAINTS, register_variant, resolve_oracle
from .base import BanditSpec, EpochAgent
from .planner import (
    _ELIMINATION_TOLERANCE,
    _best,
    _bounds,
    _eliminate_all,
    _Stack,
    _stack,
    _survivors,
    can_eliminate,
    epoch_bounds,
    surviving_actions,
    uniform_over,
)
from .spanner import _spanner

__all__ = ["PLAY_RULES", "POOLING", "EliminationAgent", "can_eliminate", "cube_root_exploration", "epoch_bounds",
           "surviving_actions", "theory_confidence", "uniform_over"]

_PLAN_CHUNK = 4096
_PLAY_BUDGET = 1 << 19   # entries of the (mK, J (d + 1)) product per pass of the UCB and greedy rules (4 MiB)

PLAY_RULES = ("spanner", "ucb", "greedy")
"""The play rules of :class:`EliminationAgent` among the survivors (``"spanner"``: the paper's `alg:plan`)."""

JDP_UCB_FIRST_EPOCH = 256
"""First epoch of ``elim-jdp-ucb``: public, fixed before the run; the lowest regret among {1, 128, 256, 512, 1600}
on rare-direction, heavy-tailed and spiky (T = 2^16, d = K = 10, epsilon = 1, 6 seeds)."""

POOLING = ("none", "ridge")
"""``"ridge"``: the non-private reference fits ridge on all past rows at each epoch end."""


def cube_root_exploration(dim: int) -> Callable[[np.ndarray], np.ndarray]:
    """The default exploration schedule of greedy play: eps_t = min(1, (d / t)^(1/3)) for rounds t = 1, 2, ...

    A function of the public dimension and the round alone (no data), fixed before the run.
    """
    def rate(t: np.ndarray) -> np.ndarray:
        return np.minimum(1.0, (dim / np.asarray(t, dtype=float)) ** (1.0 / 3.0))

    return rate


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


class EliminationAgent(EpochAgent):
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
    play : {"spanner", "ucb", "greedy"}
        How to pick among the survivors (elimination always runs first):

        - ``"spanner"`` (default): uniformly on the spanner, the paper's `alg:plan` (unchanged);
        - ``"ucb"``: the survivor with the largest upper confidence bound min_tau (f_tau + b_tau) over
          every released estimate (the top of the intersection of its intervals), ties uniform;
        - ``"greedy"``: the survivor with the largest mean of the latest released estimate (the one fitted
          on the most recent, largest epoch), ties uniform; with probability eps_t instead uniformly on
          the survivors' spanner (on all survivors with ``spanner=False``).

        Every rule reads only released estimates, the current context and the agent's uniforms: post-
        processing of the releases, at no privacy cost.
    exploration : callable, optional
        Greedy play's eps_t: ``exploration(t)`` maps an int array of rounds t >= 1 to rates in [0, 1]
        (vectorised). Default min(1, (d/t)^(1/3)) (:func:`cube_root_exploration`). It must depend on
        public parameters and t only. Only with ``play="greedy"``.
    pooling : {"none", "ridge"}
        ``"ridge"``: release at each epoch end the ridge fit on ALL past rows (the ``ridge`` oracle's
        fit, kept open over the run) instead of the epoch's own fit (which then gets no rows: it would
        never be released). Non-private only: a private oracle never pools (its epochs compose in
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
    uniforms_per_round: ClassVar[int] = 1
    parameter_constraints: ClassVar[ParameterConstraints] = {
        **EpochAgent.parameter_constraints, **ORACLE_ARGUMENT_CONSTRAINTS, "spanner": [Boolean()],
        "spanner_constant": [Interval(numbers.Real, 1.0, None, closed="right")], "width_cap": [POSITIVE],
        "play": [Options(PLAY_RULES)],
        "exploration": [None, IsCallable("exploration(t: int array) -> rates in [0, 1]")],
        "pooling": [Options(POOLING)]}

    def __init__(self, oracle: Oracle | str = "ridge", *, epsilon: float | None = None, delta: float | None = None,
                 model: str | None = None, oracle_kwargs: dict[str, Any] | None = None, spanner: bool = True,
                 spanner_constant: float = 2.0, width_cap: float = 2.0, play: str = "spanner",
                 exploration: Callable[[np.ndarray], np.ndarray] | None = None, pooling: str = "none",
                 first_epoch: int = 1, growth: float = 2.0) -> None:
        super().__init__(resolve_oracle(oracle, epsilon=epsilon, delta=delta, model=model,
                                        oracle_kwargs=oracle_kwargs), first_epoch=first_epoch, growth=growth)
        self._store_parameters(spanner=spanner, spanner_constant=spanner_constant, width_cap=width_cap, play=play,
                               exploration=exploration, pooling=pooling)
        if exploration is not None and play != "greedy":
            raise ValueError(f"exploration is greedy play's rate: it needs play='greedy', got play={play!r}")
        if pooling == "ridge":
            if self.oracle.privacy.is_private:
                raise ValueError(f"pooling='ridge' fits every past user's raw rows: it is for the non-private "
                                 f"reference only, and private oracles never pool (oracle {self.oracle.name!r} is "
                                 f"{self.oracle.privacy.model!r}); use pooling='none'")
            if not isinstance(self.oracle, Ridge):
                raise ValueError(f"pooling='ridge' needs the 'ridge' oracle, got {self.oracle.name!r}")

    def _epoch_oracle(self, spec: BanditSpec) -> Oracle:
        """The oracle with the proofs' per-epoch confidence in theory mode, else ``self.oracle``."""
        if getattr(self.oracle, "constants", None) == "theory" and hasattr(self.oracle, "confidence"):
            return dataclasses.replace(self.oracle, confidence=theory_confidence(spec.horizon))
        return self.oracle

    def _reset(self) -> None:
        super()._reset()
        self._informative: list[Estimate] = []
        self._stacks: tuple[_Stack, _Stack | None, np.ndarray | slice] | None = None   # see _stacked
        self._pool: EpochFit | None = None
        if self.pooling == "ridge":     # one ridge fit over the whole run, read (never finished) at epoch ends
            spec = self._require_spec()
            self._pool = self._run_oracle.start(spec.horizon, dim=spec.dim, bound=spec.bound, link=spec.link, rng=0)

    def _observe(self, x: np.ndarray, y: np.ndarray) -> None:
        if self._pool is None:
            super()._observe(x, y)
            return
        # pooled: the epoch's own fit would never be released, so only the pool learns (update has checked
        # and clipped the rows to the pool's bound); the epoch bookkeeping is the same
        self._pool.add_clipped(x, y)
        self._after_rows(x.shape[0])

    def _release(self) -> Estimate:
        if isinstance(self._pool, RidgeFit):
            return self._pool.current()
        return super()._release()

    def _on_epoch_end(self, estimate: Estimate) -> None:
        # estimates whose test can never remove an arm are skipped by the planner (same survivors)
        if can_eliminate(estimate, self._require_spec().bound, self.width_cap):
            self._informative.append(estimate)
        self._stacks = None

    def _stacked(self) -> tuple[_Stack, _Stack | None, np.ndarray | slice]:
        """All released estimates stacked, the informative ones stacked (None if none) and their indices
        among all (a slice when they are consecutive); rebuilt once per epoch (the releases are fixed within
        one)."""
        if self._stacks is None:
            informative = {id(e) for e in self._informative}
            index = np.array([j for j, e in enumerate(self.estimates) if id(e) in informative], dtype=np.int64)
            if index.size and index[-1] - index[0] + 1 == index.size:      # a run of epochs: a view, no copies
                index = np.s_[int(index[0]):int(index[-1]) + 1]
            self._stacks = (_stack(self.estimates), _stack(self._informative) if self._informative else None, index)
        return self._stacks

    def play_set(self, features: np.ndarray) -> np.ndarray:
        """The set the policy plays uniformly on, (m, K) booleans: the spanner of the survivors."""
        x = np.asarray(features, dtype=float)
        out = np.empty(x.shape[:2], dtype=bool)
        for lo in range(0, x.shape[0], _PLAN_CHUNK):
            part = x[lo:lo + _PLAN_CHUNK]
            out[lo:lo + _PLAN_CHUNK] = self._spanner_of(part, self._survivors(part))
        return out

    def _choose(self, features: np.ndarray, uniforms: np.ndarray) -> np.ndarray:
        if self.play == "spanner" or not self.estimates:
            return uniform_over(self.play_set(features), uniforms[:, 0])
        x = np.asarray(features, dtype=float)
        u = uniforms[:, 0]
        out = np.empty(x.shape[0], dtype=np.int64)
        step = self._play_chunk(x.shape)
        for lo in range(0, x.shape[0], step):
            part, v = x[lo:lo + step], u[lo:lo + step]
            alive, best = self._survivors_and_best(part)
            if self.play == "ucb":
                out[lo:lo + step] = uniform_over(best, v)
                continue
            eps = self._exploration_rates(lo, part.shape[0])
            explore = v < eps                    # explore with u / eps_t, exploit with (u - eps_t) / (1 - eps_t)
            arms = np.empty(part.shape[0], dtype=np.int64)
            if explore.any():                    # the spanner only for the rounds that explore
                span = self._spanner_of(part[explore], alive[explore])
                arms[explore] = uniform_over(span, v[explore] / eps[explore])
            keep = ~explore
            arms[keep] = uniform_over(best[keep], (v[keep] - eps[keep]) / (1.0 - eps[keep]))
            out[lo:lo + step] = arms
        return out

    def _probabilities(self, features: np.ndarray) -> np.ndarray:
        if self.play == "spanner" or not self.estimates:
            play = self.play_set(features)
            return play / play.sum(axis=1, keepdims=True)
        x = np.asarray(features, dtype=float)
        out = np.empty(x.shape[:2])
        step = self._play_chunk(x.shape)
        for lo in range(0, x.shape[0], step):
            part = x[lo:lo + step]
            alive, best = self._survivors_and_best(part)
            p = best / best.sum(axis=1, keepdims=True)
            if self.play == "greedy":
                span = self._spanner_of(part, alive)
                eps = self._exploration_rates(lo, part.shape[0])[:, None]
                p = eps * span / span.sum(axis=1, keepdims=True) + (1.0 - eps) * p
            out[lo:lo + step] = p
        return out

    def _play_chunk(self, shape: tuple[int, ...]) -> int:
        """Contexts per pass of the planner: the pass's product fits in :data:`_PLAY_BUDGET` (UCB's covers
        every released estimate, elimination's only the informative ones)."""
        _, k, d = shape
        stacked = len(self.estimates) if self.play == "ucb" else len(self._informative)
        return max(16, _PLAY_BUDGET // (k * (d + 1) * max(stacked, 1)))

    def _spanner_of(self, features: np.ndarray, alive: np.ndarray) -> np.ndarray:
        """The survivors' spanner (all survivors with ``spanner=False``): where spanner play plays and greedy
        play explores."""
        if not self.spanner:
            return alive
        return _spanner(features, alive, self.spanner_constant)

    def _survivors(self, features: np.ndarray) -> np.ndarray:
        """:func:`surviving_actions` of the informative released estimates (stacked once per epoch), computed
        in passes of :meth:`_play_chunk` contexts."""
        m = features.shape[0]
        if not self._informative or m == 0:
            return np.ones(features.shape[:2], dtype=bool)
        stack, step = self._stacked()[1], self._play_chunk(features.shape)
        return np.concatenate([_survivors(stack, features[lo:lo + step], self.width_cap, _ELIMINATION_TOLERANCE)
                               for lo in range(0, m, step)])

    def _survivors_and_best(self, features: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The survivors (m, K) and, among them, the arms the UCB or greedy rule would exploit (ties)."""
        if self.play == "greedy":
            alive = self._survivors(features)
            return alive, _best(alive, self.estimates[-1].mean(features))
        # UCB: one pass gives every needed estimate's bounds; elimination uses the informative ones (as
        # surviving_actions does), the score is the top of each arm's intersected interval over all of them
        stack, _, index = self._stacked()
        if not self._informative:
            index = None
        mean, width = _bounds(stack, features, self.width_cap)
        upper = mean + width
        alive = np.ones(features.shape[:2], dtype=bool)
        if index is not None:
            alive = _eliminate_all(alive, mean, width, upper, _ELIMINATION_TOLERANCE, index)
        return alive, _best(alive, np.min(upper, axis=0))

    def _exploration_rates(self, offset: int, m: int) -> np.ndarray:
        """eps_t of the rounds t = self.t + offset + 1, ..., self.t + offset + m (public: t and d only)."""
        rounds = np.arange(self.t + offset + 1, self.t + offset + m + 1, dtype=np.int64)
        rate = self.exploration or cube_root_exploration(self._require_spec().dim)
        eps = np.asarray(rate(rounds), dtype=float)
        if eps.shape != (m,) or not np.all((eps >= 0.0) & (eps <= 1.0)):
            raise ValueError("exploration(t) must return one rate in [0, 1] per round of the int array t")
        return eps


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

_factory("elim-ldp-greedy", "iw-regression-ldp", "ldp",
         "local-DP action elimination with IW-Regression-LDP, greedy play among the survivors with (d/t)^(1/3) "
         "exploration on their spanner (appdx:regret-upper-LDP with greedy play)", play="greedy")
