"""No import circle in the package, and no arrow back up between its rooms (:data:`ROOMS`): the graph of every
``import`` statement, lazy ones included, is acyclic and flows one way.

The graph is built from the source with :mod:`ast`, not by importing, so an import inside a function
(run only when the function is called) counts as much as one at the top of a module. Nodes are the
package's modules, a package standing for its ``__init__.py``. Edges, for each import statement anywhere
in a module (functions, methods, ``if TYPE_CHECKING:`` blocks, ``try`` blocks alike):

- ``import a.b.c`` is an edge to ``a.b.c`` (a module, or a package's ``__init__``);
- ``from a.b import x`` is an edge to the submodule ``a.b.x`` when there is one, else to ``a.b`` (``x`` is
  then read out of ``a.b``, so ``a.b`` must have run: for a package, its ``__init__``). Relative imports
  are resolved against the importing module's package, so a submodule's ``from . import x`` is an edge to
  its own package's ``__init__`` when ``x`` is one of its re-exports, and to the submodule otherwise;
- a package ``__init__`` that imports its submodules (``from .base import Agent``) has edges to them,
  like any module.

Not edges: the parent packages Python initialises before a submodule (importing ``a.b.c`` runs
``a/__init__`` and ``a/b/__init__`` first, but those do not need ``a.b.c``: counting them would make
every ``from .._validation import ...`` under a package that its ``__init__`` imports a circle), and
names loaded by string (``importlib.import_module``, ``privbandit.__getattr__``'s lazy attributes).

A circle is therefore a chain of modules that each need the next one to have run, including through a
package's re-exports: a submodule that reads a name from its own package's ``__init__`` while that
``__init__`` imports the submodule is a circle, and so is a lazy import that reaches back to its caller.
"""

from __future__ import annotations

import ast
from pathlib import Path

import privbandit

PACKAGE = Path(privbandit.__file__).resolve().parent


def module_files(root: Path = PACKAGE) -> dict[str, Path]:
    """Module name -> file for every ``.py`` file under ``root`` (a package named by its ``__init__.py``)."""
    out = {}
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(root.parent).with_suffix("").parts
        out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return out


def _resolve(module: str, is_package: bool, level: int, target: str | None) -> str:
    """The absolute name of ``from <level dots><target> import ...`` written in ``module``."""
    if level == 0:
        return target or ""
    base = module.split(".") if is_package else module.split(".")[:-1]
    base = base[: len(base) - (level - 1)]
    return ".".join(base + ([target] if target else []))


def import_edges(modules: dict[str, Path]) -> dict[str, set[str]]:
    """Module -> the package modules it imports (the rule of the module docstring)."""
    top = next(iter(modules)).split(".")[0]
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        is_package = path.name == "__init__.py"
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                source = _resolve(name, is_package, node.level, node.module)
                targets = [f"{source}.{alias.name}" if f"{source}.{alias.name}" in modules else source
                           for alias in node.names]
            else:
                continue
            graph[name].update(t for t in targets if t.split(".")[0] == top and t in modules)
    return graph


def find_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One cycle (as a closed path ``[a, b, ..., a]``) per strongly connected component that has one."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[set[str]] = []

    def connect(v: str) -> None:           # Tarjan's algorithm (the graph has ~80 nodes: recursion is fine)
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.add(w)
                if w == v:
                    break
            if len(comp) > 1 or v in graph[v]:
                components.append(comp)

    for v in sorted(graph):
        if v not in index:
            connect(v)
    return [_cycle_in(graph, comp) for comp in components]


def _cycle_in(graph: dict[str, set[str]], comp: set[str]) -> list[str]:
    """A shortest closed path through the component's first node (breadth-first inside the component)."""
    start = min(comp)
    parent: dict[str, str] = {}
    frontier = [start]
    while frontier:
        nxt = []
        for v in frontier:
            for w in sorted(graph[v] & comp):
                if w == start:
                    path = [v]
                    while path[-1] != start:
                        path.append(parent[path[-1]])
                    return [*reversed(path), start]
                if w not in parent:
                    parent[w] = v
                    nxt.append(w)
        frontier = nxt
    raise AssertionError("a strongly connected component always has a cycle")


def test_the_package_has_no_import_circle():
    graph = import_edges(module_files())
    cycles = find_cycles(graph)
    assert cycles == [], "import circles (one per tangle of modules, and who else is in it):\n" + "\n".join(
        " -> ".join(c) + "  (" + ", ".join(sorted(_component(graph, c[0]) - set(c))) + ")" for c in cycles)


ROOMS: tuple[tuple[str, ...], ...] = (
    ("cli",),
    ("bench", "integrations"),
    ("sim", "report"),
    ("agents",),
    ("envs",),
    ("oracles",),
    ("privacy",),
)
"""The package's rooms, top floor first: data flows ``cli -> bench -> {sim, report} -> agents, envs -> oracles ->
privacy``. A room may import its own modules and those of any room on a lower floor, never one on its own floor
or above. ``integrations`` (coba) plays runs, beside ``bench``; the agents' worker plumbing reads the env families'
registry (:mod:`privbandit.agents.workers`), so ``envs`` stands below ``agents``."""

SHARED = frozenset({"privbandit", "privbandit._validation", "privbandit.bandit_spec", "privbandit.constraints",
                    "privbandit.infomatrix", "privbandit.linalg", "privbandit.links", "privbandit.protocols",
                    "privbandit.registry"})
"""Modules in no room: the package's face and the small shared modules every room may import."""


def room_of(module: str) -> str | None:
    """The room of a module (``privbandit.bench.sweep`` -> ``bench``; ``privbandit.cli`` -> ``cli``), None for a
    shared module."""
    return None if module in SHARED or "." not in module else module.split(".")[1]


def upward_arrows(graph: dict[str, set[str]], rooms=ROOMS) -> list[str]:
    """Every import from a room to another room on its own floor or a higher one, as ``"a -> b"``."""
    floor = {room: i for i, tier in enumerate(rooms) for room in tier}
    return [f"{a} -> {b}" for a in sorted(graph) for b in sorted(graph[a])
            if room_of(a) is not None and room_of(b) is not None and room_of(a) != room_of(b)
            and floor[room_of(b)] <= floor[room_of(a)]]


def test_every_module_is_in_a_named_room_or_shared():
    rooms = {room for tier in ROOMS for room in tier}
    assert sorted(m for m in module_files() if m not in SHARED and room_of(m) not in rooms) == []


def test_data_flows_one_way_through_the_rooms():
    """``cli -> bench -> {sim, report} -> agents, envs -> oracles -> privacy``: no arrow from a lower room to a
    higher one, nor between two rooms of one floor (``sim`` and ``report`` do not import each other)."""
    assert upward_arrows(import_edges(module_files())) == []


def test_an_arrow_back_up_is_found(tmp_path):
    modules = _write(tmp_path, {"pkg/__init__.py": "", "pkg/cli.py": "", "pkg/sim/__init__.py": "",
                                "pkg/report/__init__.py": "", "pkg/report/tables.py": "from ..sim import x\n",
                                "pkg/privacy/__init__.py": "",
                                "pkg/privacy/spec.py": "def f():\n    from .. import cli\n"})
    rooms = (("cli",), ("sim", "report"), ("privacy",))
    assert upward_arrows(import_edges(modules), rooms) == ["pkg.privacy.spec -> pkg.cli",
                                                           "pkg.report.tables -> pkg.sim"]


def _component(graph: dict[str, set[str]], v: str) -> set[str]:
    """The modules on some circle through ``v``."""
    def reach(start: str, edges: dict[str, set[str]]) -> set[str]:
        seen, todo = {start}, [start]
        while todo:
            for w in edges[todo.pop()] - seen:
                seen.add(w)
                todo.append(w)
        return seen
    back = {u: {w for w in graph if u in graph[w]} for u in graph}
    return reach(v, graph) & reach(v, back)


def _write(root: Path, files: dict[str, str]) -> dict[str, Path]:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return module_files(root / "pkg")


def test_a_lazy_import_back_to_the_caller_is_a_circle(tmp_path):
    modules = _write(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/registry.py": "def find():\n    from .plugins import load\n    return load\n",
        "pkg/plugins.py": "def load():\n    from pkg.registry import find\n    return find\n",
        "pkg/leaf.py": "from . import registry\n"})
    assert find_cycles(import_edges(modules)) == [["pkg.plugins", "pkg.registry", "pkg.plugins"]]


def test_reading_a_reexport_of_ones_own_package_is_a_circle_but_a_sibling_submodule_is_not(tmp_path):
    files = {"pkg/__init__.py": "from .a import f\nfrom .b import g\n",
             "pkg/a.py": "def f():\n    return 1\n",
             "pkg/b.py": "from . import a\nfrom .a import f\ng = f\n"}
    assert find_cycles(import_edges(_write(tmp_path / "ok", files))) == []
    files["pkg/b.py"] = "from . import f\ng = f\n"                     # f read out of pkg/__init__
    assert find_cycles(import_edges(_write(tmp_path / "bad", files))) == [["pkg", "pkg.b", "pkg"]]


def test_parent_packages_initialised_first_are_not_edges(tmp_path):
    modules = _write(tmp_path, {
        "pkg/__init__.py": "from .sub import THING\n",
        "pkg/_util.py": "X = 1\n",
        "pkg/sub/__init__.py": "from .thing import THING\n",
        "pkg/sub/thing.py": "from .._util import X\nimport pkg._util\nTHING = X\n"})
    graph = import_edges(modules)
    assert graph["pkg.sub.thing"] == {"pkg._util"}
    assert graph["pkg"] == {"pkg.sub"} and graph["pkg.sub"] == {"pkg.sub.thing"}
    assert find_cycles(graph) == []
