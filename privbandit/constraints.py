"""Constraint types for declaring what each constructor argument of an agent or an oracle may be.

A class declares ``parameter_constraints``: a dict from each argument to a list of constraints, the
value being valid when it meets one of them (``None`` in the list allows None). privbandit checks every
argument against its list in one place and names the argument and its allowed values in the error, so a
class declares and never validates by hand (scikit-learn's ``_parameter_constraints``).

Examples
--------
>>> import numbers
>>> from privbandit.constraints import Interval, Options
>>> constraints = {"explore": [Interval(numbers.Real, 0.0, 1.0, closed="both")],
...                "rule": [Options(("ucb", "greedy"))]}
>>> Interval(numbers.Real, 0.0, 1.0).check("explore", 0.25)
0.25
"""

from __future__ import annotations

from ._validation import (
    POSITIVE,
    POSITIVE_INT,
    UNIT_OPEN,
    Array,
    Boolean,
    Constraint,
    InstanceOf,
    Interval,
    IsCallable,
    Options,
    ParameterConstraints,
)

__all__ = ["POSITIVE", "POSITIVE_INT", "UNIT_OPEN", "Array", "Boolean", "Constraint", "InstanceOf", "Interval",
           "IsCallable", "Options", "ParameterConstraints"]
