"""Argument checks shared by every module.

Each check raises :class:`ValueError` (or :class:`TypeError` for a wrong type) whose message names the
argument and the allowed range, so that bad input never turns into a silent NaN deep inside numpy.
"""

from __future__ import annotations

import abc
import math
import numbers
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np


def as_generator(rng: Any = None) -> np.random.Generator:
    """Return a :class:`numpy.random.Generator` from a seed, a SeedSequence or a Generator (SPEC 7): ``None``
    gives fresh OS entropy; a Generator is returned as is (not copied)."""
    if isinstance(rng, np.random.Generator):
        return rng
    if isinstance(rng, (bool, np.bool_)):
        raise TypeError(f"rng must be a seed, a SeedSequence or a numpy Generator, got {rng!r}")
    if rng is None or isinstance(rng, (numbers.Integral, np.random.SeedSequence)):
        if isinstance(rng, numbers.Integral) and rng < 0:
            raise ValueError(f"rng must be a non-negative seed, got {rng}")
        return np.random.default_rng(rng)
    raise TypeError(f"rng must be a seed, a SeedSequence or a numpy Generator, got {type(rng).__name__}")


def check_real(name: str, value: Any, *, low: float | None = None, high: float | None = None,
               low_open: bool = False, high_open: bool = False) -> float:
    """Return ``value`` as a finite float in the interval from ``low`` to ``high`` (None: unbounded; the ends
    excluded where ``low_open``, ``high_open``), or raise ValueError naming ``name``."""
    # a Python float is a real number: no ABC look-up on the common path
    if type(value) is not float and (isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real)):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__}")
    v = float(value)
    bad_low = low is not None and (v < low or (low_open and v == low))
    bad_high = high is not None and (v > high or (high_open and v == high))
    if math.isfinite(v) and not (bad_low or bad_high):
        return v                           # the message below is built only for a value it refuses
    lo = "(" if low_open else "["
    hi = ")" if high_open else "]"
    interval = f"{lo}{'-inf' if low is None else low}, {'inf' if high is None else high}{hi}"
    if math.isnan(v):
        raise ValueError(f"{name} must be a number in {interval}, got nan")
    if bad_low or bad_high or (math.isinf(v) and not (low is None or high is None)):
        raise ValueError(f"{name} must be in {interval}, got {value!r}")
    raise ValueError(f"{name} must be finite, got {value!r}")


def check_positive(name: str, value: Any) -> float:
    """Return ``value`` as a finite float > 0, or raise ValueError naming ``name``."""
    return check_real(name, value, low=0.0, low_open=True)


def check_choice(name: str, value: Any, choices: tuple | list) -> Any:
    """Return ``value`` if it is one of ``choices``, else raise ValueError naming ``name`` and the choices."""
    if value not in tuple(choices):
        raise ValueError(f"{name} must be one of {tuple(choices)}, got {value!r}")
    return value


def check_int(name: str, value: Any, *, low: int = 0, high: int | None = None) -> int:
    """Return ``value`` as an int in ``[low, high]``, or raise (TypeError for non-integers)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {type(value).__name__}")
    v = int(value)
    if v < low or (high is not None and v > high):
        raise ValueError(f"{name} must be an integer in [{low}, {'inf' if high is None else high}], got {v}")
    return v


def check_array(name: str, value: Any, *, ndim: int | tuple[int, ...] | None = None,
                shape: tuple[int | None, ...] | None = None, allow_empty: bool = True,
                finite: bool = True) -> np.ndarray:
    """Return ``value`` as a finite float64 array with one of the numbers of dimensions ``ndim``, of ``shape``
    (``None`` entries match any length) and non-empty unless ``allow_empty``, or raise ValueError naming ``name``.
    ``finite=False`` leaves the finiteness test to the caller (the clipping functions, whose bound test is one)."""
    try:
        arr = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be an array of real numbers: {exc}") from None
    if ndim is not None:
        allowed = (ndim,) if isinstance(ndim, int) else tuple(ndim)
        if arr.ndim not in allowed:
            raise ValueError(f"{name} must have {' or '.join(map(str, allowed))} dimensions, got shape {arr.shape}")
    if shape is not None and not _matches(arr.shape, shape):
        want = "(" + ", ".join("*" if s is None else str(s) for s in shape) + ")"
        raise ValueError(f"{name} must have shape {want}, got {arr.shape}")
    if not allow_empty and arr.size == 0:
        raise ValueError(f"{name} must not be empty")
    if finite:
        check_finite(name, arr)
    return arr


def _matches(actual: tuple[int, ...], shape: tuple[int | None, ...]) -> bool:
    """Whether ``actual`` has the length of ``shape`` and its lengths wherever ``shape`` is not None."""
    if len(actual) != len(shape):
        return False
    for want, got in zip(shape, actual):  # noqa: SIM110 - a loop, no generator: it runs on every act
        if want is not None and want != got:
            return False
    return True


def check_finite(name: str, arr: np.ndarray) -> None:
    """Raise ValueError naming ``name`` if the float array ``arr`` holds NaN or inf."""
    if np.count_nonzero(np.isfinite(arr)) != arr.size:
        raise ValueError(f"{name} must contain only finite values (no NaN or inf)")


def check_weights(name: str, value: Any, n: int) -> np.ndarray:
    """``value`` as the probabilities of ``n`` atoms (finite, non-negative with a positive sum, divided by that
    sum), or a ValueError naming ``name``."""
    w = check_array(name, value, shape=(n,))
    if np.any(w < 0) or w.sum() <= 0:
        raise ValueError(f"{name} must be non-negative with a positive sum")
    return w / w.sum()


def check_rows(features: Any, rewards: Any, dim: int | None = None, *,
               finite: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """Check a batch of regression rows: features (m, d) (or (d,) for one row) and rewards (m,) (or scalar);
    returns them as arrays (m, d) and (m,). ``finite=False`` as for :func:`check_array`."""
    x = check_array("features", features, ndim=(1, 2), finite=finite)
    y = check_array("rewards", rewards, ndim=(0, 1), finite=finite)
    if x.ndim == 1:
        x = x[None, :]
    if y.ndim == 0:
        y = y.reshape(1)
    if dim is not None and x.shape[1] != dim:
        raise ValueError(f"features must have {dim} columns (the dimension d), got shape {x.shape}")
    if y.shape[0] != x.shape[0]:
        raise ValueError(f"rewards must have one entry per feature row: got {y.shape[0]} rewards for {x.shape[0]} rows")
    return x, y


def check_bool(name: str, value: Any) -> bool:
    """Return ``value`` as a bool (a Python or numpy bool), or raise TypeError naming ``name``."""
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be a bool, got {type(value).__name__}")
    return bool(value)


# -- declared parameter constraints (privbandit.constraints): each delegates to a check_* helper above ----------


class Constraint(abc.ABC):
    """One set of allowed values of a parameter (an entry of a ``parameter_constraints`` list)."""

    @abc.abstractmethod
    def check(self, name: str, value: Any) -> Any:
        """Return ``value`` checked (converted as the check_* helper converts it), or raise naming ``name``."""

    @abc.abstractmethod
    def invalid_examples(self) -> tuple[Any, ...]:
        """Values outside the set (each one refused by :meth:`check`), for the common tests."""

    @abc.abstractmethod
    def valid_example(self) -> Any:
        """A value inside the set, for the common tests."""


class Interval(Constraint):
    """A real number (:func:`check_real`) or an integer (:func:`check_int`) between ``left`` and ``right``.

    Parameters
    ----------
    kind : numbers.Real or numbers.Integral
        The type of the values.
    left, right : float, int or None
        The ends (None for unbounded; an unbounded real must still be finite).
    closed : {"both", "left", "right", "neither"}
        Which ends belong to the interval (an integer interval is closed at its finite ends).
    """

    def __init__(self, kind: type, left: float | None, right: float | None, *, closed: str = "both") -> None:
        check_choice("kind", kind, (numbers.Real, numbers.Integral))
        check_choice("closed", closed, ("both", "left", "right", "neither"))
        if kind is numbers.Integral and (left is None or closed != "both"):
            raise ValueError("an integer Interval needs a finite left end and closed='both'")
        self.kind, self.left, self.right, self.closed = kind, left, right, closed

    def check(self, name: str, value: Any) -> Any:
        if self.kind is numbers.Integral:
            return check_int(name, value, low=self.left, high=self.right)  # type: ignore[arg-type]
        return check_real(name, value, low=self.left, high=self.right,
                          low_open=self.closed in ("right", "neither"), high_open=self.closed in ("left", "neither"))

    def invalid_examples(self) -> tuple[Any, ...]:
        if self.kind is numbers.Integral:
            out: list[Any] = ["1", 2.5, True, self.left - 1]
            return (*out, self.right + 1) if self.right is not None else tuple(out)
        out = ["1", True, math.nan, math.inf, -math.inf]
        for end, open_, step in ((self.left, self.closed in ("right", "neither"), -1.0),
                                 (self.right, self.closed in ("left", "neither"), 1.0)):
            if end is not None and math.isfinite(end):
                out.append(end if open_ else end + step)
        return tuple(out)                  # check_real refuses inf everywhere ("must be finite" when unbounded)

    def valid_example(self) -> Any:
        if self.kind is numbers.Integral:
            return self.left
        lo = -1.0 if self.left is None else self.left
        hi = lo + 2.0 if self.right is None or math.isinf(self.right) else self.right
        return (lo + hi) / 2.0

    def __repr__(self) -> str:
        return f"Interval({self.kind.__name__}, {self.left}, {self.right}, closed={self.closed!r})"


class Options(Constraint):
    """One of a tuple of allowed values (:func:`check_choice`)."""

    def __init__(self, options: tuple) -> None:
        self.options = tuple(options)

    def check(self, name: str, value: Any) -> Any:
        return check_choice(name, value, self.options)

    def invalid_examples(self) -> tuple[Any, ...]:
        return ("no-such-option", 3)

    def valid_example(self) -> Any:
        return self.options[0]

    def __repr__(self) -> str:
        return f"Options({self.options})"


class Boolean(Constraint):
    """A bool (:func:`check_bool`); numpy bools are accepted and converted."""

    def check(self, name: str, value: Any) -> bool:
        return check_bool(name, value)

    def invalid_examples(self) -> tuple[Any, ...]:
        return (1, "yes", None)

    def valid_example(self) -> bool:
        return True

    def __repr__(self) -> str:
        return "Boolean()"


class InstanceOf(Constraint):
    """An instance of ``types``; the TypeError says ``"<name> must be <description>"``.

    Parameters
    ----------
    types : type or tuple of type
        The allowed types.
    description : str, optional
        What the value must be, e.g. ``"an Oracle or a registered oracle name"`` (``"a <Type>"`` by default).
    example : callable, optional
        Builds a value inside (for the common tests); without it the tests use the argument's default.
    """

    def __init__(self, types: type | tuple[type, ...], description: str | None = None,
                 example: Callable[[], Any] | None = None) -> None:
        self.types = types if isinstance(types, tuple) else (types,)
        self.description = description or f"a {self.types[0].__name__}"
        self._example = example

    def check(self, name: str, value: Any) -> Any:
        if not isinstance(value, self.types):
            raise TypeError(f"{name} must be {self.description}, got {type(value).__name__}")
        return value

    def invalid_examples(self) -> tuple[Any, ...]:
        return (object(),)

    def valid_example(self) -> Any:
        return None if self._example is None else self._example()

    def __repr__(self) -> str:
        return f"InstanceOf({self.description!r})"


class IsCallable(Constraint):
    """A callable; the TypeError says ``"<name> must be a callable <signature>"``."""

    def __init__(self, signature: str) -> None:
        self.signature = signature

    def check(self, name: str, value: Any) -> Any:
        if not callable(value):
            raise TypeError(f"{name} must be a callable {self.signature}")
        return value

    def invalid_examples(self) -> tuple[Any, ...]:
        return (0.1, "f")

    def valid_example(self) -> Any:
        return _constant_one

    def __repr__(self) -> str:
        return f"IsCallable({self.signature!r})"


def _constant_one(*args: Any) -> float:
    return 1.0


class Array(Constraint):
    """A finite float array (:func:`check_array`), returned as a float64 ndarray."""

    def __init__(self, *, ndim: int | None = None, allow_empty: bool = True) -> None:
        self.ndim, self.allow_empty = ndim, allow_empty

    def check(self, name: str, value: Any) -> np.ndarray:
        return check_array(name, value, ndim=self.ndim, allow_empty=self.allow_empty)

    def invalid_examples(self) -> tuple[Any, ...]:
        out: list[Any] = ["x", np.full((2,) * (self.ndim or 1), np.nan)]
        if self.ndim is not None:
            out.append(np.ones((2,) * (self.ndim + 1)))
        if not self.allow_empty:
            out.append(np.zeros((0,) * (self.ndim or 1)))
        return tuple(out)

    def valid_example(self) -> np.ndarray:
        return np.eye(2) if self.ndim in (None, 2) else np.ones((2,) * self.ndim)

    def __repr__(self) -> str:
        return f"Array(ndim={self.ndim}, allow_empty={self.allow_empty})"


ParameterConstraints = Mapping[str, Sequence["Constraint | None"]]
"""A ``parameter_constraints`` table: argument name -> the constraints one of which its value must meet."""

POSITIVE = Interval(numbers.Real, 0.0, None, closed="right")
"""A finite real > 0 (:func:`check_positive`, :func:`privbandit.privacy.check_epsilon`)."""
UNIT_OPEN = Interval(numbers.Real, 0.0, 1.0, closed="neither")
"""A real in (0, 1) (:func:`privbandit.privacy.check_delta`, confidence levels, fractions)."""
POSITIVE_INT = Interval(numbers.Integral, 1, None)
"""An integer >= 1."""


def check_parameter(name: str, value: Any, constraints: Sequence[Constraint | None]) -> Any:
    """Check one argument against its list: the value of the first constraint it meets, else the last one's error.

    ``None`` in the list accepts None; with one other constraint (the usual case) its error is the message.
    """
    if value is None and None in constraints:
        return None
    others = [c for c in constraints if c is not None]
    if not others:
        raise ValueError(f"{name} must be None, got {value!r}")
    for constraint in others[:-1]:
        try:
            return constraint.check(name, value)
        except (TypeError, ValueError):
            continue
    return others[-1].check(name, value)


def check_parameters(owner: Any, values: Mapping[str, Any], constraints: ParameterConstraints) -> dict[str, Any]:
    """Check every argument of ``values`` (name -> value, in order) against its entry of ``constraints`` (the
    ``parameter_constraints`` of ``owner``); return name -> value as the constraint returns it.

    Raises
    ------
    ValueError or TypeError
        Naming the first argument outside its constraints and the allowed range; TypeError for an argument
        that has no entry in ``constraints`` (a bug in ``owner``, named).
    """
    out = {}
    for name, value in values.items():
        if name not in constraints:
            who = getattr(owner, "__qualname__", type(owner).__qualname__)
            raise TypeError(f"{who} declares no constraint for its argument {name!r}: add it to parameter_constraints")
        out[name] = check_parameter(name, value, constraints[name])
    return out


def allowed_values(constraints: Sequence[Constraint | None]) -> str:
    """The values a ``parameter_constraints`` list allows, in words (``"real in (0, inf) or None"``)."""
    words = []
    for c in constraints:
        if c is None:
            words.append("None")
        elif isinstance(c, Interval):
            lo = "(" if c.closed in ("right", "neither") else "["
            hi = ")" if c.closed in ("left", "neither") or c.right is None else "]"
            kind = "int" if c.kind is numbers.Integral else "real"
            words.append(f"{kind} in {lo}{'-inf' if c.left is None else c.left}, "
                         f"{'inf' if c.right is None else c.right}{hi}")
        elif isinstance(c, Options):
            words.append("one of " + ", ".join(map(repr, c.options)))
        elif isinstance(c, Boolean):
            words.append("bool")
        elif isinstance(c, InstanceOf):
            words.append(c.description)
        elif isinstance(c, IsCallable):
            words.append(f"a callable {c.signature}")
        elif isinstance(c, Array):
            words.append(f"a finite {'' if c.ndim is None else f'{c.ndim}-D '}float array"
                         + ("" if c.allow_empty else ", not empty"))
        else:
            words.append(repr(c))
    return " or ".join(words)


def describe_parameters(values: Mapping[str, Any], constraints: ParameterConstraints) -> dict[str, dict[str, Any]]:
    """Name -> ``{"default": value, "allowed": allowed_values(...)}`` for each of ``values`` (a default-built
    object's parameters), in their order; ``allowed`` is ``None`` for a name without declared constraints."""
    return {name: dict(default=value, allowed=allowed_values(constraints[name]) if name in constraints else None)
            for name, value in values.items()}
