"""Turn an agent's ``oracle`` argument (an Oracle instance or a registered name) into an Oracle."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .._validation import POSITIVE, UNIT_OPEN, InstanceOf, Options, ParameterConstraints, check_parameters
from ..oracles.base import Oracle
from ..oracles.registry import make_oracle
from ..privacy import MODELS
from .base import Agent
from .registry import BUDGET, register_agent

ORACLE_ARGUMENT_CONSTRAINTS: ParameterConstraints = {
    "oracle": [InstanceOf((Oracle, str), "an Oracle or a registered oracle name", example=lambda: "ridge")],
    "epsilon": [None, POSITIVE],
    "delta": [None, UNIT_OPEN],
    "model": [None, Options(MODELS)],
    "oracle_kwargs": [None, InstanceOf(Mapping, "a dict of the oracle's hyperparameters", example=dict)],
}
"""The constraints of the arguments of :func:`resolve_oracle` (which an agent taking an oracle passes on)."""


def resolve_oracle(oracle: Oracle | str, *, epsilon: float | None = None, delta: float | None = None,
                   model: str | None = None, oracle_kwargs: dict[str, Any] | None = None) -> Oracle:
    """An Oracle instance as is, or ``make_oracle(name, epsilon=, delta=, model=, **oracle_kwargs)``.

    Parameters
    ----------
    oracle : Oracle or str
        An oracle configuration, or the registered name of one (see ``privbandit.oracles.oracle_names()``).
    epsilon, delta : float, optional
        The per-user privacy budget (with a name: a private oracle needs ``epsilon``, ``delta`` defaults
        to 1e-5; with an instance they may only repeat its own budget, as ``make_agent`` passes it on).
    model : {"jdp", "ldp", "none"}, optional
        The privacy model (only with a name; the oracle's first supported model when omitted).
    oracle_kwargs : dict, optional
        Hyperparameters of the oracle's dataclass (only with a name).

    Raises
    ------
    ValueError or TypeError
        For an argument outside :data:`ORACLE_ARGUMENT_CONSTRAINTS`, budget arguments given with an Oracle
        instance other than its own, or what :func:`~privbandit.oracles.make_oracle` refuses (a budget outside
        its range: :class:`~privbandit.privacy.PrivacySpec` checks it, once).
    """
    # the budget is checked once: by the PrivacySpec it becomes (make_oracle), or here when it may only repeat an
    # instance's own (no spec is built from it then)
    checked = {k: v for k, v in dict(oracle=oracle, epsilon=epsilon, delta=delta, model=model,
                                     oracle_kwargs=oracle_kwargs).items()
               if isinstance(oracle, Oracle) or k not in BUDGET}
    check_parameters(resolve_oracle, checked, {k: ORACLE_ARGUMENT_CONSTRAINTS[k] for k in checked})
    if isinstance(oracle, Oracle):
        own = oracle.privacy          # a budget given with an instance may only repeat the instance's own
        if ((epsilon is not None and (not own.is_private or epsilon != own.epsilon))
                or (delta is not None and (not own.is_private or delta != own.delta))
                or (model is not None and model != own.model) or oracle_kwargs):
            raise ValueError("epsilon, delta, model and oracle_kwargs apply only when oracle is given by name "
                             "(with an Oracle instance, only its own budget); configure the Oracle instance instead")
        return oracle
    given = {k: v for k, v in dict(epsilon=epsilon, delta=delta, model=model).items() if v is not None}
    return make_oracle(oracle, **{**(oracle_kwargs or {}), **given})


def register_variant(cls: type[Agent], agent_name: str, oracle_name: str | None, model: str, description: str,
                     counterpart: str | None = None, **defaults: Any) -> None:
    """Register ``agent_name``: a factory of the agent class ``cls`` with the keyword defaults ``defaults``.

    The factory takes ``epsilon``, ``delta``, an ``oracle`` instance and ``cls``'s other keyword arguments.
    Without an instance its oracle is ``oracle_name`` in privacy ``model`` (``"none"``: non-private), or
    ``cls``'s own default oracle when ``oracle_name`` is None. An ``oracle_kwargs`` default configures an oracle
    built by name (the variant's or one the user names), under the user's ``oracle_kwargs``; an instance is used as
    it is.
    """
    def make(*, epsilon: float | None = None, delta: float | None = None, oracle: Oracle | str | None = None,
             **kwargs: Any) -> Agent:
        given = kwargs.get("oracle_kwargs")
        kwargs = {**defaults, **kwargs}
        if "oracle_kwargs" in defaults and isinstance(oracle, Oracle) and given is None:
            del kwargs["oracle_kwargs"]
        elif "oracle_kwargs" in defaults and isinstance(given, Mapping):
            kwargs["oracle_kwargs"] = {**defaults["oracle_kwargs"], **given}
        if oracle is not None:
            agent = cls(oracle, epsilon=epsilon, delta=delta, **kwargs)   # a name takes the budget
        elif oracle_name is None:
            agent = cls(epsilon=epsilon, delta=delta, **kwargs)
        else:  # make_agent has checked the budget against the registration's privacy
            agent = cls(oracle_name, epsilon=epsilon, delta=delta, model=None if model == "none" else model,
                        **kwargs)
        agent.name = agent_name  # type: ignore[misc]
        return agent

    fixed = ([f"oracle {oracle_name!r}"] if oracle_name else []) + [f"{k}={v!r}" for k, v in defaults.items()]
    make.__doc__ = (f"{description}\n\nKeyword arguments go to :class:`{cls.__name__}`"
                    + (f" ({', '.join(fixed)})." if fixed else "."))
    register_agent(agent_name, make, description=description, privacy=model, counterpart=counterpart)
