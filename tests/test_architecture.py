"""The house rules, checked over the import graph of src/aidp (ast only, nothing run).

(a) no import circle: every ``import``/``from … import`` of an aidp module counts,
    function-local ones too (a lazy import is still a dependency), and so do imports
    under ``if TYPE_CHECKING:``: a module that names another's type depends on it, and
    mypy reads them both. A lower module that needs something of a higher one's object
    says what in a small ``Protocol`` of its own (``aidp.tasklist.lock.Writer``);
(b) no module imports another module's ``_private`` name (``from m import _x``, or
    ``m._x`` on a module it imported): a name another module needs is public;
(c) no import from a lower layer to a higher one (LAYERS below, as docs/architecture.md
    "Layers" draws them), type-checking imports included as in (a);
(d) no file in src/ over MAX_LINES lines;
(e) no surface (cli/, agent/, toolserver/, board/) writes through the domain itself: a
    claim, a release, a lease renewed, a task filed, moved, edited, noted or linked, a
    TODO list changed, an undo, an import go through the use cases (app/), which every
    surface shares (DOMAIN_WRITES: the domain's writers, by module).

What counts as an import, for (a) and (c):
- ``import aidp.p.m`` and ``from aidp.p.m import x`` import ``aidp.p`` too: Python runs
  a package's ``__init__`` before any module in it, so a module that asks for
  ``aidp.git.runner`` runs all that ``aidp/git/__init__.py`` imports. A module inside
  the package is exempt (its package is set up before it runs), and so is ``aidp``'s own
  ``__init__`` (core). So a package's ``__init__`` may not sit above a module that a
  lower layer imports: such a module lives outside the package (aidp.tasklist.git_runner).
- ``importlib.import_module(name)`` and ``__import__(name)`` import what ``name`` says:
  a string literal, or an f-string whose literal head is ``"aidp.<package>."`` (every
  module of that package). Any other argument is refused (``unseen_dynamic``): the
  graph must see every edge. A package that loads its own modules by name (a registry:
  ``aidp.interchange.module(fmt)``) closes no circle with them: they are loaded after
  it, and import it as their base.

Today's violations are listed in the KNOWN_* sets. Remove an entry when you fix it: the
test fails on a new violation and on a KNOWN entry that no longer occurs, so the lists
only shrink. Adding an entry is not a fix.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"
MAX_LINES = 450

# Top to bottom: each layer is folders of src/aidp (a module's layer is its top folder
# under aidp; `aidp/__init__.py` and `__main__.py` stand alone). A module may import its
# own layer and the ones below, never one above. docs/architecture.md draws the same.
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("entry", ("__main__", "cli")),
    ("surfaces", ("agent", "toolserver", "board")),
    ("use cases", ("app",)),
    ("views", ("views",)),
    ("domain", ("backlog", "todos", "interchange", "git", "trust")),
    ("store", ("store",)),
    ("tasklist", ("tasklist",)),
    ("core", ("core", "__init__")),
)
# The modules that may sit loose at the top of src/aidp (everything else is in a folder).
LOOSE = {"__init__.py", "__main__.py"}

# Remove an entry when you fix it (the test fails while a fixed entry stays listed).
# Circles: the sorted modules of each strongly connected component.
KNOWN_CIRCLES: set[tuple[str, ...]] = set()
# Private imports: (importer, module the name is taken from, name).
KNOWN_PRIVATE: set[tuple[str, str, str]] = set()
# Upward imports: (importer, imported module).
KNOWN_UPWARD: set[tuple[str, str]] = set()
# Files over MAX_LINES: path under src/.
KNOWN_LONG: set[str] = {
}
# Surfaces calling a domain writer: (importer, module, name).
KNOWN_DOMAIN_WRITES: set[tuple[str, str, str]] = set()

# The domain's writers (a module and the modules inside it): what only app/ calls.
DOMAIN_WRITES: dict[str, set[str]] = {
    "aidp.backlog.queue": {"claim", "release", "release_left", "renew", "file", "edit",
                           "note", "block", "unblock"},
    "aidp.backlog.tasks": {"add", "set_status"},
    "aidp.backlog.history": {"undo"},
    "aidp.todos": {"edit", "change"},
    "aidp.interchange": {"import_items"},
}


@dataclass(frozen=True)
class Import:
    importer: str
    target: str
    name: str | None  # a name taken from target (None: the module itself)
    line: int
    how: str = "import"  # or "package" (its __init__, run first), "dynamic" (import_module)


def modules(src: Path) -> dict[str, Path]:
    found = {}
    for path in sorted((src / "aidp").rglob("*.py")):
        parts = list(path.relative_to(src).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def _absolute(module: str, is_package: bool, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    base = module.split(".")
    if not is_package:
        base.pop()
    base = base[: len(base) - (node.level - 1)]
    return ".".join([*base, *([node.module] if node.module else [])])


class _Collector(ast.NodeVisitor):
    def __init__(self, module: str, is_package: bool, known: dict[str, Path]) -> None:
        self.module = module
        self.is_package = is_package
        self.known = known
        self.imports: list[Import] = []
        self.aliases: dict[str, str] = {}  # local name -> aidp module bound to it
        self.private_attrs: list[tuple[str, str, int]] = []
        self.unseen: list[tuple[str, int]] = []  # dynamic imports of names it cannot tell

    def _add(self, target: str, name: str | None, line: int, how: str = "import") -> None:
        self.imports.append(Import(self.module, target, name, line, how))
        parts = target.split(".")
        for end in range(2, len(parts)):  # the packages it is in, whose __init__ runs first
            package = ".".join(parts[:end])
            own = self.module == package or self.module.startswith(package + ".")
            if package in self.known and not own:
                self.imports.append(Import(self.module, package, None, line, "package"))

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        called = func.id if isinstance(func, ast.Name) else \
            func.attr if isinstance(func, ast.Attribute) else ""
        if called in ("import_module", "__import__") and node.args:
            for target in self._dynamic_targets(node.args[0]):
                self._add(target, None, node.lineno, "dynamic")
        self.generic_visit(node)

    def _dynamic_targets(self, arg: ast.expr) -> list[str]:
        if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
            if arg.value in self.known:
                return [arg.value]
        elif isinstance(arg, ast.JoinedStr) and arg.values:
            head = arg.values[0]
            if isinstance(head, ast.Constant) and isinstance(head.value, str) \
                    and head.value.endswith(".") and head.value[:-1] in self.known:
                found = [m for m in self.known if m.startswith(head.value)]
                if found:
                    return found
        self.unseen.append((self.module, arg.lineno))
        return []

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            if alias.name in self.known:
                self._add(alias.name, None, node.lineno)
                if alias.asname:
                    self.aliases[alias.asname] = alias.name

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        source = _absolute(self.module, self.is_package, node)
        if source not in self.known:
            return
        for alias in node.names:
            submodule = f"{source}.{alias.name}"
            if submodule in self.known:
                self._add(submodule, None, node.lineno)
                self.aliases[alias.asname or alias.name] = submodule
            else:
                self._add(source, alias.name, node.lineno)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if isinstance(node.value, ast.Name) and node.value.id in self.aliases:
            self.private_attrs.append((self.aliases[node.value.id], node.attr, node.lineno))
        self.generic_visit(node)


@dataclass(frozen=True)
class Graph:
    src: Path
    modules: dict[str, Path]
    imports: list[Import]
    attributes: list[tuple[str, str, str]]  # (module, module read from, attribute)
    unseen_dynamic: list[tuple[str, int]]  # (module, line) of an import_module it cannot read


def graph(src: Path = SRC) -> Graph:
    known = modules(src)
    imports: list[Import] = []
    attributes: list[tuple[str, str, str]] = []
    unseen: list[tuple[str, int]] = []
    for module, path in known.items():
        collector = _Collector(module, path.name == "__init__.py", known)
        collector.visit(ast.parse(path.read_text(encoding="utf-8"), str(path)))
        imports.extend(collector.imports)
        attributes.extend((module, source, attr) for source, attr, _ in collector.private_attrs)
        unseen.extend(collector.unseen)
    return Graph(src, known, imports, attributes, unseen)


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def circles(g: Graph) -> set[tuple[str, ...]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    edges: dict[str, set[str]] = {m: set() for m in g.modules}
    for imp in g.imports:
        registry = imp.how == "dynamic" and imp.target.startswith(imp.importer + ".")
        if imp.target != imp.importer and not registry:
            edges[imp.importer].add(imp.target)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: set[tuple[str, ...]] = set()
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.add(tuple(sorted(component)))
    return found


def private_imports(g: Graph) -> set[tuple[str, str, str]]:
    found = {
        (imp.importer, imp.target, imp.name)
        for imp in g.imports
        if imp.name is not None and _private(imp.name) and imp.target != imp.importer
    }
    found |= {
        (m, source, attr) for m, source, attr in g.attributes if _private(attr) and source != m
    }
    return found


def layer_of(module: str) -> int:
    parts = module.split(".")
    top = parts[1] if len(parts) > 1 else "__init__"
    for depth, (_, folders) in enumerate(LAYERS):
        if top in folders:
            return depth
    raise AssertionError(f"{module} is in no layer: its folder {top!r} is not in LAYERS "
                         "(tests/test_architecture.py) nor docs/architecture.md")


def upward_imports(g: Graph) -> set[tuple[str, str]]:
    return {
        (imp.importer, imp.target)
        for imp in g.imports
        if layer_of(imp.target) < layer_of(imp.importer)
    }


def long_files(g: Graph) -> set[str]:
    return {
        path.relative_to(g.src).as_posix()
        for path in g.modules.values()
        if len(path.read_text(encoding="utf-8").splitlines()) > MAX_LINES
    }


def domain_writes(g: Graph) -> set[tuple[str, str, str]]:
    """(surface module, domain module, writer) for each domain writer a surface names:
    imported by name, or read off a module it imported."""
    use_cases = layer_of("aidp.app")
    named = [(imp.importer, imp.target, imp.name) for imp in g.imports if imp.name]
    return {
        (importer, source, name)
        for importer, source, name in [*named, *g.attributes]
        if layer_of(importer) < use_cases
        for module, writers in DOMAIN_WRITES.items()
        if (source == module or source.startswith(module + ".")) and name in writers
    }


def _compare(kind: str, found: set[object], known: set[object]) -> None:
    new = sorted(found - known, key=repr)
    fixed = sorted(known - found, key=repr)
    lines = [f"new {kind} (fix it; do not list it): {item!r}" for item in new]
    lines += [f"fixed {kind}, remove it from the KNOWN list: {item!r}" for item in fixed]
    assert not lines, "\n".join(lines)


def test_every_module_has_a_layer() -> None:
    g = graph()
    for module in g.modules:
        layer_of(module)


def test_every_layer_is_folders() -> None:
    """The tree shows the architecture: every folder of src/aidp is in a layer, every
    layer's folder exists, and no module but LOOSE sits at the top."""
    top = SRC / "aidp"
    folders = {p.name for p in top.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    named = {f for _, names in LAYERS for f in names} - {"__init__", "__main__"}
    assert folders == named
    assert {p.name for p in top.glob("*.py")} == LOOSE


DOCS = SRC.parent / "docs" / "architecture.md"


def documented_layers(text: str) -> list[tuple[str, str]]:
    """(layer, folder) of each row of the "Layers" table of docs/architecture.md, in order."""
    table = text.split("\n## Layers\n", 1)[1].split("\n## ", 1)[0]
    rows = []
    for line in table.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) >= 2 and cells[1].startswith("`") and cells[1].endswith("/`"):
            rows.append((cells[0], cells[1].strip("`").rstrip("/")))
    return rows


def test_the_architecture_page_draws_the_tree() -> None:
    """docs/architecture.md names every folder of src/aidp with its layer, in the order
    of LAYERS, and no folder that is not there."""
    wanted = [(layer, folder) for layer, folders in LAYERS for folder in folders
              if folder not in ("__init__", "__main__")]
    assert documented_layers(DOCS.read_text(encoding="utf-8")) == wanted


def test_the_layers_table_is_read_row_by_row() -> None:
    page = ("# A\n\n## Layers\n\n| layer | folder | owns |\n|---|---|---|\n"
            "| entry | `cli/` | glue |\n| core | `core/` | values |\n\n## Next\n"
            "| x | `later/` | not in the table |\n")
    assert documented_layers(page) == [("entry", "cli"), ("core", "core")]


def test_no_import_circle() -> None:
    _compare("circle", set(circles(graph())), set(KNOWN_CIRCLES))


def test_no_private_import() -> None:
    _compare("private import", set(private_imports(graph())), set(KNOWN_PRIVATE))


def test_no_upward_import() -> None:
    _compare("upward import", set(upward_imports(graph())), set(KNOWN_UPWARD))


def test_surfaces_write_through_the_use_cases() -> None:
    _compare("domain write from a surface", set(domain_writes(graph())),
             set(KNOWN_DOMAIN_WRITES))


def test_the_domain_writes_check_sees_names_and_attributes(tmp_path: Path) -> None:
    package = "from aidp.backlog.queue.claims import claim, state\n"
    g = _graph_of(
        {
            "aidp/__init__.py": "",
            "aidp/backlog/__init__.py": "",
            "aidp/backlog/queue/__init__.py": package,
            "aidp/backlog/queue/claims.py": "def claim(): ...\ndef state(): ...\n",
            "aidp/app/__init__.py": "",
            "aidp/app/claiming.py": "from aidp.backlog import queue\nqueue.claim()\n",
            "aidp/cli/__init__.py": "",
            "aidp/cli/claims.py": "from aidp.backlog import queue\nqueue.claim()\n"
                                  "queue.state()\n",
            "aidp/agent/__init__.py": "",
            "aidp/agent/run.py": "from aidp.backlog.queue.claims import claim\n",
        },
        tmp_path,
    )
    assert domain_writes(g) == {("aidp.cli.claims", "aidp.backlog.queue", "claim"),
                                ("aidp.agent.run", "aidp.backlog.queue.claims", "claim")}


def test_every_dynamic_import_names_its_modules() -> None:
    assert graph().unseen_dynamic == []


def test_no_long_file() -> None:
    _compare(f"file over {MAX_LINES} lines", set(long_files(graph())), set(KNOWN_LONG))


def _graph_of(sources: dict[str, str], tmp: Path) -> Graph:
    for name, text in sources.items():
        path = tmp / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return graph(tmp)


def test_the_checks_see_what_they_claim(tmp_path: Path) -> None:
    g = _graph_of(
        {
            "aidp/__init__.py": "",
            "aidp/core/__init__.py": "",
            "aidp/tasklist/__init__.py": "",
            "aidp/core/model.py": "def f():\n    from aidp.tasklist import fold\n",
            "aidp/tasklist/fold.py": "from aidp.core.model import _hidden\n"
                                     "import aidp.core.errors as e\nx = e._code\n",
            "aidp/core/errors.py": "",
            "aidp/core/when.py": "from . import errors\n",
        },
        tmp_path,
    )
    # a function-local import closes a circle
    assert circles(g) == {("aidp.core.model", "aidp.tasklist.fold")}
    assert private_imports(g) == {
        ("aidp.tasklist.fold", "aidp.core.model", "_hidden"),
        ("aidp.tasklist.fold", "aidp.core.errors", "_code"),
    }
    # core is below tasklist: model's lazy import of fold (and of its package) is upward
    assert upward_imports(g) == {("aidp.core.model", "aidp.tasklist.fold"),
                                 ("aidp.core.model", "aidp.tasklist")}


def test_a_type_checking_import_is_an_arrow(tmp_path: Path) -> None:
    """A type named under ``if TYPE_CHECKING:`` is a dependency like any other: it closes
    a circle (the lock naming the log's class, which imports the lock) and may not point
    up a layer; a Protocol of the lower module's own closes neither."""
    g = _graph_of(
        {
            "aidp/__init__.py": "",
            "aidp/core/__init__.py": "",
            "aidp/tasklist/__init__.py": "",
            "aidp/tasklist/log.py": "from aidp.tasklist import lock, stamp\nclass TaskLog: ...\n",
            "aidp/tasklist/lock.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                                     "    from aidp.tasklist.log import TaskLog\n"
                                     "else:\n    pass\n",
            "aidp/tasklist/stamp.py": "from typing import Protocol\n"
                                      "class Writer(Protocol): ...\n",
            "aidp/core/errors.py": "import typing\nif typing.TYPE_CHECKING:\n"
                                   "    from aidp.tasklist import fold\n",
            "aidp/tasklist/fold.py": "",
        },
        tmp_path,
    )
    assert circles(g) == {("aidp.tasklist.lock", "aidp.tasklist.log")}
    assert upward_imports(g) == {("aidp.core.errors", "aidp.tasklist.fold"),
                                 ("aidp.core.errors", "aidp.tasklist")}


def test_a_package_init_and_a_dynamic_import_count_as_imports(tmp_path: Path) -> None:
    """The implicit import of a package's __init__ and import_module are edges too."""
    g = _graph_of(
        {
            "aidp/__init__.py": "",
            "aidp/core/__init__.py": "",
            "aidp/tasklist/__init__.py": "",
            "aidp/backlog/__init__.py": "",
            # the log (tasklist layer) asks a module of a domain package, lazily: the
            # package's __init__ runs first, and it imports what imports the log
            "aidp/tasklist/log.py": "def f():\n    from aidp.git.runner import run\n",
            "aidp/git/__init__.py": "from aidp.git import changes\n",
            "aidp/git/runner.py": "",
            "aidp/git/changes.py": "from aidp.git.runner import run\nfrom aidp.tasklist import log\n",
            # a registry loading its own modules by name: no circle, and seen
            "aidp/backlog/queue/__init__.py": "from importlib import import_module\n"
                                              "def m(name):\n"
                                              "    return import_module(f'aidp.backlog.queue.{name}')\n",
            "aidp/backlog/queue/claims.py": "from aidp.backlog.queue import m\n",
            "aidp/core/when.py": "def h():\n    return __import__('aidp.backlog.queue')\n",
            "aidp/core/model.py": "import importlib\ndef g(name):\n"
                                  "    return importlib.import_module(name)\n",
        },
        tmp_path,
    )
    assert circles(g) == {("aidp.git", "aidp.git.changes", "aidp.tasklist.log")}
    # log -> git only through the package's __init__; when -> queue only through __import__
    assert upward_imports(g) == {("aidp.tasklist.log", "aidp.git.runner"),
                                 ("aidp.tasklist.log", "aidp.git"),
                                 ("aidp.core.when", "aidp.backlog.queue"),
                                 ("aidp.core.when", "aidp.backlog")}
    assert ("aidp.backlog.queue", "aidp.backlog.queue.claims") in {
        (i.importer, i.target) for i in g.imports}
    assert g.unseen_dynamic == [("aidp.core.model", 3)]
