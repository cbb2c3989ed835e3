"""Record every noisy release of a run, or replay a recorded run's releases in another: :class:`ReleaseTape`.

Every privbandit release, central (:func:`~privbandit.privacy.release_recorded`) or local (inside a
:class:`~privbandit.privacy.LocalRandomizer`), ends in the ``release`` method of a mechanism class
(:class:`~privbandit.privacy.GaussianMechanism`, :class:`~privbandit.privacy.SymmetricGaussianMechanism`,
:class:`~privbandit.privacy.LaplaceMechanism`, :class:`~privbandit.privacy.L2BallChannel` and their
subclasses). While a tape is open those methods are wrapped: each release's mechanism, exact (pre-noise)
input and noisy output are recorded, in order. A tape opened with ``replay=other`` hands back ``other``'s
outputs instead, release by release.

That is the conditioning of adaptive composition: run A on data D records its releases; run B on a
neighbour D' replays them, so B sees exactly A's released history. Then

- every release's exact input may differ between A and B by at most the mechanism's sensitivity, and
- anything that may depend on released values only (a private :class:`~privbandit.oracles.Estimate`, the
  other users' actions of a private agent) must be the same in A and B.

The tests of release sensitivity and the contract checkers (:func:`privbandit.oracles.check_oracle`,
:func:`privbandit.agents.check_agent`) are built on it.

The tape patches the mechanism classes for the whole process while it is open: do not release from other
threads meanwhile. A release drawn elsewhere (noise not from a privbandit mechanism) is not seen.

References
----------
Source paper, `def:JDP-interactive`, `def:JDP`, `def:LDP`; adaptive composition (Dwork & Roth 2014, 3.5).
"""

from __future__ import annotations

from collections.abc import Callable
from types import TracebackType
from typing import Any

import numpy as np

from .mechanisms import GaussianMechanism, L2BallChannel, LaplaceMechanism

__all__ = ["ReleaseTape", "ReplayMismatch", "mechanism_classes", "sensitivity_ratio"]

ROOTS: tuple[type, ...] = (GaussianMechanism, LaplaceMechanism, L2BallChannel)
"""The mechanism families whose ``release`` (and every subclass's own ``release``) a tape wraps."""


class ReplayMismatch(RuntimeError):
    """A replaying run asked for a release the recorded run did not make (one more, or another shape)."""


def mechanism_classes() -> tuple[type, ...]:
    """Every class of :data:`ROOTS` or below them (subclasses defined so far) that defines its own ``release``."""
    seen: list[type] = []
    stack = list(ROOTS)
    while stack:
        cls = stack.pop()
        if cls in seen:
            continue
        seen.append(cls)
        stack.extend(cls.__subclasses__())
    return tuple(c for c in seen if "release" in c.__dict__)


def sensitivity_ratio(mechanism: Any, a: Any, b: Any, *, local: bool = False) -> float:
    """How far one release's exact input moved between two runs, in units of the mechanism's sensitivity.

    The distance is measured in the mechanism's norm: L1 for a
    :class:`~privbandit.privacy.LaplaceMechanism`, L2 (Frobenius for matrices) otherwise; the sensitivity is
    the declared ``sensitivity``, or the diameter 2 r of an :class:`~privbandit.privacy.L2BallChannel`'s ball
    (whose inputs must lie in it). A ratio above 1 means the release is noisier on paper than in fact: the
    declared sensitivity does not cover the change.

    Parameters
    ----------
    mechanism : GaussianMechanism, SymmetricGaussianMechanism, LaplaceMechanism or L2BallChannel
    a, b : array_like
        The release's exact input in the two runs (same shape).
    local : bool
        A local release: rows are records, each privatized by itself, and at most one may change (one
        record's data); the ratio is that row's.

    Returns
    -------
    float
        The ratio; inf if the shapes differ, if a local release changed more than one row, or if an input
        leaves an L2-ball channel's ball.

    References
    ----------
    Source paper, `def:Guassian-channel`, `def:LDP`.
    """
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a.shape != b.shape:
        return float("inf")
    laplace, ball = isinstance(mechanism, LaplaceMechanism), isinstance(mechanism, L2BallChannel)
    scale = 2.0 * mechanism.radius if ball else float(mechanism.sensitivity)
    rows_a, rows_b = (a.reshape(a.shape[0], -1), b.reshape(b.shape[0], -1)) if local else (a.ravel(), b.ravel())
    if ball and max(np.linalg.norm(rows_a, axis=-1).max(initial=0.0),
                    np.linalg.norm(rows_b, axis=-1).max(initial=0.0)) > mechanism.radius * (1 + 1e-9):
        return float("inf")
    diff = rows_a - rows_b
    if local:
        changed = np.flatnonzero(np.any(diff != 0, axis=1))
        if changed.size > 1:
            return float("inf")
        diff = diff[changed[0]] if changed.size else np.zeros(diff.shape[1])
    dist = np.abs(diff).sum() if laplace else np.linalg.norm(diff)
    return float(dist) / scale


class ReleaseTape:
    """Record the releases of everything run inside ``with tape:``, or replay another tape's outputs.

    Parameters
    ----------
    replay : ReleaseTape, optional
        A closed tape: release k inside this one returns ``replay.outputs[k]`` (the mechanism still draws
        its noise, so the random generators advance as in the recorded run, and the draw is discarded).

    Attributes
    ----------
    mechanisms : list
        The mechanism of each release, in order.
    inputs : list of ndarray
        The exact statistic each release was given.
    outputs : list of ndarray
        What each release returned (the replayed value when replaying).

    Raises
    ------
    ReplayMismatch
        Inside a replaying tape, at a release beyond the recorded ones or of another shape.

    Examples
    --------
    >>> import numpy as np
    >>> from privbandit.privacy import GaussianMechanism
    >>> from privbandit.privacy.replay import ReleaseTape
    >>> mech = GaussianMechanism(sensitivity=1.0, sigma=1.0)
    >>> with ReleaseTape() as a:
    ...     first = mech.release(np.zeros(2), rng=0)
    >>> with ReleaseTape(replay=a) as b:
    ...     second = mech.release(np.ones(2), rng=1)
    >>> bool(np.array_equal(first, second)), b.inputs[0].tolist()
    (True, [1.0, 1.0])
    """

    def __init__(self, replay: ReleaseTape | None = None) -> None:
        if replay is not None and not isinstance(replay, ReleaseTape):
            raise TypeError(f"replay must be a ReleaseTape, got {type(replay).__name__}")
        self.replay = replay
        self.mechanisms: list[Any] = []
        self.inputs: list[np.ndarray] = []
        self.outputs: list[np.ndarray] = []
        self._patched: list[tuple[type, Callable]] = []
        self._depth = 0

    def __len__(self) -> int:
        return len(self.outputs)

    def __enter__(self) -> ReleaseTape:
        if self._patched:
            raise RuntimeError("this tape is already open")
        for cls in mechanism_classes():
            original = cls.__dict__["release"]
            self._patched.append((cls, original))
            cls.release = self._wrap(original)
        return self

    def __exit__(self, exc_type: type | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        while self._patched:
            cls, original = self._patched.pop()
            cls.release = original

    def _wrap(self, original: Callable) -> Callable:
        tape = self

        def release(mech: Any, values: Any, rng: Any = None) -> np.ndarray:
            if tape._depth:                    # a mechanism releasing through another: one release
                return original(mech, values, rng)
            tape._depth += 1
            try:
                out = np.array(original(mech, values, rng))
            finally:
                tape._depth -= 1
            return tape._record(mech, values, out)

        return release

    def _record(self, mech: Any, values: Any, out: np.ndarray) -> np.ndarray:
        k = len(self.outputs)
        if self.replay is not None:
            if k >= len(self.replay.outputs):
                raise ReplayMismatch(f"release {k} has no recorded counterpart (the recorded run made "
                                     f"{len(self.replay.outputs)})")
            recorded = self.replay.outputs[k]
            if recorded.shape != out.shape:
                raise ReplayMismatch(f"release {k} has shape {out.shape}; the recorded one had {recorded.shape}")
            out = recorded.copy()
        self.mechanisms.append(mech)
        self.inputs.append(np.array(values, dtype=float))
        self.outputs.append(out.copy())
        return out
