"""The common epoch-batched interface of every regression oracle.

An oracle is a frozen dataclass: its privacy spec and hyperparameters. Once per epoch an agent calls
``oracle.start(n_rounds, dim=d, bound=B, link=nu, rng=...)`` and gets a fresh :class:`EpochFit`; it
feeds the epoch's rows with ``fit.add(features, rewards)`` (one or many rows, any number of times,
at most ``n_rounds`` in all) and ends with ``fit.result()``, an immutable :class:`Estimate`. No state
crosses epochs: each epoch's users are disjoint, so epochs compose in parallel.

Every fit owns a :class:`~privbandit.privacy.PrivacyLedger` whose record indices are the fit's rows
(0 .. n_rounds-1); agents shift them to global rounds. A fit is written on :class:`EpochFit` (central) or
:class:`LocalEpochFit` (local DP: raw rows never reach aggregation).

References
----------
Source paper, `alg:batch-cb-meta` (one oracle per epoch), `alg:batch-cb-JDP`.
"""

from __future__ import annotations

import abc
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

import numpy as np

from .._validation import (
    InstanceOf,
    IsCallable,
    ParameterConstraints,
    as_generator,
    check_array,
    check_int,
    check_parameters,
    check_positive,
    check_real,
    check_rows,
)
from ..links import Link, identity_link
from ..privacy import CentralMechanism, PrivacyLedger, PrivacySpec, release_recorded
from ..privacy.clipping import clip_features, clip_rewards
from ..privacy.mechanisms import MechanismEntry
from ..privacy.randomizers import LocalRandomizer

CONSTANTS: tuple[str, ...] = ("practical", "theory")
"""The two parameter regimes an oracle's ``constants`` chooses from (and LinUCB's ``radius``): the source's
constants (``"theory"``) or the calibrated ones (``"practical"``)."""
Constants = Literal["practical", "theory"]


def read_only(a: Any) -> np.ndarray:
    """A read-only float copy of ``a``."""
    a = np.array(a, dtype=float, copy=True)
    a.setflags(write=False)
    return a


def freeze_arrays(record: Any, *names: str) -> None:
    """Store each named field of the frozen dataclass ``record`` that is not None as a :func:`read_only` copy."""
    for name in names:
        if getattr(record, name) is not None:
            object.__setattr__(record, name, read_only(getattr(record, name)))


@dataclass(frozen=True)
class Estimate:
    """An immutable fitted model: mean nu(<phi, theta>) and a confidence radius b(phi) = c ||M phi||.

    Parameters
    ----------
    theta : ndarray (d,)
        The estimated parameter.
    link : Link
        The link nu (identity for linear models).
    width_matrix : ndarray (d, d)
        M in the radius on the linear predictor, |<phi, theta - theta*>| <= width_scale ||M phi||
        (e.g. lambda W for IW regression, V^{-1/2} for ridge).
    width_scale : float
        c >= 0 in the radius.
    info : dict
        Diagnostics (lambda, gamma, spectral residuals, ...), never needed to act.
    release : object, optional
        What the fit released, with the public parameters that go with it, for agents that post-process
        releases (an oracle-specific frozen record, e.g. :class:`~privbandit.oracles.iw_jdp.IWRelease`);
        None when the oracle exposes none. Public: a private oracle puts only released values and public
        parameters here.

    Notes
    -----
    ``width(features)`` is the radius on the *mean reward*: L_nu * c * ||M phi|| (the link's
    Lipschitz constant L_nu = 1 for the identity), as in `appdx:proof-JDP-gen-linear`.

    References
    ----------
    Source paper, `alg:batch-cb-meta` (the pair (f_hat_j, b_j)), `alg:plan`.
    """

    theta: np.ndarray
    link: Link
    width_matrix: np.ndarray
    width_scale: float
    info: dict = field(default_factory=dict, compare=False)
    release: Any = field(default=None, compare=False)

    def __post_init__(self) -> None:
        theta = check_array("theta", self.theta, ndim=1)
        d = theta.shape[0]
        object.__setattr__(self, "theta", read_only(theta))
        object.__setattr__(self, "width_matrix", read_only(check_array("width_matrix", self.width_matrix,
                                                                       shape=(d, d))))
        object.__setattr__(self, "width_scale", check_real("width_scale", self.width_scale, low=0.0))
        object.__setattr__(self, "info", dict(self.info))

    @property
    def dim(self) -> int:
        """The feature dimension d."""
        return self.theta.shape[0]

    def _features(self, features: Any) -> np.ndarray:
        """``features`` as a finite float array of shape (..., d), or a ValueError naming what is wrong."""
        f = check_array("features", features)               # finite floats
        if f.ndim == 0 or f.shape[-1] != self.dim:
            raise ValueError(f"features must have shape (..., {self.dim}) (the estimate's dimension d), "
                             f"got shape {f.shape}")
        return f

    def predictor(self, features: np.ndarray) -> np.ndarray:
        """<phi, theta> for features of shape (..., d)."""
        return self._features(features) @ self.theta

    def mean(self, features: np.ndarray) -> np.ndarray:
        """Predicted mean reward nu(<phi, theta>), shape features.shape[:-1]."""
        return self.link(self.predictor(features))

    def width(self, features: np.ndarray) -> np.ndarray:
        """Confidence radius of the mean reward, L_nu * c * ||M phi||, shape features.shape[:-1].

        Raises
        ------
        ValueError
            If ``features`` is not of shape (..., d) or has a NaN or inf entry.
        """
        f = self._features(features)
        return self.link.lipschitz * self.width_scale * np.linalg.norm(f @ self.width_matrix.T, axis=-1)

    def bounds(self, features: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(mean - width, mean + width)."""
        m, w = self.mean(features), self.width(features)
        return m - w, m + w


def two_sided_quantile(confidence: float) -> float:
    """z with P(|N(0, 1)| > z) = ``confidence``: the Gaussian width constant of a (1 - confidence) interval.

    The upper-tail quantile at confidence/2, ``-ndtri(q)`` (``norm.isf``), stays accurate for tiny confidences,
    where ``norm.ppf(1 - confidence/2)`` rounds 1 - confidence/2 to 1 and returns inf.
    """
    from scipy import special

    return float(-special.ndtri(confidence / 2.0))


def stage_sizes_split(n_rounds: int, fractions: Sequence[float]) -> tuple[int, ...]:
    """Split ``n_rounds`` into consecutive stages with the given fractions (sizes sum to n_rounds).

    Every stage gets its floor share and the remainder goes to the last stage.

    Parameters
    ----------
    n_rounds : int
        The rounds to split.
    fractions : sequence of float
        The stages' shares (non-negative, summing to 1).
    """
    sizes = [int(np.floor(n_rounds * f)) for f in fractions[:-1]]
    sizes.append(n_rounds - sum(sizes))
    return tuple(sizes)


MECHANISM_CONSTRAINTS: ParameterConstraints = {"mechanism": [None, IsCallable("(mechanism) -> mechanism")]}
"""The audit seam ``mechanism=`` of an oracle, and of the agents that build their own noise."""


def hooked(hook: Any, mechanism: Any) -> Any:
    """``mechanism`` (a calibrated central mechanism or local randomizer), or what the seam ``hook`` returns for it
    (``hook`` None: unchanged): the one place noise is handed to the audit seam."""
    return mechanism if hook is None else hook(mechanism)


class EpochFit(abc.ABC):
    """One epoch's fit: rows in (``add``), an :class:`Estimate` out (``result``), releases in ``ledger``.

    ``add`` checks rows and clips them to the bounds (features to B, rewards to [-1, 1]). Subclasses set
    ``stage_sizes`` (consecutive row ranges; one stage of n_rounds by default) in ``__init__`` and implement
    ``_add_rows(stage, start, x, y)``, which receives the rows in stage-aligned pieces, ``_close_stage(stage)``,
    called exactly once when a stage is full (or at ``result()``), and ``_estimate``.

    Parameters
    ----------
    oracle : Oracle
        The configuration.
    n_rounds, dim, bound, link, rng
        As :meth:`Oracle.start` checks them (``rng`` a Generator); rows are clipped to ||phi|| <= B before any
        mechanism.
    """

    def __init__(self, oracle: Oracle, n_rounds: int, dim: int, bound: float, link: Link,
                 rng: np.random.Generator) -> None:
        self.oracle = oracle
        self.n_rounds = n_rounds
        self.dim = dim
        self.bound = bound
        self.link = link
        self.rng = rng
        self.ledger = PrivacyLedger()
        self.stage_sizes: tuple[int, ...] = (n_rounds,)
        self.n_seen = 0
        self._closed = 0
        self._result: Estimate | None = None

    @property
    def stage_starts(self) -> np.ndarray:
        """First row index of each stage, plus n_rounds at the end."""
        return np.concatenate([[0], np.cumsum(self.stage_sizes)])

    def add(self, features: np.ndarray, rewards: np.ndarray) -> None:
        """Add one row (features (d,), reward scalar) or many (features (m, d), rewards (m,)).

        Raises
        ------
        ValueError
            On NaN/inf, wrong shapes, more rows than ``n_rounds``, or after ``result()``.
        """
        self._check_open()
        x, y = check_rows(features, rewards, self.dim)
        self._check_room(x.shape[0])
        if x.shape[0] == 0:
            return
        self.add_clipped(clip_features(x, self.bound), clip_rewards(y))

    def _check_open(self) -> None:
        if self._result is not None:
            raise RuntimeError("this epoch's fit is finished (result() was called); start a new one")

    def _check_room(self, m: int) -> None:
        if self.n_seen + m > self.n_rounds:
            raise ValueError(f"this fit was started for n_rounds={self.n_rounds} rows; adding {m} more to "
                             f"{self.n_seen} would exceed it")

    def add_clipped(self, x: np.ndarray, y: np.ndarray) -> None:
        """``add`` for rows already checked and clipped: float64 features (m, d) with ||phi|| <= ``bound``
        and rewards (m,) in [-1, 1], m >= 1 (e.g. rows that passed ``Agent.update``, whose bound B is the
        fit's, or an agent's transform of them such as the GLM working rows). Skips the shape checks and the
        clipping, which would return these rows unchanged; still refuses non-finite values (before any of
        the fit's mechanisms sees them), a finished fit or rows beyond ``n_rounds``.

        Parameters
        ----------
        x : ndarray (m, d)
            Checked, clipped feature rows.
        y : ndarray (m,)
            Checked, clipped rewards.

        Raises
        ------
        ValueError
            On NaN or inf in ``x`` or ``y``, or more rows than ``n_rounds``.
        """
        self._check_open()
        # a finite sum has no NaN or inf in it (the common case, one cheap test); else look at every value
        if not math.isfinite(x.sum() + y.sum()) and not (np.isfinite(x).all() and np.isfinite(y).all()):
            raise ValueError("add_clipped got NaN or inf in its rows: a fit takes finite, clipped rows only "
                             "(the rows' transform before the fit must keep them finite)")
        m = x.shape[0]
        self._check_room(m)
        starts = self.stage_starts.tolist()
        pos = 0
        while pos < m:
            row = self.n_seen + pos
            stage = self._closed            # the first stage not yet full holds the next row
            while starts[stage + 1] <= row:     # (only empty stages are skipped here)
                stage += 1
            take = min(m - pos, starts[stage + 1] - row)
            self._add_rows(stage, row, x[pos:pos + take], y[pos:pos + take])
            pos += take
            if row + take == starts[stage + 1]:
                self._close_through(stage)
        self.n_seen += m

    def _close_through(self, stage: int) -> None:
        while self._closed <= stage:
            self._close_stage(self._closed)
            self._closed += 1

    def result(self) -> Estimate:
        """Close the remaining stages and return the epoch's :class:`Estimate` (cached; idempotent)."""
        if self._result is None:
            self._close_through(len(self.stage_sizes) - 1)
            self._result = self._estimate()
        return self._result

    @abc.abstractmethod
    def _add_rows(self, stage: int, start: int, x: np.ndarray, y: np.ndarray) -> None:
        """Consume clipped rows that all belong to ``stage``; ``start`` is the index of row ``x[0]``."""

    def _close_stage(self, stage: int) -> None:  # noqa: B027 - optional hook
        """Release what ``stage`` accumulated (called once per stage, in order)."""

    @abc.abstractmethod
    def _estimate(self) -> Estimate:
        """Build the Estimate after every stage is closed."""

    def stage_range(self, stage: int) -> tuple[int, int]:
        """Row range [start, stop) of a stage (the records its releases touch)."""
        s = self.stage_starts
        return int(s[stage]), int(s[stage + 1])

    def _release(self, mechanism: CentralMechanism, values: np.ndarray, start: int, stop: int,
                 label: str) -> np.ndarray:
        """Release a statistic of the rows [start, stop) through ``mechanism`` and record it in ``ledger``.

        Every central release of a fit goes through here (noise from ``self.rng``), so none can miss the
        ledger; ``label`` is prefixed with the oracle's name. The local counterpart is
        :meth:`LocalEpochFit._add_rows`.
        """
        return release_recorded(self.ledger, self.hooked(mechanism), values, self.rng, start, stop,
                                f"{self.oracle.name} {label}")

    def hooked(self, mechanism: Any) -> Any:
        """``mechanism`` (a calibrated central mechanism or a local randomizer the fit built), or what the
        oracle's ``mechanism`` hook returns for it: the one place a fit hands its noise to the hook."""
        return hooked(self.oracle.mechanism, mechanism)


class LocalEpochFit(EpochFit):
    """A local-DP fit: each row is randomized in ``add``; aggregation sees only randomized outputs.

    Subclasses implement ``_randomizer(stage)`` (a :class:`~privbandit.privacy.LocalRandomizer` built from
    public parameters and earlier releases only; called once per stage, when its first rows arrive) and
    ``_absorb(stage, outputs)``, and may implement ``_close_stage``; they must not override ``_add_rows``.

    References
    ----------
    Source paper, `def:LDP`.
    """

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self._entry_cache: tuple[int, LocalRandomizer, MechanismEntry, str] | None = None   # one per stage

    def _add_rows(self, stage: int, start: int, x: np.ndarray, y: np.ndarray) -> None:
        cached = self._entry_cache      # the stage's randomizer, ledger entry and label, built at its first rows
        if cached is None or cached[0] != stage:
            randomizer = self.hooked(self._randomizer(stage))
            cached = self._entry_cache = (stage, randomizer, randomizer.ledger_entry(),
                                          f"{self.oracle.name} stage {stage}")
        outputs = cached[1](x, y, self.rng)
        self.ledger.record(start, start + outputs.shape[0], cached[2], kind="local", label=cached[3])
        self._absorb(stage, outputs)

    @abc.abstractmethod
    def _randomizer(self, stage: int) -> LocalRandomizer:
        """The channel of ``stage``, fixed from public parameters and earlier stages' releases (called once
        per stage, when its first rows arrive: every earlier stage is closed by then)."""

    @abc.abstractmethod
    def _absorb(self, stage: int, outputs: np.ndarray) -> None:
        """Aggregate randomized outputs (m, ...) of ``stage``; never sees raw rows."""


class SummingLocalFit(LocalEpochFit):
    """A local fit whose server keeps only the sum and the count of the randomized outputs.

    Subclasses build ``self._randomizer_`` (a :class:`~privbandit.privacy.LocalRandomizer`; or override
    ``_randomizer`` for one per stage) and the zero ``self._sum`` of the output's shape in ``__init__``, and
    implement ``_estimate`` from ``self._sum`` and ``self._count``.
    """

    _randomizer_: LocalRandomizer
    _sum: np.ndarray
    _count: int = 0

    def _randomizer(self, stage: int) -> LocalRandomizer:
        return self._randomizer_

    def _absorb(self, stage: int, outputs: np.ndarray) -> None:
        self._sum += outputs.sum(axis=0)
        self._count += outputs.shape[0]


@dataclass(frozen=True)
class Oracle(abc.ABC):
    """Base class of oracle configurations (frozen dataclasses).

    Subclasses add their hyperparameters as fields, declare each field's constraints in
    ``parameter_constraints`` (``{**Base.parameter_constraints, "lam": [POSITIVE], ...}``, checked by
    ``__post_init__`` in one place; a subclass's ``__post_init__`` adds only checks that tie fields together),
    and set ``name``, ``privacy_models`` and ``fit_class``.

    Parameters
    ----------
    privacy : PrivacySpec
        The per-user budget and the model.
    mechanism : callable, optional (keyword only)
        The seam through which a test, or a user auditing a mechanism of their own, hands the oracle its
        noise. Called with each calibrated central mechanism (e.g. a
        :class:`~privbandit.privacy.GaussianMechanism` at the release's sensitivity and multiplier) or local
        randomizer (:class:`~privbandit.privacy.LocalRandomizer`) a fit builds, it returns the object that
        releases in its place (``release(values, rng)``, or ``randomizer(x, y, rng)``, and
        ``ledger_entry()``, which the ledger records). None (the default): the calibrated ones, unchanged.
        Every release of the library's oracles goes through it; it is not a hyperparameter (the catalogue
        leaves it out). The privacy of an oracle given one is that of the objects it returns: an audit's planted
        twin returns one that adds less noise than the ledger entry it reports.
    """

    privacy: PrivacySpec = field(default_factory=PrivacySpec.none)
    mechanism: Callable[[Any], Any] | None = field(default=None, kw_only=True, repr=False)

    name: ClassVar[str] = ""
    privacy_models: ClassVar[tuple[str, ...]] = ("none",)
    fit_class: ClassVar[type[EpochFit]]
    parameter_constraints: ClassVar[ParameterConstraints] = {
        "privacy": [InstanceOf(PrivacySpec)], **MECHANISM_CONSTRAINTS}

    def __post_init__(self) -> None:
        check_parameters(type(self), {name: getattr(self, name) for name in self.parameter_constraints},
                         self.parameter_constraints)
        if self.privacy.model not in self.privacy_models:
            raise ValueError(f"oracle {self.name!r} supports privacy models {self.privacy_models}, "
                             f"got {self.privacy.model!r}")

    def start(self, n_rounds: int, *, dim: int, bound: float = 1.0, link: Link | None = None,
              rng: Any = None) -> EpochFit:
        """Begin one epoch's fit for at most ``n_rounds`` rows of dimension ``dim``.

        Parameters
        ----------
        n_rounds : int
            The epoch's length (>= 1): stage sizes and noise calibration depend on it.
        dim : int
            Feature dimension d >= 1.
        bound : float
            Feature bound B > 0.
        link : Link, optional
            The GLM link (identity by default).
        rng : int, Generator or SeedSequence, optional
            The fit's randomness.
        """
        n_rounds = check_int("n_rounds", n_rounds, low=1)
        dim = check_int("dim", dim, low=1)
        bound = check_positive("bound", bound)
        return self.fit_class(self, n_rounds, dim, bound, link or identity_link(), as_generator(rng))

    def fit(self, features: np.ndarray, rewards: np.ndarray, *, bound: float = 1.0, link: Link | None = None,
            rng: Any = None) -> Estimate:
        """Fit on a whole dataset at once: ``start(len(X))``, ``add(X, y)``, ``result()``."""
        x, y = check_rows(features, rewards)
        fit = self.start(x.shape[0], dim=x.shape[1], bound=bound, link=link, rng=rng)
        fit.add(x, y)
        return fit.result()
