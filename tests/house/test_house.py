"""House rules that a reviewer would otherwise check by hand: short functions, ``__all__`` after the imports,
and an Examples section (collected by ``--doctest-modules``) on every entry point the README names."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import privbandit

PACKAGE = Path(privbandit.__file__).resolve().parent

MAX_FUNCTION_LINES = 80
"""Lines of code per function at most (docstrings, comments and blank lines not counted)."""


def code_lines(source: str, node: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    """Lines of code of one function: its lines minus its docstring, blank lines and comment-only lines.

    A nested function's lines count for it and for the function around it.
    """
    lines = set(range(node.lineno, node.end_lineno + 1))
    body = node.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str):
        lines -= set(range(body[0].lineno, body[0].end_lineno + 1))
    text = source.splitlines()
    return sum(1 for i in lines if text[i - 1].strip() and not text[i - 1].strip().startswith("#"))


def long_functions(source: str, limit: int = MAX_FUNCTION_LINES) -> list[tuple[str, int]]:
    """(name, lines of code) of every function in ``source`` longer than ``limit``."""
    return [(node.name, n) for node in ast.walk(ast.parse(source))
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and (n := code_lines(source, node)) > limit]


def _function(n_code: int, *, docstring: int = 0, comments: int = 0, blanks: int = 0) -> str:
    """A synthetic function with ``n_code`` lines of code (the ``def`` line included) and filler."""
    lines = ["def f(x):"]
    if docstring:
        lines += ['    """Doc.'] + ["    more doc"] * (docstring - 2) + ['    """']
    lines += ["    # a comment"] * comments + [""] * blanks
    lines += [f"    x = x + {i}" for i in range(n_code - 2)] + ["    return x"]
    return "\n".join(lines) + "\n"


def test_the_counter_counts_code_lines_only():
    src = _function(10, docstring=6, comments=4, blanks=3)
    assert code_lines(src, ast.parse(src).body[0]) == 10


def test_the_counter_flags_an_81_line_function_and_passes_an_80_line_one():
    assert long_functions(_function(80, docstring=30, comments=20, blanks=20)) == []
    assert long_functions(_function(81)) == [("f", 81)]


def test_the_counter_sees_methods_and_nested_functions():
    method = "class A:\n" + "".join("    " + line + "\n" for line in _function(81).splitlines())
    assert long_functions(method) == [("f", 81)]
    outer = "def outer():\n" + "".join("    " + line + "\n" for line in _function(80).splitlines())
    assert long_functions(outer) == [("outer", 81)]


def test_no_function_in_privbandit_is_longer_than_80_lines_of_code():
    found = [f"{path.relative_to(PACKAGE.parent)}: {name} ({n} lines)"
             for path in sorted(PACKAGE.rglob("*.py")) for name, n in long_functions(path.read_text())]
    assert found == [], f"split these into named steps: {found}"


def long_spans(source: str, limit: int = MAX_FUNCTION_LINES) -> list[tuple[str, int]]:
    """(name, lines) of every function in ``source`` whose ``def`` to last line (docstring, comments and blank
    lines included) spans more than ``limit`` lines."""
    return [(node.name, n) for node in ast.walk(ast.parse(source))
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
            and (n := node.end_lineno - node.lineno + 1) > limit]


def test_the_span_counter_counts_docstrings_comments_and_blank_lines():
    assert long_spans(_function(40, docstring=20, comments=10, blanks=10)) == []
    assert long_spans(_function(40, docstring=21, comments=10, blanks=10)) == [("f", 81)]


def test_no_function_in_privbandit_spans_more_than_80_lines():
    found = [f"{path.relative_to(PACKAGE.parent)}: {name} ({n} lines)"
             for path in sorted(PACKAGE.rglob("*.py")) for name, n in long_spans(path.read_text())]
    assert found == [], f"split these into named steps: {found}"


INTERNAL = "privbandit._validation"
"""The package's internal module: its private names may be imported by any module of the library."""


def module_name(path: Path) -> str:
    """The dotted name of a module file of the package (``privbandit/sim/__init__.py`` -> ``privbandit.sim``)."""
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def private_imports(source: str, module: str, is_package: bool = False) -> list[tuple[str, str]]:
    """(module, name) of every ``from X import _name`` in ``source`` (the module ``module``) where X is another
    privbandit module than :data:`INTERNAL`; relative imports are resolved against ``module``."""
    package = module.split(".") if is_package else module.split(".")[:-1]
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.ImportFrom):
            continue
        base = package[:len(package) - node.level + 1] if node.level else []
        origin = ".".join(base + ([node.module] if node.module else [])) if node.level else node.module or ""
        if origin.split(".")[0] != "privbandit" or origin in (module, INTERNAL):
            continue
        found += [(origin, a.name) for a in node.names if a.name.startswith("_") and not a.name.startswith("__")]
    return found


def test_the_private_import_scan_resolves_relative_imports():
    src = ("from .runner import _spec, run\nfrom ..agents.base import _x as y\nfrom privbandit.envs import _e\n"
           "from .._validation import _check\nfrom . import _sibling\nimport numpy as _np\nfrom os import _exit\n")
    assert private_imports(src, "privbandit.sim.grid") == [("privbandit.sim.runner", "_spec"),
                                                          ("privbandit.agents.base", "_x"),
                                                          ("privbandit.envs", "_e"), ("privbandit.sim", "_sibling")]
    # a package's own __init__ importing from itself is not another module
    assert private_imports("from . import _sibling\n", "privbandit.sim", is_package=True) == []


def test_no_module_imports_another_modules_private_names():
    found = [f"{path.relative_to(PACKAGE.parent)}: from {origin} import {name}"
             for path in sorted(PACKAGE.rglob("*.py"))
             for origin, name in private_imports(path.read_text(), module_name(path), path.name == "__init__.py")]
    assert found == [], f"make these public (a name, a docstring, __all__) or move them: {found}"


def all_after_imports(source: str) -> bool | None:
    """Whether a module's ``__all__`` comes before its first function or class (None: it has none)."""
    first_def = None
    for i, node in enumerate(ast.parse(source).body):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and first_def is None:
            first_def = i
        targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
        if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets):
            return first_def is None
    return None


def test_all_placement_check_tells_top_from_bottom():
    top = "import os\n\n__all__ = ['f']\n\n\ndef f():\n    pass\n"
    bottom = "import os\n\n\ndef f():\n    pass\n\n\n__all__ = ['f']\n"
    assert all_after_imports(top) is True
    assert all_after_imports(bottom) is False
    assert all_after_imports("def f():\n    pass\n") is None


def test_every_module_puts_all_after_its_imports():
    bottom = [str(p.relative_to(PACKAGE.parent)) for p in sorted(PACKAGE.rglob("*.py"))
              if all_after_imports(p.read_text()) is False]
    assert bottom == []


def _documented() -> list:
    from privbandit.agents import make_agent
    from privbandit.bench import sweep
    from privbandit.envs import PrivCBifyEnv, PrivGLMCBEnv, PrivLinCBEnv
    from privbandit.oracles import make_oracle, oracle_class
    from privbandit.privacy import PrivacyLedger
    from privbandit.sim import run

    oracles = [oracle_class(n) for n in ("ridge", "iw-regression-dp", "iw-regression-ldp", "iw-glm-dp")]
    return [PrivLinCBEnv, PrivGLMCBEnv, PrivCBifyEnv, make_oracle, *oracles, make_agent, run, sweep, PrivacyLedger]


@pytest.mark.parametrize("obj", _documented(), ids=lambda obj: obj.__name__)
def test_entry_points_have_an_examples_section_that_runs(obj):
    doc = obj.__doc__ or ""
    assert "\n    Examples\n    --------\n" in doc and "    >>> " in doc, f"{obj.__name__} has no Examples section"


def test_the_license_is_an_spdx_expression_with_its_file_and_a_setuptools_that_reads_it():
    """PEP 639: ``license`` a SPDX expression and ``license-files`` the files, which setuptools reads from
    version 77 on (older ones warn that a license table is deprecated, or refuse the string)."""
    tomllib = pytest.importorskip("tomllib", reason="reading pyproject.toml needs Python 3.11")
    licenses = pytest.importorskip("packaging.licenses", reason="SPDX expressions need packaging >= 24.2")
    from packaging.requirements import Requirement

    root = PACKAGE.parent
    toml = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    license_ = toml["project"]["license"]
    assert isinstance(license_, str) and licenses.canonicalize_license_expression(license_) == license_ == "MIT"
    files = toml["project"]["license-files"]
    assert files and all((root / f).is_file() for f in files)
    assert "MIT License" in (root / files[0]).read_text(encoding="utf-8").splitlines()[0]
    build = {Requirement(r).name: Requirement(r).specifier for r in toml["build-system"]["requires"]}
    assert "setuptools" in build and not build["setuptools"].contains("76.1") and build["setuptools"].contains("77")
    assert not any(c.startswith("License ::") for c in toml["project"].get("classifiers", ()))  # PEP 639 forbids
