"""Registries of named things (agents, oracles, context families), with plugins found by import path or entry point.

One :class:`Registry` per kind maps a name to an object (an agent factory, an Oracle subclass, a
ContextFamily subclass) and the facts registered with it. A name that is not registered yet is looked up
the way pytest and other tools find their plugins:

- an **import path** ``"pkg.module:attr"`` (``attr`` may be dotted): the module is imported and ``attr`` is
  the object;
- an **entry point** of an installed distribution in the registry's group (``privbandit.agents``,
  ``privbandit.oracles`` or ``privbandit.families``), e.g. in its ``pyproject.toml``::

      [project.entry-points."privbandit.agents"]
      my-agent = "my_agent:make_agent"

A loaded object goes through the same checks as :meth:`Registry.register`, unless importing its module
registered the name itself. So the same name works in the main process and in every worker of a sweep.

This module imports nothing from the rest of the package: each kind's module (``agents.base``,
``oracles.base``, ``envs.contexts``) makes its registry and gives it its checks.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import re
import types
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Entry", "PluginError", "Registry", "is_import_path", "load_import_path", "paper_labels"]

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


def first_doc_line(obj: Any) -> str:
    """The first line of ``obj``'s docstring ("" without one)."""
    doc = (getattr(obj, "__doc__", None) or "").strip().splitlines()
    return doc[0] if doc else ""


@dataclass(frozen=True)
class Entry:
    """One registration: the name, the object and the facts registered with it (``info``)."""

    name: str
    obj: Any
    info: Mapping[str, Any] = field(default_factory=dict)


def subclass_check(kind: str, base: type, public_name: str) -> Callable[[str, Any, dict], dict]:
    """A :class:`Registry` check for kinds registered as classes with no facts beside them: ``obj`` must be a
    subclass of ``base`` (named ``public_name`` in the message)."""
    article = "an" if kind[:1] in "aeiou" else "a"

    def check(name: str, cls: Any, info: dict) -> dict:
        if not (isinstance(cls, type) and issubclass(cls, base)):
            raise TypeError(f"{kind} {name!r} must be a subclass of {public_name}, got {cls!r}")
        if info:
            raise TypeError(f"{article} {kind} registers no facts beside its class, got {sorted(info)}")
        return {}

    return check


class Registry:
    """Name -> object for one kind, with plugins from import paths and entry points.

    Parameters
    ----------
    kind : str
        What the registry holds, e.g. ``"agent"`` (in messages).
    group : str
        The entry-point group of its plugins, e.g. ``"privbandit.agents"``.
    check : callable
        ``check(name, obj, info) -> info``: refuses (raising :class:`PluginError`, TypeError or ValueError)
        an object that is not of the kind, and returns the facts to store (completed or converted).
    facts : callable, optional
        ``facts(obj) -> info`` for an object loaded from an import path or an entry point (what
        :meth:`register` would be given by hand; ``{}`` by default).
    describe : callable, optional
        ``describe(entry) -> dict`` of further facts for :meth:`describe` (privacy model, hyperparameters);
        its ``paper_labels``, if any, are used when the description and the object's docstring name none.
    """

    def __init__(self, kind: str, group: str, check: Callable[[str, Any, dict], dict], *,
                 facts: Callable[[Any], dict] | None = None,
                 describe: Callable[[Entry], dict] | None = None) -> None:
        self.kind, self.group = kind, group
        self._check, self._facts, self._describe = check, facts or (lambda obj: {}), describe
        self._entries: dict[str, Entry] = {}
        self._a = "an" if kind[:1] in "aeiou" else "a"

    def register(self, name: str, obj: Any, **info: Any) -> Any:
        """Register ``obj`` under ``name`` after the registry's checks; returns ``obj``.

        Raises
        ------
        ValueError
            If ``name`` is not a non-empty string or another object (or the same one with other facts) is
            registered under it; the check's error if ``obj`` is not of the kind.
        """
        if not isinstance(name, str) or not name:
            raise ValueError(f"{self._a} {self.kind} name must be a non-empty string, got {name!r}")
        entry = Entry(name, obj, dict(self._check(name, obj, dict(info))))
        old = self._entries.get(name)
        if old is not None and (old.obj is not obj or old.info != entry.info):
            raise ValueError(f"{self._a} {self.kind} named {name!r} is already registered")
        self._entries[name] = entry
        return obj

    def unregister(self, name: str) -> None:
        """Forget ``name`` (a no-op when it is not registered)."""
        self._entries.pop(name, None)

    def get(self, name: str) -> Entry:
        """The entry of ``name``, loading it first if it is an import path or an entry point of the group.

        Raises
        ------
        ValueError
            For a name that is neither registered nor a plugin (:class:`PluginError` for a plugin that
            fails to load or is not of the kind).
        """
        if name not in self._entries:
            obj = self._load(name)
            if obj is None:
                raise ValueError(f"unknown {self.kind} {name!r}; choose one of {self.names()} or give an import "
                                 "path 'pkg.module:attr'")
            if name not in self._entries:          # else importing its module registered it
                try:
                    self.register(name, obj, **self._facts(obj))
                except (TypeError, ValueError) as exc:
                    raise PluginError(f"{self.kind} plugin {name!r}: {exc}") from None
        return self._entries[name]

    def __contains__(self, name: object) -> bool:
        """Whether ``name`` is registered (plugins not loaded yet are not)."""
        return name in self._entries

    def names(self) -> tuple[str, ...]:
        """The registered names (in order of registration), then the group's entry points not loaded yet."""
        return tuple(self._entries) + tuple(n for n in sorted(self._entry_points()) if n not in self._entries)

    def view(self) -> Mapping[str, Any]:
        """A read-only mapping name -> object of the registered names (it follows later registrations)."""
        return _ObjectView(self._entries)

    def describe(self, name: str) -> dict:
        """Structured facts about ``name``: ``name``, ``kind``, ``object`` (its import path), ``description``
        (one line), ``paper_labels`` (the source paper's labels in its description and docstring) and what
        the kind adds (for agents and oracles: ``privacy_model``, ``required`` (the arguments the caller
        must give) and ``hyperparameters``, each with its ``default`` and ``allowed`` values)."""
        entry = self.get(name)
        description = entry.info.get("description") or first_doc_line(entry.obj)
        out = dict(name=name, kind=self.kind, object=f"{entry.obj.__module__}:{entry.obj.__qualname__}",
                   description=description,
                   paper_labels=paper_labels(f"{description}\n{getattr(entry.obj, '__doc__', None) or ''}"))
        if self._describe is not None:
            facts = dict(self._describe(entry))
            fallback = facts.pop("paper_labels", ())       # the kind's labels, for a description that names none
            out.update(facts, paper_labels=out["paper_labels"] or tuple(fallback))
        return out

    def _entry_points(self) -> dict[str, importlib.metadata.EntryPoint]:
        return {ep.name: ep for ep in importlib.metadata.entry_points(group=self.group)}

    def _load(self, name: Any) -> Any:
        """The object an import path or an entry point names, or None if ``name`` is neither."""
        if is_import_path(name):
            return load_import_path(name)
        ep = self._entry_points().get(name) if isinstance(name, str) else None
        if ep is None:
            return None
        try:
            return ep.load()
        except Exception as exc:  # a plugin's import can fail in any way: report which and why
            raise PluginError(f"entry point {name!r} ({ep.value}) of group {self.group!r} failed to load: "
                              f"{type(exc).__name__}: {exc}") from None


_LABEL = re.compile(r"\b(?:alg|def|thm|lem|ssec|sec|appdx|eq|prop|cor|rem|asm|ass|tab):[A-Za-z0-9-]+[A-Za-z0-9]")
"""A label of the source paper (``alg:W-JDP``, ``def:SSP``, ``appdx:regret-upper-LDP``, ``tab:comp``)."""


def paper_labels(text: str) -> tuple[str, ...]:
    """The source paper's labels named in ``text``, each once, in order of appearance.

    >>> paper_labels("ridge (ssec:OLS, tab:comp); see ssec:OLS")
    ('ssec:OLS', 'tab:comp')
    """
    return tuple(dict.fromkeys(_LABEL.findall(text)))


class _ObjectView(Mapping[str, Any]):
    """Read-only name -> object over a registry's entries."""

    def __init__(self, entries: dict[str, Entry]) -> None:
        self._entries = entries

    def __getitem__(self, name: str) -> Any:
        return self._entries[name].obj

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def __repr__(self) -> str:
        return repr(types.MappingProxyType({k: e.obj for k, e in self._entries.items()}))
