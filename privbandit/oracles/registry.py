"""The oracle registry: ``register_oracle`` (a class decorator), ``make_oracle(name, ...)``, ``oracle_names()``
and ``oracle_class(name)``, on the generic :class:`privbandit.registry.Registry`.

A name that is not registered may be an import path ``"pkg.module:Class"`` or a ``privbandit.oracles`` entry
point (:mod:`privbandit.registry`).
"""

from __future__ import annotations

from dataclasses import MISSING, fields
from typing import Any

from .._validation import describe_parameters
from ..privacy import PrivacySpec
from ..registry import Entry, Registry, subclass_check
from .base import Oracle

__all__ = ["ORACLE_REGISTRY", "make_oracle", "oracle_class", "oracle_names", "register_oracle"]


def _describe_oracle(entry: Entry) -> dict:
    """The class's privacy models, the arguments ``make_oracle`` must be given (``required``: the budget
    ``epsilon`` of an oracle private by default and the fields without a default) and its fields (each with
    its default, None for a required one, and declared constraints)."""
    cls = entry.obj
    defaults, required = {}, ["epsilon"] if cls.privacy_models[0] != "none" else []
    for f in fields(cls):
        if f.init and f.name not in ("privacy", "mechanism"):
            if f.default is MISSING and f.default_factory is MISSING:
                required.append(f.name)
            defaults[f.name] = (f.default if f.default is not MISSING
                                else f.default_factory() if f.default_factory is not MISSING else None)
    return dict(privacy_models=cls.privacy_models, privacy_model=cls.privacy_models[0], required=tuple(required),
                hyperparameters=describe_parameters(defaults, cls.parameter_constraints))


ORACLE_REGISTRY = Registry("oracle", "privbandit.oracles",
                           subclass_check("oracle", Oracle, "privbandit.oracles.Oracle"), describe=_describe_oracle)
"""The oracle registry: name -> Oracle subclass."""


def register_oracle(cls: type[Oracle]) -> type[Oracle]:
    """Class decorator: make ``cls`` available as ``make_oracle(cls.name)``.

    Parameters
    ----------
    cls : type
        An Oracle subclass with a ``name``.

    Raises
    ------
    ValueError
        If ``cls`` has no ``name`` or another class is registered under it.
    """
    if not cls.name:
        raise ValueError(f"{cls.__name__} has no name")
    return ORACLE_REGISTRY.register(cls.name, cls)


def make_oracle(name: str, **kwargs: Any) -> Oracle:
    """Build a registered oracle by name; keyword arguments go to its dataclass.

    A private oracle needs its budget: ``epsilon`` (and ``delta``, default 1e-5; ``model``, default the
    oracle's first privacy model) or a ``privacy`` spec. A non-private oracle takes neither.

    Parameters
    ----------
    name : str
        A registered oracle, an import path ``"pkg.module:Class"`` or an entry point's name.
    **kwargs
        Fields of the oracle's dataclass: for a private oracle ``epsilon`` (and ``delta``, ``model``) or
        ``privacy``, and its own options.

    Raises
    ------
    ValueError
        For an unknown name, a private oracle without ``epsilon`` or ``privacy``, or a non-private one
        with ``epsilon`` or ``delta``.

    Examples
    --------
    >>> from privbandit.oracles import make_oracle
    >>> make_oracle("iw-regression-dp", epsilon=1.0, delta=1e-5).privacy.label()
    'jdp(eps=1, delta=1e-05)'
    >>> make_oracle("iw-regression-ldp", epsilon=0.5).privacy.label()   # delta defaults to 1e-5
    'ldp(eps=0.5, delta=1e-05)'
    >>> make_oracle("ridge").privacy.label()
    'non-private'
    """
    cls = oracle_class(name)
    budget = sorted(k for k in ("epsilon", "delta") if k in kwargs)
    if "privacy" in kwargs:
        if budget or "model" in kwargs:
            raise ValueError("give either privacy=PrivacySpec(...) or epsilon/delta/model, not both")
        return cls(**kwargs)
    model = kwargs.pop("model", cls.privacy_models[0])
    if model == "none":
        if budget:
            what = name if cls.privacy_models == ("none",) else f"{name} with model='none'"
            raise ValueError(f"{what} is non-private: it takes no epsilon/delta, got {'/'.join(budget)}")
        kwargs["privacy"] = PrivacySpec.none()
    else:
        if kwargs.get("epsilon") is None:
            raise ValueError(f"{name} is private: choose a budget, e.g. "
                             f"make_oracle({name!r}, epsilon=1.0, delta=1e-5)")
        kwargs["privacy"] = PrivacySpec(model, kwargs.pop("epsilon"), kwargs.pop("delta", 1e-5))
    return cls(**kwargs)


def oracle_names() -> tuple[str, ...]:
    """Names of the registered oracles and of the installed ``privbandit.oracles`` entry points, sorted."""
    return tuple(sorted(ORACLE_REGISTRY.names()))


def oracle_class(name: str) -> type[Oracle]:
    """The class registered under ``name``, loading it first if it is an import path ``"pkg.module:Class"``
    or a ``privbandit.oracles`` entry point (:mod:`privbandit.registry`).

    Parameters
    ----------
    name : str
        A registered oracle, an import path ``"pkg.module:Class"`` or an entry point's name.
    """
    return ORACLE_REGISTRY.get(name).obj
