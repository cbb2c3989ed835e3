"""The agent registry: ``register_agent``, ``make_agent(name, ...)``, ``agent_names()``, ``agent_is_private(name)``,
``agent_privacy(name)`` and ``agent_descriptions()``, on the generic :class:`privbandit.registry.Registry`.

A registration records what the house needs to know of an agent without building one: its privacy model
(:data:`PRIVACY`: ``"jdp"``, ``"ldp"``, ``"none"``, or ``"any"`` when the factory names none) and the budget
keywords its factory takes (:func:`budget_keywords`). The suites, the challenger and the CLI read them there.

A preset (:func:`register_preset`) is the one way to name a configured agent: a label for a registered agent
with other keyword arguments, e.g. ``linucb-practical``, ``linucb`` with ``radius="practical"``. ``make_agent``
builds it, the benchmark suites take every entry whose label is not its agent's name from one
(:func:`privbandit.bench.suites.preset_entry`), and a report label resolves through them
(:func:`privbandit.bench.labels.resolve_label`; a configuration no preset names is labelled ``name(key=value)``),
so a label means one thing everywhere. Presets are not agent names: a suite cell of a preset is its agent's with
the preset's kwargs. (A registered variant, :func:`~privbandit.agents._oracle_arg.register_variant`, is an agent
name: a factory of an agent class with fixed defaults, whose results carry that name.)

A name that is not registered may be an import path ``"pkg.module:factory"`` or a ``privbandit.agents`` entry
point (:mod:`privbandit.registry`).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from typing import Any

from .._validation import check_choice, describe_parameters
from ..oracles.base import Oracle
from ..privacy import MODELS
from ..registry import Entry, PluginError, Registry, first_doc_line, paper_labels
from .base import Agent

__all__ = ["AGENT_REGISTRY", "BUDGET", "PRESETS", "PRIVACY", "agent_descriptions", "agent_is_private", "agent_names",
           "agent_privacy", "budget_keywords", "declared_privacy_model", "factory_is_private", "make_agent", "preset",
           "register_agent", "register_preset"]


def factory_is_private(factory: Callable[..., Any]) -> bool | None:
    """Whether an agent factory takes a privacy budget, as the factory declares it: its ``privacy_model``
    attribute (``"none"``, ``"jdp"`` or ``"ldp"``), else its ``private`` attribute (a bool).

    For factories written before privacy was declared, a factory that declares neither is private when its
    signature has an ``epsilon`` parameter, unknown (None) when it only takes ``**kwargs``.
    """
    model = declared_privacy_model(factory)
    if model is not None:
        return model != "none"
    private = getattr(factory, "private", None)
    if isinstance(private, bool):
        return private
    try:
        params = inspect.signature(factory).parameters
    except (TypeError, ValueError):
        return None
    if "epsilon" in params:
        return True
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
        return None
    return False


def declared_privacy_model(factory: Any) -> str | None:
    """The privacy model a factory (a function or an agent class) declares in its ``privacy_model``
    attribute, or None when it declares none."""
    model = getattr(factory, "privacy_model", None)
    return None if model is None else check_choice("privacy_model", model, MODELS)


PRIVACY: tuple[str, ...] = (*MODELS, "any")
"""What a registration records of an agent's privacy: a model of :data:`privbandit.privacy.MODELS`, or ``"any"``
when the factory does not name one (its agents' model is whatever the factory builds from the budget it is given)."""

BUDGET: tuple[str, ...] = ("epsilon", "delta")
"""The budget keywords ``make_agent`` knows (a registration records those its factory takes)."""


def _budget_keywords(factory: Any, private: bool | None) -> tuple[str, ...]:
    """The budget keywords a factory takes: none for a non-private one, else those of :data:`BUDGET` its
    signature names (all of them for a factory of ``**kwargs`` or one without a readable signature)."""
    if private is False:
        return ()
    try:
        params = inspect.signature(factory).parameters
    except (TypeError, ValueError):
        return BUDGET
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
        return BUDGET
    return tuple(k for k in BUDGET if k in params)


def _check_registration(name: str, factory: Any, info: dict) -> dict:
    if not callable(factory):
        raise TypeError(f"agent {name!r} must be a factory, factory(**kwargs) -> Agent; got {type(factory).__name__}")
    unknown = sorted(set(info) - {"description", "private", "privacy", "counterpart"})
    if unknown:
        raise TypeError(f"register_agent got unknown keyword(s) {unknown}")
    private, privacy = info.get("private"), info.get("privacy")
    if private is not None and not isinstance(private, bool):
        raise TypeError(f"private must be a bool or None, got {type(private).__name__}")
    if privacy == "any":
        privacy = None
    if privacy is not None:
        if privacy not in MODELS:
            raise ValueError(f"privacy must be one of {PRIVACY} (or None: not declared), got {privacy!r}")
        if private is not None and private != (privacy != "none"):
            raise ValueError(f"private={private} contradicts privacy={privacy!r}: give privacy only")
        private = privacy != "none"
    return dict(description=info.get("description") or "", private=private, privacy=privacy or "any",
                budget=_budget_keywords(factory, private), counterpart=info.get("counterpart"))


def _plugin_facts(factory: Any) -> dict:
    """What a factory loaded from an import path or an entry point declares (:meth:`Registry.register`'s facts)."""
    return dict(description=first_doc_line(factory), private=factory_is_private(factory),
                privacy=declared_privacy_model(factory))


def _describe_agent(entry: Entry) -> dict:
    """What a default-built agent says of itself: privacy model, class, paper labels of the class docstring
    (when the description names none), the arguments ``make_agent`` must be given (``required``) and every
    constructor argument ``make_agent`` passes on, with its default and declared constraints.

    Defaults are values ``make_agent`` accepts: an Oracle built by default is given by its registered name,
    a required argument has the default None. A non-private name takes no ``epsilon`` or ``delta``.
    """
    private = entry.info["private"]
    try:
        agent = entry.obj(**({"epsilon": 1.0} if private else {}))
    except Exception as exc:  # a plugin factory may need arguments: say so, do not fail the catalogue
        return dict(private=private, error=f"{type(exc).__name__}: {exc}")
    cls, oracle = type(agent), getattr(agent, "oracle", None)
    required = ("epsilon",) if private else ()
    values, defaults = agent.get_params(), {}
    for arg, param in cls.constructor_parameters().items():
        # a non-private agent's budget keywords, and the audit seam ``mechanism`` (not a hyperparameter)
        if (private is False and arg in ("epsilon", "delta")) or arg == "mechanism":
            continue
        value = values.get(arg, None if param.default is inspect.Parameter.empty else param.default)
        defaults[arg] = None if arg in required else value.name if isinstance(value, Oracle) else value
    return dict(private=private, privacy_model=entry.info["privacy"],
                agent_class=f"{cls.__module__}:{cls.__qualname__}",
                oracle=getattr(oracle, "name", None), counterpart=entry.info["counterpart"],
                paper_labels=paper_labels(cls.__doc__ or ""), required=required,
                hyperparameters=describe_parameters(defaults, cls.parameter_constraints))


AGENT_REGISTRY = Registry("agent", "privbandit.agents", _check_registration,
                  facts=_plugin_facts,
                  describe=_describe_agent)
"""The agent registry: name -> factory, with its description, privacy flag and private counterpart."""


def register_agent(name: str, factory: Callable[..., Agent], *, description: str = "", privacy: str | None = None,
                   private: bool | None = None, counterpart: str | None = None) -> None:
    """Register ``factory(**kwargs) -> Agent`` under ``name`` (for ``make_agent``).

    Parameters
    ----------
    name : str
        The registered name.
    factory : callable
        ``factory(**kwargs)`` builds the agent (an agent class is a factory).
    description : str
        One line for ``agent_descriptions()``.
    privacy : {"jdp", "ldp", "none", "any"}, optional
        The privacy model of the agents the factory builds, recorded with it so that nothing has to build an
        agent to learn it (:func:`agent_privacy`; the suites, the challenger and the CLI read it). A private
        model makes ``make_agent`` require a budget (``epsilon=``, or an ``oracle`` instance that carries one);
        ``"none"`` makes it refuse ``epsilon`` and ``delta``. Without it (and without ``private``) the
        factory's ``privacy_model`` attribute is read; ``"any"`` (or nothing declared) records no model: a
        factory with an ``epsilon`` parameter is private of an unnamed model, one of ``**kwargs`` only is
        passed the budget keywords unchecked, and the benchmark asks for the model (``--private``) or
        whether it is private (``AgentEntry(private=)``) instead of building one.
    private : bool, optional
        The older form of ``privacy``: whether the factory takes a budget, without naming the model.
    counterpart : str, optional
        For a non-private agent, the name of its private counterpart (named in the error message).

    Notes
    -----
    The registration also records the budget keywords the factory takes (:func:`budget_keywords`: those of
    ``epsilon`` and ``delta`` its signature names, both for ``**kwargs``; none for a non-private agent):
    ``make_agent`` refuses the others.

    Raises
    ------
    ValueError
        If another factory (or the same one with other facts) is registered under ``name``, or ``privacy``
        and ``private`` disagree.
    """
    if privacy is None and private is None:
        privacy = declared_privacy_model(factory)
    AGENT_REGISTRY.register(name, factory, description=description, private=private, privacy=privacy,
                            counterpart=counterpart)


PRESETS: dict[str, tuple[str, dict[str, Any]]] = {}
"""Preset label -> (registered agent name, keyword arguments); :func:`register_preset` adds to it."""


def register_preset(label: str, agent: str, **kwargs: Any) -> None:
    """Register ``label`` as the registered agent ``agent`` with the keyword arguments ``kwargs``.

    Raises
    ------
    ValueError
        If ``label`` is a registered agent's name or already a preset of other arguments.
    """
    if label in AGENT_REGISTRY.names():
        raise ValueError(f"label must not be a registered agent's name, got {label!r}")
    if PRESETS.get(label, (agent, kwargs)) != (agent, kwargs):
        raise ValueError(f"{label!r} is already the preset {PRESETS[label]}")
    PRESETS[label] = (agent, dict(kwargs))


def preset(label: str) -> tuple[str, dict[str, Any]]:
    """The (agent name, keyword arguments) of a preset label (:data:`PRESETS`).

    Examples
    --------
    >>> preset("linucb-practical")
    ('linucb', {'radius': 'practical'})
    """
    if label not in PRESETS:
        raise ValueError(f"unknown preset {label!r}; choose one of {sorted(PRESETS)}")
    agent, kwargs = PRESETS[label]
    return agent, dict(kwargs)


def make_agent(name: str, **kwargs: Any) -> Agent:
    """Build a registered agent by name; keyword arguments go to its factory.

    A private agent needs its budget, ``make_agent("elim-jdp", epsilon=1.0, delta=1e-5)`` (``delta``
    defaults to the factory's, 1e-5; ``delta=None`` asks for that default), unless an ``oracle`` instance
    carries it (the factory is then given the instance's ``epsilon`` and ``delta`` too, so
    ``make_agent(name, **agent.get_params())`` rebuilds the agent whatever its factory's signature); a
    non-private agent takes no ``epsilon`` or ``delta``. A name that is not registered may be an
    import path ``"pkg.module:factory"`` or a ``privbandit.agents`` entry point (:mod:`privbandit.registry`).

    Parameters
    ----------
    name : str
        A registered agent (``privbandit list`` shows them), a preset label (:data:`PRESETS`), an import path
        ``"pkg.module:factory"`` or an entry point's name.
    **kwargs
        Keyword arguments of the agent's factory: for a private agent its budget ``epsilon`` (> 0) and
        ``delta`` (in (0, 1), default 1e-5), and the agent's own options (``oracle``, ``lam``, ...; see its
        page in the agents guide).

    Raises
    ------
    ValueError
        For an unknown name, a private name without ``epsilon`` or a non-private name with ``epsilon``
        or ``delta``.

    Examples
    --------
    >>> from privbandit.agents import make_agent
    >>> make_agent("elim-jdp", epsilon=1.0, delta=1e-5).privacy.label()
    'jdp(eps=1, delta=1e-05)'
    >>> make_agent("linucb").privacy.label()
    'non-private'
    >>> make_agent("linucb", epsilon=1.0)
    Traceback (most recent call last):
    ...
    ValueError: linucb is non-private: it takes no epsilon/delta, got epsilon (its private counterpart is linucb-jdp)
    >>> make_agent("linucb-practical").radius   # a preset: linucb with radius="practical"
    'practical'
    """
    if name in PRESETS:
        agent, own = PRESETS[name]
        return make_agent(agent, **{**own, **kwargs})
    entry = AGENT_REGISTRY.get(name)
    private, counterpart = entry.info["private"], entry.info["counterpart"]
    budget = sorted(k for k in BUDGET if k in kwargs)
    if private is False and budget:
        also = f" (its private counterpart is {counterpart})" if counterpart else ""
        raise ValueError(f"{name} is non-private: it takes no epsilon/delta, got {'/'.join(budget)}{also}")
    if private and kwargs.get("epsilon") is None and kwargs.get("oracle") is None:
        raise ValueError(f"{name} is private: choose a budget, e.g. make_agent({name!r}, epsilon=1.0, delta=1e-5)")
    if "delta" in kwargs and kwargs["delta"] is None:     # the factory's default, for every factory alike
        kwargs = {k: v for k, v in kwargs.items() if k != "delta"}
    takes = entry.info["budget"]
    if private is not False and (extra := [k for k in BUDGET if k in kwargs and k not in takes]):
        raise ValueError(f"{name} takes the budget keyword(s) {list(takes)} only, got {'/'.join(extra)}")
    oracle = kwargs.get("oracle")
    if private and kwargs.get("epsilon") is None and isinstance(oracle, Oracle) and oracle.privacy.is_private:
        # the budget an oracle instance carries, for a factory that takes one (get_params gives the oracle)
        carried = dict(epsilon=oracle.privacy.epsilon, delta=oracle.privacy.delta)
        kwargs = {**kwargs, **{k: v for k, v in carried.items() if k in takes}}
    return entry.obj(**kwargs)


def _registration(name: str) -> tuple[Entry, dict[str, Any]]:
    """The registry entry of an agent name or a preset label, and the preset's keyword arguments."""
    agent, own = PRESETS.get(name, (name, {}))
    return AGENT_REGISTRY.get(agent), dict(own)


def agent_privacy(name: str, kwargs: Mapping[str, Any] | None = None) -> str:
    """The privacy model of the agent ``make_agent(name, **kwargs)`` builds, read from its registration (the
    agent is not built): ``"none"``, ``"jdp"``, ``"ldp"``, or ``"any"`` when the registration names no model.

    An ``oracle`` in the keyword arguments (a preset's or ``kwargs``') decides for an agent registered private,
    since the oracle's privacy spec is the agent's: an Oracle instance's own model, or for a registered oracle
    name the ``model`` keyword, else the oracle's first supported model (as :func:`resolve_oracle` builds it).

    Parameters
    ----------
    name : str
        A registered agent, a preset label, an import path ``"pkg.module:factory"`` or an entry point's name.
    kwargs : mapping, optional
        Keyword arguments of ``make_agent`` (besides the budget).

    Raises
    ------
    ValueError
        For an unknown name (or an oracle name no oracle is registered under).

    Examples
    --------
    >>> agent_privacy("elim-ldp"), agent_privacy("linucb-practical"), agent_privacy("elim-jdp", {"oracle": "ridge"})
    ('ldp', 'none', 'none')
    """
    entry, own = _registration(name)
    privacy = entry.info["privacy"]
    oracle = {**own, **dict(kwargs or {})}.get("oracle")
    if entry.info["private"] is False or oracle is None:
        return privacy
    if isinstance(oracle, Oracle):
        return oracle.privacy.model
    from ..oracles.registry import oracle_class

    model = {**own, **dict(kwargs or {})}.get("model")
    return model if model is not None else oracle_class(oracle).privacy_models[0]


def agent_is_private(name: str, kwargs: Mapping[str, Any] | None = None) -> bool | None:
    """Whether ``make_agent(name, **kwargs)`` takes a privacy budget, read from the registration (None if it
    does not say: a factory of ``**kwargs`` that declares neither ``privacy`` nor ``private``).

    Parameters
    ----------
    name : str
        A registered agent, a preset label, an import path or an entry point's name.
    kwargs : mapping, optional
        Keyword arguments of ``make_agent``: an ``oracle`` among them decides (:func:`agent_privacy`).
    """
    entry, own = _registration(name)
    if entry.info["private"] is not None and {**own, **dict(kwargs or {})}.get("oracle") is None:
        return entry.info["private"]
    model = agent_privacy(name, kwargs)
    return None if model == "any" else model != "none"


def budget_keywords(name: str) -> tuple[str, ...]:
    """The budget keywords (of :data:`BUDGET`) the registered agent or preset ``name`` takes: none for a
    non-private agent."""
    return _registration(name)[0].info["budget"]


def agent_names() -> tuple[str, ...]:
    """Names of the registered agents and of the installed ``privbandit.agents`` entry points, sorted."""
    return tuple(sorted(AGENT_REGISTRY.names()))


def agent_descriptions() -> dict[str, str]:
    """Name -> one-line description of every agent of :func:`agent_names` (an entry point that fails to
    load says why)."""
    out = {}
    for name in agent_names():
        try:
            out[name] = AGENT_REGISTRY.get(name).info["description"]
        except PluginError as exc:
            out[name] = f"(plugin failed to load: {exc})"
    return out
