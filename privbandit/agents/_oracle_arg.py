"""Turn an agent's ``oracle`` argument (an Oracle instance or a registered name) into an Oracle."""

from __future__ import annotations

from typing import Any

from ..oracles.base import Oracle, make_oracle


def resolve_oracle(oracle: Oracle | str, *, epsilon: float | None = None, delta: float | None = None,
                   model: str | None = None, oracle_kwargs: dict[str, Any] | None = None) -> Oracle:
    """An Oracle instance as is, or ``make_oracle(name, epsilon=, delta=, model=, **oracle_kwargs)``.

    Parameters
    ----------
    oracle : Oracle or str
        An oracle configuration, or the registered name of one (see ``privbandit.oracles.oracle_names()``).
    epsilon, delta : float, optional
        The per-user privacy budget (only with a name; a private oracle needs ``epsilon``, ``delta`` defaults
        to 1e-5).
    model : {"jdp", "ldp", "none"}, optional
        The privacy model (only with a name; the oracle's first supported model when omitted).
    oracle_kwargs : dict, optional
        Hyperparameters of the oracle's dataclass (only with a name).
    """
    if isinstance(oracle, Oracle):
        if epsilon is not None or delta is not None or model is not None or oracle_kwargs:
            raise ValueError("epsilon, delta, model and oracle_kwargs apply only when oracle is given by name; "
                             "configure the Oracle instance instead")
        return oracle
    if not isinstance(oracle, str):
        raise TypeError(f"oracle must be an Oracle or a registered oracle name, got {type(oracle).__name__}")
    kwargs = dict(oracle_kwargs or {})
    if epsilon is not None:
        kwargs["epsilon"] = epsilon
    if delta is not None:
        kwargs["delta"] = delta
    if model is not None:
        kwargs["model"] = model
    return make_oracle(oracle, **kwargs)
