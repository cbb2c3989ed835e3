"""Agent labels that can be run again: a label names an agent and its keyword arguments.

A report's ``agent`` column holds labels. Every label it prints resolves back to an agent
(:func:`resolve_label`):

- a registered name, an entry point or an import path ``"pkg.module:factory"`` is itself;
- a preset such as ``linucb-practical`` is its agent's name and kwargs (``linucb``, ``{"radius": "practical"}``:
  :func:`privbandit.agents.registry.preset`); every suite entry whose label is not its agent's name is a preset
  (:func:`privbandit.bench.suites.preset_entry`), so :func:`suite_variants` is the registry's presets;
- ``name(key=value, ...)``, the label :func:`kwargs_label` gives an agent with keyword arguments that no
  variant has, is ``name`` with those kwargs (values read as JSON, else as strings).

A challenger's label is its own name (:func:`agent_name`; a factory around ``make_agent("elim-jdp-ucb", ...)``
is not ``elim-jdp-ucb``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from ..agents import agent_is_private, agent_names, make_agent
from ..agents.registry import AGENT_REGISTRY, PRESETS
from ..registry import is_import_path
from . import suites  # noqa: F401 - registers the suites' presets

__all__ = ["agent_name", "kwargs_label", "resolve_label", "suite_variants"]

_CALL = re.compile(r"(?P<name>[^()\s]+)\((?P<args>.*)\)")


def suite_variants() -> dict[str, tuple[str, dict[str, Any]]]:
    """The presets of the agent registry, with the suites' (every suite entry whose label is not its agent's name
    is one, :func:`~privbandit.bench.suites.preset_entry`): label -> (name, kwargs)."""
    return {label: (name, dict(kw)) for label, (name, kw) in PRESETS.items()}


def _value(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return text


def resolve_label(label: str, kwargs: Mapping[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
    """The agent name and keyword arguments a label stands for (``kwargs`` added on top, winning).

    Examples
    --------
    >>> resolve_label("linucb-practical")
    ('linucb', {'radius': 'practical'})
    >>> resolve_label("linucb(radius=practical)")
    ('linucb', {'radius': 'practical'})
    >>> resolve_label("elim-jdp", {"first_epoch": 4})
    ('elim-jdp', {'first_epoch': 4})
    """
    extra = dict(kwargs or {})
    if label in agent_names() or is_import_path(label):
        return label, extra
    variants = suite_variants()
    if label in variants:
        name, own = variants[label]
        return name, {**own, **extra}
    call = _CALL.fullmatch(label)
    if call and call["name"] in agent_names():
        own = {}
        for part in filter(None, (p.strip() for p in call["args"].split(","))):
            key, eq, value = part.partition("=")
            if not eq:
                break
            own[key.strip()] = _value(value.strip())
        else:
            return call["name"], {**own, **extra}
    return label, extra


def kwargs_label(name: str, kwargs: Mapping[str, Any]) -> str:
    """The label of ``name`` with ``kwargs``: the suite variant's when one matches, else ``name(k=v, ...)``
    (``name`` alone without kwargs). :func:`resolve_label` reads it back.

    Examples
    --------
    >>> kwargs_label("linucb", {"radius": "practical"})
    'linucb-practical'
    >>> kwargs_label("elim-jdp", {"first_epoch": 4, "play": "ucb"})
    'elim-jdp(first_epoch=4,play=ucb)'
    """
    kwargs = dict(kwargs)
    if not kwargs:
        return name
    for label, (n, kw) in suite_variants().items():
        if n == name and kw == kwargs:
            return label
    parts = [f"{k}={v if isinstance(v, str) else json.dumps(v)}" for k, v in sorted(kwargs.items())]
    return f"{name}({','.join(parts)})"


def agent_name(agent: str, kwargs: Mapping[str, Any] | None = None) -> str:
    """A challenger's own name.

    A registered name or an entry point's name is itself: the name the user chose. For an import path, the
    ``name`` attribute of its factory, else of the agent it builds (at epsilon = 1 when it is private; an
    instance or a class attribute) unless that name is another registered agent's (inherited from the agent
    the factory wraps), else the import path's attribute.
    """
    if not is_import_path(agent):
        return agent
    own = _own_name(agent, kwargs)
    return own if own is not None and not _names_another(own, agent) else agent.partition(":")[2].split(".")[-1]


def _names_another(name: str, agent: str) -> bool:
    """Whether ``name`` is registered (or an entry point) for a factory other than ``agent``'s."""
    if name == agent or name not in agent_names():
        return False
    try:
        return AGENT_REGISTRY.get(name).obj is not AGENT_REGISTRY.get(agent).obj
    except ValueError:  # a plugin of that name that does not load: still not this agent's name to take
        return True


def _own_name(agent: str, kwargs: Mapping[str, Any] | None) -> str | None:
    """The ``name`` attribute of a plugin's factory, else of the agent it builds; None without one."""
    own = getattr(AGENT_REGISTRY.get(agent).obj, "name", None)
    if isinstance(own, str) and own:
        return own
    kw = dict(kwargs or {})
    if agent_is_private(agent) is not False:
        kw.setdefault("epsilon", 1.0)
    try:
        built = make_agent(agent, **kw)
    except (TypeError, ValueError):
        return None
    own = getattr(built, "name", None)
    return own if isinstance(own, str) and own else None
