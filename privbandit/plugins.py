"""Plugins: agents, oracles and context families from user code, found by import path or entry point.

A plugin is named in one of two ways, the way pytest and other tools find theirs:

- an **import path** ``"pkg.module:attr"`` (``attr`` may be dotted): the module is imported and ``attr`` is
  the agent factory (``factory(**kwargs) -> Agent``), the :class:`~privbandit.oracles.Oracle` subclass or
  the :class:`~privbandit.envs.ContextFamily` subclass;
- an **entry point** of an installed distribution in the group ``privbandit.agents``,
  ``privbandit.oracles`` or ``privbandit.families``, e.g. in its ``pyproject.toml``::

      [project.entry-points."privbandit.agents"]
      my-agent = "my_agent:make_agent"

The registries (``make_agent``, ``make_oracle``, ``make_family`` and the env's ``family=``) consult this
module when a name is not registered yet, so the same name works in the main process and in every
worker of a sweep. An agent factory says whether it takes a privacy budget through a ``private``
attribute (``True``/``False``); without one, a factory with an ``epsilon`` parameter is private.

A sweep's cells carry a :class:`PluginRef` for each plugin that a worker could not find by name alone
(an agent registered with ``register_agent`` in a user module, an import path): the import path and the
folder the module was imported from. :func:`prepare` makes each one importable in the worker, and
:func:`probe` checks them in the workers before any cell runs (:func:`privbandit.sim.sweep.sweep`).
"""

from __future__ import annotations

import importlib
import importlib.metadata
import inspect
import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

GROUPS: dict[str, str] = {"agent": "privbandit.agents", "oracle": "privbandit.oracles",
                          "family": "privbandit.families"}
"""Entry-point group of each plugin kind."""

_IMPORT_PATH = re.compile(r"[A-Za-z_][\w]*(\.[A-Za-z_]\w*)*:[A-Za-z_]\w*(\.[A-Za-z_]\w*)*")


class PluginError(ValueError):
    """A plugin that cannot be imported or is not what its kind needs (the message says why)."""


def is_import_path(name: Any) -> bool:
    """Whether ``name`` has the form ``"pkg.module:attr"``."""
    return isinstance(name, str) and _IMPORT_PATH.fullmatch(name) is not None


def load_import_path(path: str) -> Any:
    """The object at ``"pkg.module:attr"``.

    Raises
    ------
    PluginError
        If the module cannot be imported (with the import error) or has no such attribute.
    """
    if not is_import_path(path):
        raise PluginError(f"an import path must look like 'pkg.module:attr', got {path!r}")
    module, _, attr = path.partition(":")
    try:
        obj = importlib.import_module(module)
    except ImportError as exc:
        raise PluginError(f"cannot import {module!r} for {path!r}: {exc} (install the package, or put its "
                          "folder on PYTHONPATH so that every worker can import it)") from None
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise PluginError(f"module {module!r} has no attribute {attr!r} (from {path!r})") from None
    return obj


def _entry_points(kind: str) -> dict[str, importlib.metadata.EntryPoint]:
    eps = importlib.metadata.entry_points(group=GROUPS[kind])
    return {ep.name: ep for ep in eps}


def entry_point_names(kind: str) -> tuple[str, ...]:
    """Names of the installed entry points of a kind (``"agent"``, ``"oracle"``, ``"family"``), sorted."""
    return tuple(sorted(_entry_points(kind)))


def load(kind: str, name: str) -> Any:
    """The object an import path or an entry point of ``kind`` names, or None if ``name`` is neither.

    Raises
    ------
    PluginError
        If the import path or the entry point fails to load (the message has the reason).
    """
    if kind not in GROUPS:
        raise ValueError(f"kind must be one of {tuple(GROUPS)}, got {kind!r}")
    if is_import_path(name):
        return load_import_path(name)
    ep = _entry_points(kind).get(name)
    if ep is None:
        return None
    try:
        return ep.load()
    except Exception as exc:  # a plugin's import can fail in any way: report which and why
        raise PluginError(f"entry point {name!r} ({ep.value}) of group {GROUPS[kind]!r} failed to load: "
                          f"{type(exc).__name__}: {exc}") from None


def factory_is_private(factory: Callable[..., Any]) -> bool | None:
    """Whether an agent factory takes a privacy budget: its ``private`` attribute, else whether its
    signature has an ``epsilon`` parameter (None when it only takes ``**kwargs``)."""
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


def _description(obj: Any) -> str:
    doc = (getattr(obj, "__doc__", None) or "").strip().splitlines()
    return doc[0] if doc else ""


def find_agent(name: str) -> bool:
    """Register the agent an import path or an ``privbandit.agents`` entry point names; False if neither.

    The entry point may name a factory, or a module that registers ``name`` when imported.
    """
    from .agents.base import _REGISTRY, register_agent

    obj = load("agent", name)
    if obj is None:
        return False
    if name in _REGISTRY:  # the module registered it on import
        return True
    if not callable(obj):
        raise PluginError(f"agent plugin {name!r} must be a factory, factory(**kwargs) -> Agent; got "
                          f"{type(obj).__name__}")
    register_agent(name, obj, description=_description(obj), private=factory_is_private(obj))
    return True


def _find_class(kind: str, name: str, registry: dict, base: type, what: str) -> bool:
    obj = load(kind, name)
    if obj is None:
        return False
    if name in registry:  # the module registered it on import
        return True
    if not (isinstance(obj, type) and issubclass(obj, base)):
        raise PluginError(f"{kind} plugin {name!r} must be a subclass of {what}, got {obj!r}")
    registry[name] = obj
    return True


def find_oracle(name: str) -> bool:
    """Register the Oracle subclass an import path or a ``privbandit.oracles`` entry point names."""
    from .oracles.base import _REGISTRY, Oracle

    return _find_class("oracle", name, _REGISTRY, Oracle, "privbandit.oracles.Oracle")


def find_family(name: str) -> bool:
    """Register the ContextFamily subclass an import path or a ``privbandit.families`` entry point names."""
    from .envs.contexts import FAMILIES, ContextFamily

    return _find_class("family", name, FAMILIES, ContextFamily, "privbandit.envs.ContextFamily")


# -- what a worker needs -------------------------------------------------------------------------
@dataclass(frozen=True)
class PluginRef:
    """How a worker finds one plugin: an import path, the folder its module came from, and, for a
    factory defined in ``__main__`` (a script or a notebook), the factory itself (sent by value).

    Parameters
    ----------
    kind : {"agent", "oracle", "family"}
    name : str
        The name the registry knows it by.
    path : str, optional
        ``"module:attr"`` of the object.
    folder : str, optional
        The ``sys.path`` folder the module was imported from (added to the worker's ``sys.path`` if the
        module is not importable there otherwise); None for installed packages.
    factory : callable, optional
        A ``__main__`` factory (cloudpickle sends it by value to loky, dask and ray workers).
    private : bool, optional
        The registration's privacy flag (for an agent registered again in a worker).
    """

    kind: str
    name: str
    path: str | None = None
    folder: str | None = None
    factory: Any = None
    private: bool | None = None

    def describe(self) -> str:
        """``kind 'name'`` and where it comes from."""
        where = f" from {self.path}" if self.path and self.path != self.name else ""
        where += " (defined in __main__, sent by value)" if self.factory is not None else ""
        return f"{self.kind} {self.name!r}{where}"


def _source_folder(module_name: str) -> str | None:
    """The ``sys.path`` entry a user module was imported from (None for site-packages or built-ins)."""
    mod = sys.modules.get(module_name)
    file = getattr(mod, "__file__", None)
    if not file:
        return None
    path = Path(file).resolve()
    depth = module_name.count(".") + (2 if path.name == "__init__.py" else 1)
    root = path.parents[depth - 1]
    if any(part in ("site-packages", "dist-packages") for part in root.parts):
        return None
    return str(root)


def _builtin(module_name: str) -> bool:
    return module_name == "privbandit" or module_name.startswith("privbandit.")


def ref_for_path(kind: str, path: str) -> PluginRef:
    """The :class:`PluginRef` of an import path (its module must be importable here)."""
    load_import_path(path)
    return PluginRef(kind, path, path, _source_folder(path.partition(":")[0]))


def agent_ref(name: str) -> PluginRef | None:
    """What a worker needs to find agent ``name``: None for built-in agents and entry points (every worker
    finds those by name), else a :class:`PluginRef`."""
    from .agents.base import _REGISTRY

    if is_import_path(name):
        return ref_for_path("agent", name)
    if name not in _REGISTRY:
        return None  # an entry point (or unknown: make_agent says so)
    reg = _REGISTRY[name]
    module = getattr(reg.factory, "__module__", None) or ""
    qualname = getattr(reg.factory, "__qualname__", "")
    if _builtin(module):
        return None
    if module == "__main__" or "<locals>" in qualname or not qualname:
        return PluginRef("agent", name, factory=reg.factory, private=reg.private)
    return PluginRef("agent", name, f"{module}:{qualname}", _source_folder(module), private=reg.private)


def prepare(ref: PluginRef) -> None:
    """Make ``ref`` known in this process: import its module (from its folder if needed) and register it.

    Raises
    ------
    PluginError
        If it cannot be imported here (the message says why).
    """
    if ref.path is not None:
        module = ref.path.partition(":")[0]
        try:
            importlib.import_module(module)
        except ImportError:
            if ref.folder and os.path.isdir(ref.folder) and ref.folder not in sys.path:
                sys.path.append(ref.folder)
                importlib.invalidate_caches()
    if ref.kind == "agent":
        from .agents.base import _REGISTRY, register_agent

        if ref.name in _REGISTRY:
            return
        if ref.factory is not None:
            register_agent(ref.name, ref.factory, description=_description(ref.factory), private=ref.private)
            return
        if ref.path is not None:
            obj = load_import_path(ref.path)
            if ref.name not in _REGISTRY:  # importing the module may have registered it
                private = ref.private if ref.private is not None else factory_is_private(obj)
                register_agent(ref.name, obj, description=_description(obj), private=private)
        return
    if ref.path is not None:
        (find_oracle if ref.kind == "oracle" else find_family)(ref.name)


def probe(refs: tuple[PluginRef, ...], agents: tuple[str, ...] = (), oracles: tuple[str, ...] = (),
          families: tuple[str, ...] = ()) -> list[str]:
    """Prepare every ref and look up every name in this process; the problems found, one line each.

    Runs in a worker before a sweep's cells (a factory the worker cannot import fails the sweep early).
    """
    problems = []
    for ref in refs:
        try:
            prepare(ref)
        except Exception as exc:  # report every failure, whatever it is
            problems.append(f"{ref.describe()}: {exc}")
    from .agents.base import agent_is_private
    from .envs.contexts import family_class
    from .oracles.base import oracle_class

    for lookup, names in ((agent_is_private, agents), (oracle_class, oracles), (family_class, families)):
        for name in names:
            try:
                lookup(name)
            except Exception as exc:  # noqa: PERF203 - one message per name
                problems.append(str(exc))
    return problems
