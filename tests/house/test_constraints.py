"""Declared parameter constraints: every oracle and agent argument has one, and they hold.

Each oracle configuration and each agent declares ``parameter_constraints`` (argument -> constraints, as
scikit-learn's ``_parameter_constraints``), checked in one place (``Oracle.__post_init__``,
``Agent._store_parameters``, ``resolve_oracle``). The classes come from the registries, never from a hand
list, so a new oracle or agent is covered as soon as it is registered:

- every constructor argument has an entry (fails when a field has none);
- every value a constraint declares outside is refused by the constructor, naming the argument;
- a value each constraint declares inside is accepted by the table and by the constructor.
"""

from __future__ import annotations

import dataclasses
import inspect
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import pytest

import privbandit  # noqa: F401  (registers everything)
from privbandit._validation import Constraint, check_parameter, check_parameters
from privbandit.agents import agent_is_private, agent_names, make_agent
from privbandit.oracles import Oracle, make_oracle, oracle_class, oracle_names
from privbandit.oracles.ridge import Ridge
from privbandit.privacy import PrivacySpec

ORACLES = {name: oracle_class(name) for name in oracle_names()}
AGENTS = {name: type(make_agent(name, **({"epsilon": 1.0} if agent_is_private(name) else {})))
          for name in agent_names()}
AGENT_CLASSES = {cls.__name__: cls for cls in AGENTS.values()}     # several names build the same class

# Rules that tie two arguments together (checked after the tables, in __post_init__ / __init__): a value
# (other than None) inside its own constraint is accepted given these companions.
COMPANIONS: dict[str, dict[str, Any]] = {
    "c_width": {"radius": "practical"},                      # LinUCB's c_width sets the practical radius
    "exploration": {"play": "greedy"},                       # elimination's exploration rate is greedy play's
    "epsilon": {"oracle": "iw-regression-dp"},               # a budget needs a private oracle
    "delta": {"oracle": "iw-regression-dp", "epsilon": 1.0},
    "weights": {"features": np.eye(2)},                      # one weight per atom
    "public_weights": {"public_features": np.eye(2)},        # weights need their atoms
}


def constructor_arguments(cls: type) -> list[str]:
    """The keyword arguments of ``cls(...)``: dataclass fields, or ``__init__``'s following ``**kwargs`` up."""
    if dataclasses.is_dataclass(cls):
        return [f.name for f in dataclasses.fields(cls) if f.init]
    names: list[str] = []
    for klass in cls.__mro__:
        if "__init__" not in vars(klass):
            continue
        params = list(inspect.signature(vars(klass)["__init__"]).parameters.values())[1:]
        names += [p.name for p in params if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD) and p.name not in names]
        if not any(p.kind is p.VAR_KEYWORD for p in params):
            return names
    return names


def missing_constraints(cls: type) -> list[str]:
    """Constructor arguments of ``cls`` without an entry in its ``parameter_constraints``."""
    return [name for name in constructor_arguments(cls) if name not in cls.parameter_constraints]


def base_kwargs(cls: type) -> dict[str, Any]:
    """What ``cls`` needs besides its defaults: a budget of its first privacy model (oracles; every agent class has a
    non-private default oracle)."""
    if isinstance(cls, type) and issubclass(cls, Oracle) and cls.privacy_models[0] != "none":
        return {"privacy": PrivacySpec(cls.privacy_models[0], 1.0, 1e-5)}
    return {}


def cases(classes: dict[str, type]) -> list[tuple[str, str]]:
    return [(key, field) for key, cls in classes.items() for field in constructor_arguments(cls)
            if field in cls.parameter_constraints]


def outside(constraints: list[Constraint | None]) -> list[Any]:
    """The values the constraints declare outside (None only when the list does not allow it)."""
    values = [v for c in constraints if c is not None for v in c.invalid_examples()]
    return [v for v in values if not (v is None and None in constraints)]


def inside(constraints: list[Constraint | None]) -> list[Any]:
    values = [c.valid_example() for c in constraints if c is not None]
    return [v for v in values if v is not None] + ([None] if None in constraints else [])


# -- (a) every argument has a declared constraint --------------------------------------------------------

@pytest.mark.parametrize("name", sorted(ORACLES))
def test_every_oracle_field_has_a_declared_constraint(name):
    cls = ORACLES[name]
    assert missing_constraints(cls) == [], f"{name}: no parameter_constraints entry for {missing_constraints(cls)}"
    stale = set(cls.parameter_constraints) - set(constructor_arguments(cls))
    assert not stale, f"{name}: parameter_constraints names no field {sorted(stale)}"


@pytest.mark.parametrize("name", sorted(AGENTS))
def test_every_agent_argument_has_a_declared_constraint(name):
    cls = AGENTS[name]
    assert missing_constraints(cls) == [], f"{name}: no parameter_constraints entry for {missing_constraints(cls)}"


def test_the_common_check_fails_for_an_undeclared_field():
    @dataclass(frozen=True)
    class Undeclared(Ridge):
        extra: float = 1.0

    class Partial(Ridge):
        parameter_constraints: ClassVar[dict] = {}

    assert missing_constraints(Undeclared) == ["extra"]
    assert "lam" in missing_constraints(Partial)
    with pytest.raises(TypeError, match="declares no constraint for its argument 'extra'"):
        check_parameters(Undeclared, {"extra": 1.0}, Undeclared.parameter_constraints)


# -- (b) a value outside a declared constraint is refused, naming the argument -----------------------------

def assert_refused(build, field: str, value: Any) -> None:
    with pytest.raises((ValueError, TypeError)) as info:
        build(**{field: value})
    assert field in str(info.value), f"{field}={value!r}: the message does not name it: {info.value}"


@pytest.mark.parametrize("name, field", cases(ORACLES))
def test_oracles_refuse_values_outside_their_constraints(name, field):
    cls = ORACLES[name]
    bad = outside(cls.parameter_constraints[field])
    assert bad, f"{name}.{field}: its constraints declare no value outside"
    for value in bad:
        assert_refused(lambda **kw: cls(**{**base_kwargs(cls), **kw}), field, value)


@pytest.mark.parametrize("name, field", cases(AGENT_CLASSES))
def test_agents_refuse_values_outside_their_constraints(name, field):
    cls = AGENT_CLASSES[name]
    bad = outside(cls.parameter_constraints[field])
    assert bad, f"{name}.{field}: its constraints declare no value outside"
    for value in bad:
        assert_refused(lambda **kw: cls(**{**base_kwargs(cls), **kw}), field, value)


@pytest.mark.parametrize("field", ["epsilon", "delta", "model", "oracle_kwargs"])
def test_registered_agents_refuse_bad_oracle_arguments_by_name(field):
    bad = {"epsilon": -1.0, "delta": 1.5, "model": "central", "oracle_kwargs": [("lam", 1.0)]}[field]
    assert_refused(lambda **kw: make_agent("elim-jdp", **{"epsilon": 1.0, **kw}), field, bad)


# -- (c) a value inside is accepted ----------------------------------------------------------------------

def assert_accepted(cls: type, field: str, value: Any) -> None:
    constraints = cls.parameter_constraints[field]
    check_parameter(field, value, constraints)           # the table accepts it ...
    companions = {k: v for k, v in COMPANIONS.get(field, {}).items()
                  if k in constructor_arguments(cls) and value is not None}
    cls(**{**base_kwargs(cls), **companions, field: value})      # ... and so does the constructor


@pytest.mark.parametrize("name, field", cases(ORACLES))
def test_oracles_accept_values_inside_their_constraints(name, field):
    for value in inside(ORACLES[name].parameter_constraints[field]):
        assert_accepted(ORACLES[name], field, value)


@pytest.mark.parametrize("name, field", cases(AGENT_CLASSES))
def test_agents_accept_values_inside_their_constraints(name, field):
    for value in inside(AGENT_CLASSES[name].parameter_constraints[field]):
        assert_accepted(AGENT_CLASSES[name], field, value)


def test_agents_store_checked_values():
    agent = make_agent("linucb", lam=2, batch_size=np.int64(4), radius="practical")
    assert type(agent.lam) is float and agent.lam == 2.0
    assert type(agent.batch_size) is int and agent.batch_size == 4
    assert agent.c_width == 2.0                          # the practical default, set after the checks
    assert make_agent("elim-nonprivate", spanner=np.bool_(False)).spanner is False


def test_one_constants_tuple_is_shared():
    from privbandit.agents import linucb
    from privbandit.oracles import base, dp_sgd, iw_jdp, iw_ldp, ldp_sgd, ridge, simple_ldp

    for module in (linucb, dp_sgd, iw_jdp, iw_ldp, ldp_sgd, ridge, simple_ldp):
        assert module.CONSTANTS is base.CONSTANTS, module.__name__
    assert make_oracle("ridge", constants="theory").constants == "theory"
