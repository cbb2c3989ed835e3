"""The public base of a user's epoch agent: write how to act on the latest releases, nothing else.

:class:`PolicyAgent` runs the epoch schedule, one oracle fit per epoch, the releases and the privacy ledger; a
subclass writes ``policy`` (and optionally ``combine``) and declares its hyperparameters (the tutorial
``docs/tutorials/own_agent.md`` builds one). Each arm is drawn from ``policy``'s law with one uniform per round
(inverse CDF, :func:`~privbandit.agents.uniform_choice`), so the actions and their exact probabilities
(``action_probabilities``, which off-policy evaluation and :func:`~privbandit.agents.check_agent` rely on) agree.

What ``policy`` and ``combine`` may read keeps the oracle's guarantee: released estimates, the current
round's features, public values fixed before the run (``self.spec``, the hyperparameters, the round index
``self.t``). Never the current epoch's fit (``self.fit``) or the rows given to ``update``.

References
----------
Source paper, `alg:batch-cb-meta` (a policy fixed within an epoch, from earlier epochs' estimates),
`alg:batch-cb-JDP`.
"""

from __future__ import annotations

import abc
import inspect
import numbers
from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np

from .._validation import POSITIVE_INT, Interval, ParameterConstraints
from ..oracles.base import EpochFit, Estimate, Oracle
from ..oracles.registry import oracle_class
from ..privacy import PrivacySpec
from ._oracle_arg import ORACLE_ARGUMENT_CONSTRAINTS, resolve_oracle
from .base import Agent, Learner, epoch_schedule, uniform_choice

__all__ = ["PolicyAgent"]

_SUM_TOLERANCE = 1e-9
"""How far from 1 a row of ``policy``'s probabilities may sum (rounding of a user's arithmetic)."""


def _default_privacy_model(oracle_name: str) -> str | None:
    """The first privacy model of the oracle registered as ``oracle_name`` (None if it cannot be found yet)."""
    try:
        return oracle_class(oracle_name).privacy_models[0]
    except ValueError:            # a plugin oracle not importable yet: the registration must say
        return None


class PolicyAgent(Agent):
    """An epoch agent written as one method: the law of each round's action given the estimate it plays on.

    Subclasses implement :meth:`policy` and may override :meth:`combine`; they declare hyperparameters in
    ``parameter_constraints`` (merged with the base's) with their defaults as class attributes, and the
    default oracle in ``default_oracle``, whose first privacy model is the class's ``privacy_model`` (what
    ``register_agent`` and a plugin's loader read) unless the class declares one.

    The base runs the rest: the epoch schedule, fixed before the run from public parameters; one oracle fit per
    epoch, turned into a release by the class's ``learner`` (:class:`~privbandit.agents.base.Learner`); the
    release appended to ``estimates`` and its ledger merged into the agent's at the epoch's first round.

    Parameters
    ----------
    oracle : Oracle or str, optional
        The regression oracle fitted once per epoch: an instance, or a registered name (``default_oracle``
        when omitted). Its privacy spec is the agent's.
    epsilon, delta, model, oracle_kwargs :
        Per-user privacy budget, privacy model and oracle hyperparameters, when the oracle is given by name.
    first_epoch, growth : int, float
        The epoch schedule (:func:`~privbandit.agents.epoch_schedule`; default the paper's doubling).
    **hyperparameters
        The subclass's declared hyperparameters (each defaults to the class attribute of its name).

    Attributes
    ----------
    estimates : list of Estimate
        The estimates released so far, oldest first.
    estimate : object
        ``combine(estimates)``, what :meth:`policy` is given; while it is None (before the first release by
        default) the agent plays uniformly at random.

    Examples
    --------
    >>> import numpy as np
    >>> from privbandit.agents import PolicyAgent
    >>> class Greedy(PolicyAgent):
    ...     default_oracle = "iw-regression-dp"
    ...     def policy(self, features, estimate):
    ...         best = np.argmax(estimate.mean(features), axis=1)
    ...         return np.eye(features.shape[1])[best]
    >>> Greedy(epsilon=1.0).privacy.label()
    'jdp(eps=1, delta=1e-05)'
    """

    default_oracle: ClassVar[str] = "ridge"
    privacy_model: ClassVar[str | None] = "none"
    uniforms_per_round: ClassVar[int] = 1
    parameter_constraints: ClassVar[ParameterConstraints] = {
        "oracle": ORACLE_ARGUMENT_CONSTRAINTS["oracle"], "first_epoch": [POSITIVE_INT],
        "growth": [Interval(numbers.Real, 1.0, float("inf"), closed="neither")], **ORACLE_ARGUMENT_CONSTRAINTS}
    learner: Learner = Learner()
    """How the fits become releases (:class:`~privbandit.agents.base.Learner`; each epoch's own fit by default)."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """Merge a subclass's ``parameter_constraints`` with its parent's (a subclass declares only its own)."""
        super().__init_subclass__(**kwargs)
        own = cls.__dict__.get("parameter_constraints", {})
        cls.parameter_constraints = {**cls.__mro__[1].parameter_constraints, **own}
        if "privacy_model" not in cls.__dict__:
            cls.privacy_model = _default_privacy_model(cls.default_oracle)

    def __init__(self, oracle: Oracle | str | None = None, *, epsilon: float | None = None,
                 delta: float | None = None, model: str | None = None, oracle_kwargs: dict[str, Any] | None = None,
                 first_epoch: int = 1, growth: float = 2.0, **hyperparameters: Any) -> None:
        resolved = resolve_oracle(self.default_oracle if oracle is None else oracle, epsilon=epsilon, delta=delta,
                                  model=model, oracle_kwargs=oracle_kwargs)
        super().__init__()
        self._store_parameters(oracle=resolved, first_epoch=first_epoch, growth=growth)
        declared = self.constructor_parameters()
        unknown = sorted(set(hyperparameters) - set(declared))
        if unknown:
            raise TypeError(f"{type(self).__name__} got unknown keyword argument(s) {unknown}; its hyperparameters "
                            f"are {list(self._hyperparameter_names())}")
        values = {}
        for name in self._hyperparameter_names():
            if name not in hyperparameters and declared[name].default is inspect.Parameter.empty:
                raise TypeError(f"{type(self).__name__} needs the keyword argument {name!r} (it has no default)")
            values[name] = hyperparameters.get(name, declared[name].default)
        self._store_parameters(**values)

    @classmethod
    def _hyperparameter_names(cls) -> tuple[str, ...]:
        """The subclass's declared hyperparameters: its constraints beyond the base's."""
        return tuple(n for n in cls.parameter_constraints if n not in PolicyAgent.parameter_constraints)

    @classmethod
    def constructor_parameters(cls) -> dict[str, inspect.Parameter]:
        """The base's keyword arguments, then each declared hyperparameter with its class attribute as default
        (a subclass whose ``__init__`` names a hyperparameter gives it that signature's default instead)."""
        out = super().constructor_parameters()
        for name in cls._hyperparameter_names():
            out.setdefault(name, inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY,
                                                   default=getattr(cls, name, inspect.Parameter.empty)))
        return out

    # -- what a subclass writes --------------------------------------------------------------------
    @abc.abstractmethod
    def policy(self, features: np.ndarray, estimate: Any) -> np.ndarray:
        """The law of the action of each of m rounds, given the estimate the agent plays on.

        Parameters
        ----------
        features : ndarray (m, K, d)
            The rounds' features (checked and clipped to the bound B); row i is round ``self.t + i + 1``.
        estimate : object
            What :meth:`combine` made of the released estimates (never None here).

        Returns
        -------
        ndarray (m, K)
            Non-negative probabilities, each row summing to 1.
        """

    def combine(self, estimates: Sequence[Estimate]) -> Any:
        """The estimate the policy plays on, from the estimates released so far (oldest first).

        Called once at the start of a run (with none) and once after each release. The default is the
        latest release, None before the first one (None means: play uniformly at random).

        Parameters
        ----------
        estimates : sequence of Estimate
            Every release of the run so far.
        """
        return estimates[-1] if estimates else None

    # -- the epoch machinery, from the two methods above -------------------------------------------
    @property
    def privacy(self) -> PrivacySpec:
        """The oracle's privacy spec."""
        return self.oracle.privacy

    @property
    def epoch_start(self) -> int:
        """First round of the current epoch."""
        return 0 if self.epoch == 0 else int(self.epoch_ends[self.epoch - 1])

    def _reset(self) -> None:
        spec = self._require_spec()
        self.epoch_ends = epoch_schedule(spec.horizon, first_epoch=self.first_epoch, growth=self.growth)
        self.epoch = 0
        self.estimates: list[Estimate] = []
        self.learning = self.learner.start(spec, self._fit_oracle())
        self._start_fit()
        self.estimate = self.combine(())

    def _start_fit(self) -> None:
        spec = self._require_spec()
        n = int(self.epoch_ends[self.epoch]) - self.epoch_start
        oracle = self.learner.fit_oracle(self.learning, self._fit_oracle())
        self.fit: EpochFit = oracle.start(n, dim=spec.dim, bound=spec.bound, link=spec.link,
                                          rng=self._fit_rng.spawn(1)[0])

    def _fit_oracle(self) -> Oracle:
        """The oracle the next epoch's fit starts with (``self.oracle`` by default).

        A subclass may configure it from the run's public spec (``self.spec``), earlier releases and public
        parameters only, e.g. a per-run confidence.
        """
        return self.oracle

    def _observe(self, x: np.ndarray, y: np.ndarray) -> None:
        self.learner.add(self.learning, self.fit, x, y)      # update has checked and clipped the rows
        if self.t + x.shape[0] == int(self.epoch_ends[self.epoch]):     # the rows complete the epoch
            estimate = self._release()
            self.ledger.extend(self.fit.ledger, offset=self.epoch_start)
            self.estimates.append(estimate)
            self.estimate = self.combine(tuple(self.estimates))
            self.epoch += 1
            if self.epoch < len(self.epoch_ends):
                self._start_fit()

    def _release(self) -> Estimate:
        """The estimate released at the end of the current epoch (the learner's)."""
        return self.learner.epoch_estimate(self.learning, self.fit)

    def _probabilities(self, features: np.ndarray) -> np.ndarray:
        m, k = features.shape[:2]
        if self.estimate is None:
            return np.full((m, k), 1.0 / k)
        p = np.asarray(self.policy(features, self.estimate), dtype=float)
        if p.shape != (m, k):
            raise ValueError(f"{type(self).__name__}.policy must return probabilities of shape (m, K) = ({m}, {k}), "
                             f"got shape {p.shape}")
        if not (np.all(p >= 0.0) and np.all(np.abs(p.sum(axis=1) - 1.0) <= _SUM_TOLERANCE)):
            raise ValueError(f"{type(self).__name__}.policy must return non-negative probabilities whose rows sum "
                             f"to 1 (within {_SUM_TOLERANCE:g}); got a row summing to "
                             f"{p.sum(axis=1)[np.argmax(np.abs(p.sum(axis=1) - 1.0))]!r} or a negative entry")
        return p

    def _choose(self, features: np.ndarray, uniforms: np.ndarray) -> np.ndarray:
        return uniform_choice(self._probabilities(features), uniforms[:, 0])

    def describe(self) -> dict:
        """Agent, privacy and oracle names."""
        return dict(super().describe(), oracle=self.oracle.name)
