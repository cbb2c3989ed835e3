"""The agent interface, the epoch schedules, and the learner that turns an epoch agent's fits into releases.

An agent is reset with a :class:`BanditSpec` (K, d, horizon, feature bound B, link) and a ``rng``.
Its policy is fixed within an epoch, so ``act_batch`` can choose for many rounds at once while
``rounds_until_update()`` allows; ``update`` feeds the chosen rows (one or many) to the epoch's oracle
fit; when an epoch is full the fit's :class:`~privbandit.oracles.Estimate` joins the planner's
history and its releases join the agent's ledger at the epoch's global round offsets. The epoch agent every
learning agent of the library builds on, and the one the tutorial teaches, is :class:`~privbandit.agents.PolicyAgent`.

One implementation serves both ways of playing: ``act(x)`` is ``act_batch(x[None])[0]`` and ``update`` of
one row is the block update with one row. Randomness of actions: every round consumes exactly
``uniforms_per_round`` draws of ``rng.random``, in round order, whether rounds are chosen one by one
(``act``) or in a batch (``act_batch``). The Gymnasium step loop and the batch path therefore see the same
uniforms and choose the same arms, except where a decision is within rounding of a tie: a fit fed one row
at a time sums its rows in another order than one fed a block, so the two paths' estimates agree to
rounding, not bit for bit (:func:`~privbandit.agents.check_agent` compares them margin-aware). Within one
path a seed gives the same arms, bit for bit. Oracle fits draw from a separate stream, spawned once per epoch.

References
----------
Source paper, `alg:batch-cb-meta`, `alg:batch-cb-JDP` (epochs 1 = T_0 < T_1 < ... , one fresh
oracle per epoch).
"""

from __future__ import annotations

import abc
import dataclasses
import inspect
from typing import Any, ClassVar

import numpy as np

from .._validation import (
    ParameterConstraints,
    as_generator,
    check_array,
    check_int,
    check_parameters,
    check_real,
    check_rows,
)
from ..bandit_spec import BanditSpec
from ..oracles.base import EpochFit, Estimate, Oracle
from ..privacy import PrivacyLedger, PrivacySpec
from ..privacy.clipping import clip_features, clip_rewards


def doubling_schedule(horizon: int) -> np.ndarray:
    """Epoch end rounds T_j = 2^{j+1} - 1 (T_0 = 1), the last one cut at the horizon.

    Parameters
    ----------
    horizon : int
        The number of rounds T >= 1.

    Returns
    -------
    ndarray of int
        Cumulative epoch ends, strictly increasing, last entry = horizon (epoch j has 2^j rounds).
    """
    return epoch_schedule(horizon)


def epoch_schedule(horizon: int, *, first_epoch: int = 1, growth: float = 2.0) -> np.ndarray:
    """Geometric epoch ends: the first epoch has ``first_epoch`` rounds, each next one ``growth`` times more.

    Epoch j has n_j = max(n_{j-1} + 1, round(first_epoch * growth^j)) rounds (n_0 = first_epoch), the last
    epoch cut at the horizon. The defaults give the paper's doubling, T_j = 2^{j+1} - 1, exactly. The
    schedule is a function of public parameters only (the horizon and the two options), fixed before the run.

    Parameters
    ----------
    horizon : int
        T >= 1.
    first_epoch : int
        Rounds in the first epoch, >= 1 (a first epoch of at least T makes one epoch of T rounds).
    growth : float
        Ratio of consecutive epoch lengths, > 1 (finite).

    Returns
    -------
    ndarray of int
        Cumulative epoch ends, strictly increasing, last entry = horizon.

    References
    ----------
    Source paper, `alg:batch-cb-meta` (epochs 1 = T_0 < T_1 < ...), `alg:batch-cb-JDP`.
    """
    horizon = check_int("horizon", horizon, low=1)
    first_epoch = check_int("first_epoch", first_epoch, low=1)
    growth = check_real("growth", growth, low=1.0, high=float("inf"), low_open=True, high_open=True)
    ends = []
    end, n, target = 0, first_epoch, float(first_epoch)
    while True:
        end += n
        if end >= horizon:
            ends.append(horizon)
            return np.array(ends, dtype=np.int64)
        ends.append(end)
        target = min(target * growth, float(horizon))     # first_epoch * growth^j (exact for doubling)
        n = max(n + 1, round(target))


_NO_DEFAULT = inspect.Parameter.empty


def _is_default(value: Any, default: Any) -> bool:
    """Whether a parameter's value is its default (``_NO_DEFAULT`` when it has none), for :meth:`Agent.__repr__`."""
    if value is default:
        return True
    try:
        return default is not _NO_DEFAULT and bool(value == default)
    except (TypeError, ValueError):        # an array compared elementwise: not a default
        return False


def _short_repr(value: Any, shown_privacy: Any = None) -> str:
    """``repr(value)``, but a dataclass (an oracle, a privacy spec) shows only the fields off their defaults
    (and not a field equal to ``shown_privacy``, the budget the agent's repr already shows)."""
    if not dataclasses.is_dataclass(value) or isinstance(value, type):
        return repr(value)
    shown = []
    for f in dataclasses.fields(value):
        default = (f.default if f.default is not dataclasses.MISSING
                   else f.default_factory() if f.default_factory is not dataclasses.MISSING else _NO_DEFAULT)
        v = getattr(value, f.name)
        if f.init and f.repr and not _is_default(v, default) and not (shown_privacy is not None and v == shown_privacy):
            shown.append(f"{f.name}={_short_repr(v)}")
    return f"{type(value).__name__}({', '.join(shown)})"


class Agent(abc.ABC):
    """Interface of every agent (see the module docstring).

    Subclasses implement ``_reset``, ``_choose(features (m, K, d), uniforms (m, u))`` and ``_observe``,
    and may override ``_probabilities``. A subclass with constructor arguments declares each one's
    constraints in ``parameter_constraints`` (``{**Base.parameter_constraints, "lam": [POSITIVE], ...}``)
    and stores them with :meth:`_store_parameters`, which checks them in one place; :meth:`get_params` and
    the ``repr`` give them back.
    """

    name: ClassVar[str] = ""
    uniforms_per_round: ClassVar[int] = 1
    parameter_constraints: ClassVar[ParameterConstraints] = {}
    epoch_ends: np.ndarray | None = None
    """An agent whose policy changes only at epoch ends sets them (cumulative rounds) and ``epoch`` (the current
    epoch's index) in ``_reset``, and advances ``epoch`` when an epoch's last row is observed."""
    def __init__(self) -> None:
        self.spec: BanditSpec | None = None
        self.t = 0
        self.ledger = PrivacyLedger()

    def _store_parameters(self, **values: Any) -> None:
        """Check constructor arguments against ``parameter_constraints`` and store each as an attribute.

        Values are stored as the constraints return them (reals as floats, bools as ``bool``).

        Raises
        ------
        ValueError or TypeError
            Naming the first argument outside its constraints and the allowed range.
        """
        checked = check_parameters(type(self), values, self.parameter_constraints)
        self._params = {**getattr(self, "_params", {}), **checked}
        for name, value in checked.items():
            setattr(self, name, value)

    @classmethod
    def constructor_parameters(cls) -> dict[str, inspect.Parameter]:
        """The keyword arguments of the constructors along the MRO (a ``**kwargs`` passes on to the next)."""
        out: dict[str, inspect.Parameter] = {}
        for klass in cls.__mro__:
            if "__init__" not in klass.__dict__ or klass is Agent:
                continue
            params = list(inspect.signature(klass.__init__).parameters.values())[1:]
            out.update((p.name, p) for p in params if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
                       and p.name not in out)
            if not any(p.kind is p.VAR_KEYWORD for p in params):
                break
        return out

    def get_params(self) -> dict[str, Any]:
        """The constructor arguments of this agent (scikit-learn's convention), in the constructor's order.

        ``type(agent)(**agent.get_params())`` and ``make_agent(name, **agent.get_params())`` build an agent
        that behaves the same. Arguments folded into another one at construction are left out: an oracle
        given by name with ``epsilon``, ``delta``, ``model`` and ``oracle_kwargs`` is given back as the
        Oracle instance they built. Values are as :meth:`_store_parameters` checked them.
        """
        stored = getattr(self, "_params", {})
        return {name: stored[name] if name in stored else getattr(self, name)
                for name in self.constructor_parameters() if name in stored or name in vars(self)}

    def set_params(self, **params: Any) -> Agent:
        """Change constructor arguments (scikit-learn's convention); returns self.

        The agent is built again from ``{**get_params(), **params}`` by its constructor, so every argument
        is checked as at construction; its registered ``name`` is kept. Like a refit in scikit-learn, the
        change starts afresh: call ``reset(spec, rng)`` before the next run.

        Parameters
        ----------
        **params
            Constructor arguments, among those of :meth:`get_params`.

        Raises
        ------
        ValueError
            For a name that is not a constructor argument (naming the allowed ones), or what the
            constructor refuses.
        """
        current = self.get_params()
        unknown = sorted(set(params) - set(self.constructor_parameters()))
        if unknown:
            raise ValueError(f"{type(self).__name__} has no parameter(s) {unknown}; its parameters are "
                             f"{sorted(current)}")
        rebuilt = clone(self, **params)
        self.__dict__.clear()
        self.__dict__.update(vars(rebuilt))
        return self

    @property
    def action_rng_state(self) -> dict:
        """The state of the generator of the action uniforms (two runs drew the same uniforms iff equal)."""
        return self._act_rng.bit_generator.state

    def __repr__(self) -> str:
        """``Class(name=..., epsilon=..., delta=..., arg=value, ...)``, as scikit-learn shows an estimator.

        The registered name, then a private agent's budget (always, even at the defaults), then the
        constructor arguments that differ from their defaults (scikit-learn's ``print_changed_only``); an
        oracle's budget is not repeated inside it.

        Examples
        --------
        >>> from privbandit.agents import make_agent
        >>> make_agent("elim-jdp", epsilon=1.0, delta=1e-5)
        EliminationAgent(name='elim-jdp', epsilon=1.0, delta=1e-05, oracle=IWRegressionDP())
        >>> make_agent("linucb", lam=2.0)
        LinUCBAgent(name='linucb', lam=2.0)
        """
        defaults = {n: p.default for n, p in self.constructor_parameters().items()}
        privacy = self.privacy
        shown = [f"name={getattr(self, 'name', type(self).__name__)!r}"]
        if privacy.is_private:
            shown += [f"epsilon={privacy.epsilon!r}", f"delta={privacy.delta!r}"]
        hide = privacy if privacy.is_private else None
        shown += [f"{k}={_short_repr(v, hide)}" for k, v in self.get_params().items()
                  if not _is_default(v, defaults.get(k, _NO_DEFAULT))]
        return f"{type(self).__name__}({', '.join(shown)})"

    # -- configuration ---------------------------------------------------------------------------
    @property
    def privacy(self) -> PrivacySpec:
        """The privacy spec the agent promises (non-private unless overridden)."""
        return PrivacySpec.none()

    # -- lifecycle -------------------------------------------------------------------------------
    def reset(self, spec: BanditSpec, rng: Any = None) -> Agent:
        """Start a new run on a bandit described by ``spec`` with randomness ``rng``; returns self."""
        if not isinstance(spec, BanditSpec):
            raise TypeError(f"spec must be a BanditSpec, got {type(spec).__name__}")
        self.spec = spec
        self.t = 0
        self.ledger = PrivacyLedger()
        base = as_generator(rng)
        self._act_rng, self._fit_rng = base.spawn(2)
        self._reset()
        return self

    def _require_spec(self) -> BanditSpec:
        if self.spec is None:
            raise RuntimeError("call reset(spec, rng) before using the agent")
        return self.spec

    def _check_features(self, features: Any, batched: bool) -> np.ndarray:
        spec = self._require_spec()
        shape = (None, spec.n_arms, spec.dim) if batched else (spec.n_arms, spec.dim)
        # ||phi|| <= B is the model (BanditSpec); rows above it are projected with a ClippingWarning so a
        # huge row can never overflow the planners (no silent inf/NaN scores); the clip refuses NaN and inf
        return clip_features(check_array("features", features, shape=shape, finite=False), spec.bound)

    # -- acting ----------------------------------------------------------------------------------
    def rounds_until_update(self) -> int:
        """How many more rounds the current policy serves (act_batch may cover at most this many): the rest of
        the run, or of the current epoch for an agent with ``epoch_ends``."""
        spec = self._require_spec()
        if self.epoch_ends is None or self.t >= spec.horizon:
            return spec.horizon - self.t
        return int(self.epoch_ends[self.epoch]) - self.t

    def act(self, features: np.ndarray) -> int:
        """Choose an arm for one round's features (K, d): ``act_batch(features[None])[0]``."""
        x = self._check_features(features, batched=False)
        return int(self._act(x[None])[0])

    def act_batch(self, features: np.ndarray) -> np.ndarray:
        """Choose arms for m rounds at once, features (m, K, d); m <= rounds_until_update()."""
        x = self._check_features(features, batched=True)
        if x.shape[0] > self.rounds_until_update():
            raise ValueError(f"act_batch got {x.shape[0]} rounds but the policy is fixed for only "
                             f"{self.rounds_until_update()} more (rounds_until_update)")
        return self._act(x)

    def _act(self, x: np.ndarray) -> np.ndarray:
        if self.uniforms_per_round == 0:       # nothing to draw (the generator's state is unchanged either way)
            u = np.empty((x.shape[0], 0))
        else:
            u = self._act_rng.random((x.shape[0], self.uniforms_per_round))
        return np.asarray(self._choose(x, u), dtype=np.int64)

    def action_probabilities(self, features: np.ndarray) -> np.ndarray:
        """The current policy's action distribution: (K,) for (K, d) features, (m, K) for (m, K, d)."""
        x = np.asarray(features, dtype=float)
        batched = x.ndim == 3
        x = self._check_features(x, batched=batched)
        p = self._probabilities(x if batched else x[None])
        return p if batched else p[0]

    # -- learning --------------------------------------------------------------------------------
    def update(self, chosen_features: np.ndarray, rewards: np.ndarray) -> None:
        """Observe the chosen rows (d,) and reward, or (m, d) and (m,), of the rounds just played.

        Features are clipped to ||phi|| <= B and rewards to [-1, 1] first (a ClippingWarning when that
        changes data); NaN, inf and wrong shapes raise ValueError.
        """
        spec = self._require_spec()
        x, y = check_rows(chosen_features, rewards, spec.dim, finite=False)
        # every agent (private or not) learns from bounded rows: features clipped to ||phi|| <= B and
        # rewards to [-1, 1], with a ClippingWarning when that changes data; the clips refuse NaN and inf
        x, y = clip_features(x, spec.bound), clip_rewards(y)
        if self.t + x.shape[0] > spec.horizon:
            raise ValueError(f"update got {x.shape[0]} rows at round {self.t} but the horizon is T={spec.horizon} "
                             f"({spec.horizon - self.t} rounds left); call reset(spec, rng) to start a new run")
        if x.shape[0] > self.rounds_until_update():
            raise ValueError(f"update got {x.shape[0]} rows but only {self.rounds_until_update()} rounds remain "
                             f"before the policy changes (feed the rows of one epoch at a time)")
        self._observe(x, y)
        self.t += x.shape[0]

    # -- subclass hooks --------------------------------------------------------------------------
    def _reset(self) -> None:  # noqa: B027 - optional hook
        """Reset subclass state (spec, rngs and ledger are already set)."""

    @abc.abstractmethod
    def _choose(self, features: np.ndarray, uniforms: np.ndarray) -> np.ndarray:
        """Arms (m,) for features (m, K, d), using only ``uniforms`` (m, uniforms_per_round) for randomness."""

    @abc.abstractmethod
    def _probabilities(self, features: np.ndarray) -> np.ndarray:
        """Action probabilities (m, K) of the current policy."""

    def _observe(self, x: np.ndarray, y: np.ndarray) -> None:  # noqa: B027 - optional hook
        """Consume rows (m, d) and rewards (m,) that all fall inside the current epoch."""

    def describe(self) -> dict:
        """A flat dict describing the agent (for result tables)."""
        p = self.privacy
        return dict(agent=self.name, privacy_model=p.model, epsilon=p.epsilon, delta=p.delta)


def clone(agent: Agent, **params: Any) -> Agent:
    """A new agent with ``agent``'s constructor arguments (and ``params`` changed), not reset.

    ``type(agent)(**{**agent.get_params(), **params})``, keeping the name a registered factory gave the
    agent: played on the same env and seed, the clone gives the same table.

    Parameters
    ----------
    agent : Agent
        The agent to copy (its run state is not copied).
    **params
        Constructor arguments to change.

    Examples
    --------
    >>> from privbandit.agents import clone, make_agent
    >>> agent = make_agent("elim-jdp", epsilon=0.5)
    >>> copy = clone(agent, play="ucb")
    >>> copy.name, copy.play, copy.privacy.epsilon
    ('elim-jdp', 'ucb', 0.5)
    """
    if not isinstance(agent, Agent):
        raise TypeError(f"agent must be a privbandit Agent, got {type(agent).__name__}")
    new = type(agent)(**{**agent.get_params(), **params})
    if "name" in vars(agent):              # a registered factory's name for the agent
        new.name = agent.name
    return new


def uniform_choice(probs: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Sample one index per row of ``probs`` (m, K) by inverse CDF with uniforms ``u`` (m,).

    Parameters
    ----------
    probs : ndarray
        (m, K) probabilities, each row summing to 1.
    u : ndarray
        (m,) uniforms in [0, 1), one per row.
    """
    cdf = np.cumsum(probs, axis=1)
    cdf[:, -1] = np.inf  # guard against rounding: the last arm catches u close to 1
    return np.argmax(u[:, None] < cdf, axis=1)


@dataclasses.dataclass(frozen=True)
class Learner:
    """What turns an epoch agent's fits into the releases its policy reads (default: each epoch's own fit,
    `alg:batch-cb-meta`). It reads values, never the agent: the spec, the epoch's fit and its run state
    (:meth:`start`'s, from releases and public values only); it may configure the next fit from releases only
    (:meth:`fit_oracle`: a warm start), shape each user's row (:meth:`add`), release what the policy reads
    (:meth:`epoch_estimate`: statistics pooled over epochs) and choose the releases planned on (:meth:`planned`)."""

    def check(self, oracle: Oracle) -> None:
        """Refuse an oracle this learner cannot use (every oracle by default)."""

    def start(self, spec: BanditSpec, oracle: Oracle) -> Any:
        """The run state at the start of a run (None by default); ``oracle`` is the agent's run oracle."""
        return None

    def fit_oracle(self, state: Any, oracle: Oracle) -> Oracle:
        """The oracle the next epoch's fit starts with (``oracle``, the agent's run oracle, by default)."""
        return oracle

    def add(self, state: Any, fit: EpochFit, x: np.ndarray, y: np.ndarray) -> None:
        """Rows (m, d), already checked and clipped by ``update``, all inside the current epoch."""
        fit.add_clipped(x, y)

    def epoch_estimate(self, state: Any, fit: EpochFit) -> Estimate:
        """The estimate released at the end of the current epoch (the fit's result by default)."""
        return fit.result()

    def planned(self, estimates: list[Estimate]) -> list[Estimate]:
        """The releases the policy plans on (all of them by default)."""
        return estimates
