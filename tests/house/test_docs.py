"""The documentation stays true to the code (the Sphinx build itself runs in CI, after the tests).

- Every ```python block of the hand-written pages under ``docs/`` runs, as README blocks do.
- No results number is typed by hand: a number that reads as a measured result (a regret, a ratio such as
  "3.6x", a measured decimal) on a hand-written page or in the README must appear in a file the docs build
  generates (``docs/_generated/``), or the page fails. Without a build the generated set is empty, so a
  hand-written page may carry no such number at all.
- The catalogue generator lists every registered agent and oracle with every constrained hyperparameter.
- The results-table generator prints the command that made the results and the numbers of ``final_regret``.
- The interop page's generator renders the OBP numbers of ``docs/data/obp_offpolicy.json`` as they are, times
  the render and prints what the page's ``ansi`` example prints.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ALLOWED_TAGS, fenced_blocks, run_block

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
GENERATED = DOCS / "_generated"
SCRIPTS = ROOT / "scripts"


def hand_written_pages() -> list[Path]:
    """The Markdown and reST sources a person writes (not the generated ones, not the build)."""
    skip = ("_build", "_generated", "reference", "jupyter_execute")
    pages = [p for p in sorted(DOCS.rglob("*")) if p.suffix in (".md", ".rst")
             and not any(part in skip for part in p.relative_to(DOCS).parts) and p.name != "api.rst"]
    return pages


PAGES = hand_written_pages()
PLAIN_PAGES = [p for p in PAGES if not p.read_text(encoding="utf-8").startswith("---\njupytext")]  # not notebooks
PYTHON = [(p, line, body) for p in PLAIN_PAGES for line, tag, body in fenced_blocks(p.read_text(encoding="utf-8"))
          if tag == "python"]


def test_the_docs_have_their_pages_and_known_fence_tags():
    names = {p.relative_to(DOCS).as_posix() for p in PAGES}
    assert {"index.md", "getting_started.md", "catalogue.md", "results.md", "changelog.md",
            "tutorials/own_agent.md", "guide/privacy.md", "guide/paper.md"} <= names
    tags = ALLOWED_TAGS + ("pycon",)
    bad = [(p.name, line, tag) for p in PLAIN_PAGES for line, tag, _ in fenced_blocks(p.read_text(encoding="utf-8"))
           if tag not in tags and not tag.startswith(("{include}", "{figure}", "{toctree}"))]
    assert not bad, f"unknown fence tags (a Python example must be tagged python to be run): {bad}"
    assert len(PYTHON) >= 8, "the guide's Python examples went missing"


@pytest.mark.slow
@pytest.mark.parametrize("page, line, code", PYTHON,
                         ids=[f"{p.relative_to(DOCS).as_posix()}:{line}" for p, line, _ in PYTHON])
def test_python_block_of_the_docs_runs(page, line, code, tmp_path):
    proc = run_block(code, tmp_path)
    assert proc.returncode == 0, f"{page.relative_to(ROOT)} block at line {line} failed:\n{proc.stderr[-3000:]}"


# --- no results number typed by hand ----------------------------------------------------------------------------

RESULT_CONTEXT = re.compile(r"regret|\belim-|\blinucb|\bsquarecb-|\bldp-ucb|\buniform\b|\bepsilon-greedy", re.I)
NUMBER = re.compile(r"(?<![\w.^/-])(\d+(?:,\d{3})*(?:\.\d+)?)(x\b)?")


def result_numbers(text: str) -> list[tuple[int, str]]:
    """(line, number) of every number outside code that reads as a measured result.

    A line counts if it names an agent or regret, or is a table row. On it, a ratio ("3.6x"), a decimal with
    three or more significant digits ("0.751", "27.6") and an integer of 100 or more that is not a power of 2
    or of 10 (a regret, not a horizon) read as results.
    """
    found = []
    inside = False
    for number, line in enumerate(text.splitlines(), start=1):
        if line.strip().startswith("```"):
            inside = not inside
            continue
        if inside or not (RESULT_CONTEXT.search(line) or line.lstrip().startswith("|")):
            continue
        prose = re.sub(r"`[^`]*`", "", line)                  # inline code: names and parameters
        for m in NUMBER.finditer(prose):
            text_value, ratio = m.group(1), m.group(2)
            value = float(text_value.replace(",", ""))
            digits = len(text_value.replace(",", "").replace(".", "").lstrip("0"))
            if ratio or ("." in text_value and digits >= 3) or (
                    "." not in text_value and value >= 100 and not _round(int(value))):
                found.append((number, text_value + (ratio or "")))
    return found


def _round(n: int) -> bool:
    """Powers of 2 and of 10 (horizons, sizes) and years."""
    return n & (n - 1) == 0 or re.fullmatch(r"10*", str(n)) is not None or 1990 <= n <= 2100


def generated_text() -> str:
    if not GENERATED.is_dir():
        return ""
    return "\n".join(p.read_text(encoding="utf-8", errors="replace") for p in GENERATED.rglob("*.md"))


def untraced_numbers(text: str, generated: str) -> list[tuple[int, str]]:
    """The result numbers of ``text`` that no generated file contains."""
    return [(line, n) for line, n in result_numbers(text) if n.rstrip("x") not in generated]


def test_the_detector_flags_a_typed_regret_and_accepts_a_generated_one():
    page = "intro\n`elim-jdp` scores 27476 against uniform's 218500, 3.6x more.\nT = 65536 rounds, 2^16.\n"
    assert [n for _, n in result_numbers(page)] == ["27476", "218500", "3.6x"]
    assert untraced_numbers(page, "") == [(2, "27476"), (2, "218500"), (2, "3.6x")]
    assert untraced_numbers(page, "| `elim-jdp` | 27476 |\n| `uniform` | 218500 | 3.6 |") == []
    table = "| agent | regret |\n|---|---|\n| `linucb-jdp` | 2787 / 8510 |\n"
    assert [n for _, n in result_numbers(table)] == ["2787", "8510"]
    code = "```python\nmake_agent('elim-jdp', epsilon=0.3)  # 27476\n```\n"
    assert result_numbers(code) == []
    assert result_numbers("the quick suite with 174 cells and d = 10, epsilon in {0.3, 1}\n") == []


@pytest.mark.parametrize("page", [*PAGES, ROOT / "README.md"], ids=lambda p: p.relative_to(ROOT).as_posix())
def test_no_results_number_is_typed_by_hand(page):
    bad = untraced_numbers(page.read_text(encoding="utf-8"), generated_text())
    assert not bad, (f"{page.relative_to(ROOT)} carries results numbers no generated file contains (line, number): "
                     f"{bad}; generate them with scripts/make_docs_tables.py instead of typing them")


# --- the generators ----------------------------------------------------------------------------------------------

def _script(name: str, *args: str) -> subprocess.CompletedProcess:
    """Run a script of this checkout, importing this checkout's ``privbandit`` (as the docs build does)."""
    import os

    path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    return subprocess.run([sys.executable, str(SCRIPTS / name), *args], capture_output=True, text=True, cwd=ROOT,
                          env={**os.environ, "MPLBACKEND": "Agg", "PYTHONPATH": path}, timeout=300, check=False)


@pytest.mark.slow
def test_the_catalogue_lists_every_agent_and_oracle_with_its_hyperparameters(tmp_path):
    from privbandit.agents import agent_names
    from privbandit.oracles import oracle_class, oracle_names

    proc = _script("make_docs_catalogue.py", "--out", str(tmp_path))
    assert proc.returncode == 0, proc.stderr[-3000:]
    agents = (tmp_path / "catalogue_agents.md").read_text()
    oracles = (tmp_path / "catalogue_oracles.md").read_text()
    for name in agent_names():
        assert f"### `{name}`" in agents, name
    for name in oracle_names():
        section = oracles.split(f"### `{name}`", 1)[1].split("\n### ", 1)[0]
        # the budget (privacy) has its own line; the audit seam (mechanism) is not a hyperparameter
        for arg in oracle_class(name).parameter_constraints:
            assert f"| `{arg}` |" in section or arg in ("privacy", "mechanism"), (name, arg)
        assert ("- privacy budget: required" in section) == (oracle_class(name).privacy_models[0] != "none")
    elim = agents.split("### `elim-jdp-ucb`", 1)[1].split("\n### ", 1)[0]
    assert "- class: {py:class}`~privbandit.agents.EliminationAgent`" in elim
    assert "| `play` | `'ucb'` | a PlayRule or one of 'spanner', 'ucb', 'greedy' |" in elim
    assert "| `first_epoch` | `256` | int in [1, inf) |" in elim
    assert "| `epsilon` | required (the privacy budget) |" in elim and "| `oracle` | `'iw-regression-dp'` |" in elim
    ridge = oracles.split("### `ridge`", 1)[1].split("\n### ", 1)[0]
    assert "| `lam` | `1` | real in (0.0, inf) |" in ridge and "privacy budget" not in ridge
    assert sorted(p.name for p in (tmp_path / "envcards").iterdir()) == [
        "PrivCBify-v0.md", "PrivGLMCB-v0.md", "PrivLinCB-v0.md"]
    for card in (tmp_path / "envcards").iterdir():  # included in the env pages: no code line that scrolls
        assert long_code_lines(card.read_text()) == [], card.name
    assert (tmp_path / "families" / "families.png").stat().st_size > 10_000


@pytest.fixture(scope="module")
def tiny_results(tmp_path_factory):
    """A results folder as ``privbandit bench`` writes one: results.csv and report.json with its command."""
    import pandas as pd

    from privbandit.agents import make_agent
    from privbandit.envs import PrivLinCBEnv
    from privbandit.sim import run

    folder = tmp_path_factory.mktemp("results")
    env = PrivLinCBEnv(family="rare-direction", dim=3, n_arms=3, horizon=128)
    tables = [run(make_agent(name, **kw), env, seed=seed, labels={"env": "tiny"})
              for name, kw in (("uniform", {}), ("elim-jdp", {"epsilon": 1.0})) for seed in range(3)]
    pd.concat(tables).to_csv(folder / "results.csv", index=False)
    (folder / "report.json").write_text(json.dumps({"notes": ["command: `privbandit run --the-test`"]}))
    return folder


@pytest.mark.slow
def test_the_results_page_prints_the_command_and_the_numbers_of_final_regret(tiny_results, tmp_path):
    import pandas as pd

    from privbandit.report import final_regret
    from privbandit.report.tables import format_interval

    sys.path.insert(0, str(SCRIPTS))
    try:
        from make_docs_tables import fmt
    finally:
        sys.path.remove(str(SCRIPTS))
    proc = _script("make_docs_tables.py", str(tiny_results), "--out", str(tmp_path))
    assert proc.returncode == 0, proc.stderr[-3000:]
    page = (tmp_path / "results.md").read_text()
    assert "privbandit run --the-test" in page
    final = final_regret(pd.read_csv(tiny_results / "results.csv"))
    assert len(final) == 2
    for row in final.itertuples():
        assert f"| `{row.agent}` |" in page and f"| {fmt(row.mean)} | [{fmt(row.ci_low)}, {fmt(row.ci_high)}] |" in page
    assert list((tmp_path / "figures").glob("*.png"))
    # it opens with the best private agent per board, counted per privacy model, and its ratio to the best
    # non-private agent, computed from the same table
    best = page.split("### Best private agent per board", 1)[1].split("\n### ", 1)[0]
    mean, rows = final.set_index("agent")["mean"], final.set_index("agent")
    # on this tiny bandit elim-jdp's interval reaches uniform play's: the best private agent says so
    assert "jdp: `elim-jdp` on 1 of 1 (1 of them no better than uniform or worse)." in best
    interval = format_interval(*rows.loc["elim-jdp", ["mean", "ci_low", "ci_high"]])
    assert f"| elim-jdp | {interval} | uniform | {fmt(mean['uniform'])} | " \
           f"{fmt(mean['elim-jdp'] / mean['uniform'])} | no better than uniform |" in best
    assert f"| {fmt(mean['elim-jdp'])} | [{fmt(rows.loc['elim-jdp', 'ci_low'])}, " \
           f"{fmt(rows.loc['elim-jdp', 'ci_high'])}] | no better than uniform |" in page


@pytest.mark.slow
def test_the_results_page_with_boards_prints_the_leaderboard_of_each_env(tiny_results, tmp_path):
    import pandas as pd

    from privbandit.report.leaderboard import leaderboard_markdown, ranked_boards

    proc = _script("make_docs_tables.py", str(tiny_results), "--boards", "--out", str(tmp_path))
    assert proc.returncode == 0, proc.stderr[-3000:]
    page = (tmp_path / "results.md").read_text()
    board = leaderboard_markdown(ranked_boards([pd.read_csv(tiny_results / "results.csv")]), level=4)
    assert "privbandit run --the-test" in page and board in page
    assert "#### tiny, T=128, jdp eps=1" in page and "minus uniform (paired 95% CI)" in page


@pytest.mark.slow
def test_the_results_page_refuses_a_folder_without_results(tmp_path):
    proc = _script("make_docs_tables.py", str(tmp_path), "--out", str(tmp_path / "out"))
    assert proc.returncode == 2 and "results.csv" in proc.stderr and "privbandit bench" in proc.stderr


@pytest.mark.slow
def test_the_interop_page_generator_renders_the_obp_file_and_times_the_render(tmp_path):
    data = json.loads((DOCS / "data" / "obp_offpolicy.json").read_text())
    proc = _script("make_docs_interop.py", "--out", str(tmp_path))
    assert proc.returncode == 0, proc.stderr[-3000:]
    obp_table = (tmp_path / "obp_offpolicy.md").read_text()
    assert data["command"] in obp_table and f"OBP {data['obp_version']}" in obp_table
    for name, est in data["estimates"].items():
        row = next(line for line in obp_table.splitlines() if line.startswith(f"| {name}"))
        assert row.endswith(f"| {data['truth'][name]:+.4f} | {est['ipw']:+.4f} | {est['dm']:+.4f} | "
                            f"{est['dr']:+.4f} | {est['dm_obp_ridge']:+.4f} |"), row
    cost = (tmp_path / "render_cost.md").read_text()
    assert "python scripts/make_docs_interop.py" in cost
    assert [line.split("|")[1].strip() for line in cost.splitlines() if re.match(r"\| \d", line)] == ["10", "100"]
    page = (DOCS / "guide" / "interop_and_rendering.md").read_text()
    ansi_block = next(body for _, tag, body in fenced_blocks(page) if tag == "python" and "ansi" in body)
    printed = run_block(ansi_block, tmp_path)
    assert printed.returncode == 0 and printed.stdout == (tmp_path / "ansi_example.txt").read_text()


@pytest.mark.slow
def test_the_interop_page_generator_refuses_a_missing_obp_file(tmp_path):
    proc = _script("make_docs_interop.py", "--out", str(tmp_path), "--obp-data", str(tmp_path / "none.json"))
    assert proc.returncode == 2 and "obp_offpolicy.py" in proc.stderr


@pytest.mark.slow
def test_the_link_check_finds_a_missing_page_and_a_missing_anchor(tmp_path):
    (tmp_path / "guide").mkdir()
    (tmp_path / "index.html").write_text('<a href="guide/a.html#there">ok</a> <a href="guide/b.html">gone</a>'
                                         ' <a href="https://example.org/x">external</a> <img src="_images/f.png">')
    (tmp_path / "guide" / "a.html").write_text('<h1 id="there">A</h1><a href="../index.html#nowhere">bad</a>')
    proc = _script("check_docs_links.py", str(tmp_path))
    assert proc.returncode == 1
    assert sorted(proc.stdout.splitlines()) == ["guide/a.html: ../index.html#nowhere (no anchor)",
                                                "index.html: _images/f.png (no file)",
                                                "index.html: guide/b.html (no file)"]
    (tmp_path / "guide" / "b.html").write_text("<p>B</p>")
    (tmp_path / "_images").mkdir()
    (tmp_path / "_images" / "f.png").write_bytes(b"png")
    (tmp_path / "guide" / "a.html").write_text('<h1 id="there">A</h1><a href="../index.html">fine</a>')
    assert _script("check_docs_links.py", str(tmp_path)).returncode == 0


CODE_WIDTH = 76
"""The longest code line an env page shows without a horizontal scroll bar (furo's text column at 1280 px)."""


def long_code_lines(text: str, width: int = CODE_WIDTH) -> list[str]:
    """The lines longer than ``width`` inside the fenced code blocks of a markdown page (directives such as
    ```{include} are not code)."""
    out, fence = [], None
    for line in text.splitlines():
        s = line.strip()
        if fence is None and s.startswith("```"):
            fence = "directive" if s.startswith("```{") else "code"
        elif fence is not None and s == "```":
            fence = None
        elif fence == "code" and len(line) > width:
            out.append(line)
    return out


def test_long_code_lines_finds_only_code():
    page = "x" * 90 + "\n```python\nshort\n" + "y" * 80 + "\n```\n```{include} " + "z" * 90 + "\n```\n"
    assert long_code_lines(page) == ["y" * 80]


def test_no_code_block_on_the_env_pages_scrolls():
    for page in sorted((DOCS / "guide" / "environments").glob("*.md")):
        assert long_code_lines(page.read_text()) == [], page.name


USER_FACING = [DOCS / "tutorials" / "own_agent.md", ROOT / "README.md",
               *sorted((ROOT / "examples" / "my_agent").rglob("*.py"))]


@pytest.mark.parametrize("path", USER_FACING, ids=lambda p: str(p.relative_to(ROOT)))
def test_user_facing_code_imports_only_public_names(path):
    """What a user copies (the tutorial, the README, the example plugin) names no private module or name of
    privbandit: ``privbandit._validation``, ``privbandit.agents._oracle_arg`` and the like."""
    private = re.findall(r"privbandit(?:\.\w+)*\._\w+|from privbandit(?:\.\w+)* import [^\n]*(?<!as )\b_\w+",
                         path.read_text())
    assert not private, f"{path.name} uses private names of privbandit: {private}"


# --- the docs extra alone builds the docs -------------------------------------------------------------------------

BLOCK_IMPORTS = """
import importlib, importlib.abc, sys
blocked = set(sys.argv[1].split(",")) - {""}
class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in blocked:
            raise ImportError(f"{name} is blocked")
sys.meta_path.insert(0, Block())
for module in sys.argv[2].split(","):
    importlib.import_module(module)
print(",".join(sorted({m.partition(".")[0] for m in sys.modules})))
"""
"""Import the modules ``argv[2]`` with the top-level modules ``argv[1]`` made unimportable; print the
top-level modules then loaded."""


def _requirement_names(requirements: list[str]) -> set[str]:
    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    return {canonicalize_name(Requirement(r).name) for r in requirements}


def _distributions(modules: set[str]) -> dict[str, set[str]]:
    """Distribution (canonical name) -> the given top-level modules it provides: by the installed
    distributions' records, else by the module's name (``myst_nb`` is ``myst-nb``)."""
    from importlib.metadata import packages_distributions

    from packaging.utils import canonicalize_name

    installed = packages_distributions()
    out: dict[str, set[str]] = {}
    for module in modules:
        for dist in installed.get(module, [module]):
            out.setdefault(canonicalize_name(dist), set()).add(module)
    return out


def _code_imports(code: str) -> set[str]:
    """The top-level modules the ``import`` and ``from ... import`` statements of ``code`` name (not relative
    ones; IPython's magic lines left out)."""
    import ast

    code = "\n".join(line for line in code.splitlines() if not line.lstrip().startswith(("%", "!")))  # magics
    names = set()
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.Import):
            names |= {a.name.partition(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            names.add(node.module.partition(".")[0])
    return names


def docs_build_code() -> list[str]:
    """The code a docs build runs beside the package: conf.py, the scripts it runs, the executed tutorials'
    code cells and the notebooks' code cells."""
    conf = (DOCS / "conf.py").read_text(encoding="utf-8")
    scripts = sorted(set(re.findall(r'"scripts" / "(\w+\.py)"', conf)))
    assert {"make_docs_catalogue.py", "make_docs_tables.py"} <= set(scripts), scripts
    code = [conf] + [(SCRIPTS / s).read_text(encoding="utf-8") for s in scripts]
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        code += [body for _, tag, body in fenced_blocks(text) if tag.startswith("{code-cell}")]
    for notebook in DOCS.rglob("*.ipynb"):
        if "_build" not in notebook.parts and "jupyter_execute" not in notebook.parts:
            cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
            code += ["".join(c["source"]) for c in cells if c["cell_type"] == "code"]
    return code


@pytest.mark.slow
def test_the_docs_extra_holds_every_optional_package_the_docs_import():
    """``pip install -e ".[docs]"`` alone builds the docs: every optional package (in an extra, not a
    dependency) that the API reference's modules need to import, or that the build's code imports, is in the
    ``docs`` extra; the real-data env of the quick suite the results page runs needs the ``data`` extra."""
    tomllib = pytest.importorskip("tomllib", reason="reading pyproject.toml needs Python 3.11")
    pytest.importorskip("coba", reason="the API reference's modules import only with the test extra")
    import ast

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    extras = {k: _requirement_names(v) for k, v in project["optional-dependencies"].items()}
    optional = set().union(*extras.values()) - _requirement_names(project["dependencies"])
    conf = {node.targets[0].id: node.value for node in ast.parse((DOCS / "conf.py").read_text(encoding="utf-8")).body
            if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name)}
    modules = ",".join(m for m, _ in ast.literal_eval(conf["PUBLIC_MODULES"]))
    assert "privbandit.integrations.coba" in modules
    loaded = subprocess.run([sys.executable, "-c", BLOCK_IMPORTS, "", modules], capture_output=True, text=True,
                            check=True, cwd=ROOT).stdout.strip().split(",")
    needed = set()
    for dist, tops in _distributions(set(loaded)).items():
        if dist in optional:  # loaded: needed if the import fails without it
            blocked = subprocess.run([sys.executable, "-c", BLOCK_IMPORTS, ",".join(tops), modules],
                                     capture_output=True, text=True, check=False, cwd=ROOT)
            needed |= {dist} if blocked.returncode != 0 else set()
    built = set().union(*(_code_imports(code) for code in docs_build_code()))
    sphinx = {e.partition(".")[0] for e in ast.literal_eval(conf["extensions"])}
    sphinx.add(ast.literal_eval(conf["html_theme"]))
    needed |= set(_distributions(built | sphinx)) & optional
    assert {"myst-nb", "furo"} <= needed  # the extensions and the theme are found
    assert "coba" in needed  # the API reference imports privbandit.integrations.coba
    missing = (needed | extras["data"]) - extras["docs"]
    assert not missing, f"the docs import {sorted(missing)}: add them to the docs extra of pyproject.toml"
