"""Data flows one way: stream < features < models < export < serve < stairsense (README "Layout").

Every ``.py`` file of the top packages is parsed with :mod:`ast` (nothing is imported, so an
import inside a function counts too). A module may import from its own layer or a lower one, and
from another top package only through public names: no ``_module`` in the path and no ``_name``
imported. Inside one top package (sub-packages included) private imports are fine.

Two rooms are closed further (:data:`ONLY_FROM`): the server (``stairsense.serve``) is imported by
the command line only, and the log files (``stairsense.stream.io``) by nothing else in ``stream``
but its ``__init__``: the front-end stages read arrays, never files.
"""
from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

#: Folder -> (top package, layer). Higher layers may import lower ones, never the reverse.
TOP_PACKAGES = {
    "stream": ("stairsense.stream", 0),
    "features": ("stairsense.features", 1),
    "models": ("stairsense.models", 2),
    "export": ("stairsense.export", 3),
    "stairsense": ("stairsense", 5),
}
_LAYER = dict(TOP_PACKAGES.values())
_LAYER["stairsense.serve"] = 4  # a folder of stairsense/, and a layer of its own

#: Closed room -> (the part of the tree the rule covers, the modules or packages there that may
#: import the room). The package ``__init__`` of the covered part re-exports and may import it too.
ONLY_FROM = {
    "stairsense.serve": ("stairsense", ("stairsense.serve", "stairsense.cli", "stairsense._cli_serve")),
    "stairsense.stream.io": ("stairsense.stream", ("stairsense.stream.io",)),
}


def _module_name(path: Path, root: Path) -> tuple[str, bool]:
    """Dotted name of the module at ``path`` and whether it is a package ``__init__``."""
    rel = path.relative_to(root)
    top, _ = TOP_PACKAGES[rel.parts[0]]
    parts = list(rel.parts[1:-1])
    is_package = rel.name == "__init__.py"
    if not is_package:
        parts.append(rel.stem)
    return ".".join([top, *parts]), is_package


def _top_of(module: str) -> str:
    """The top package a dotted ``stairsense...`` name belongs to."""
    parts = module.split(".")
    if len(parts) >= 2 and f"stairsense.{parts[1]}" in _LAYER:
        return f"stairsense.{parts[1]}"
    return "stairsense"


def _within(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def _closed_room_violation(source: str, is_package: bool, target: str) -> str | None:
    """Why ``source`` may not import ``target`` under :data:`ONLY_FROM`, or None."""
    for room, (covered, allowed) in ONLY_FROM.items():
        if not _within(target, room) or not _within(source, covered) or (is_package and source == covered):
            continue
        if not any(_within(source, a) for a in allowed):
            return f"only {', '.join(allowed)} may import {room}"
    return None


def _is_private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _imports(tree: ast.AST, module: str, is_package: bool):
    """``(line, target module, imported names, source text)`` of each stairsense import."""
    package = module if is_package else module.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "stairsense":
                    yield node.lineno, alias.name, [], f"import {alias.name}"
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.split(".")[0] != "stairsense":
                continue
            names = [a.name for a in node.names]
            yield node.lineno, target, names, f"from {'.' * node.level}{node.module or ''} import {', '.join(names)}"


def layering_violations(root: Path) -> list[str]:
    """One line per forbidden import under ``root``: ``file:line: import -- why``."""
    found = []
    for folder in TOP_PACKAGES:
        for path in sorted((root / folder).rglob("*.py")):
            module, is_package = _module_name(path, root)
            source_top = _top_of(module)
            tree = ast.parse(path.read_text(), filename=str(path))
            for line, target, names, text in _imports(tree, module, is_package):
                target_top = _top_of(target)
                where = f"{path.relative_to(root)}:{line}: {text}"
                closed = _closed_room_violation(module, is_package, target)
                if closed:
                    found.append(f"{where} -- {closed}")
                elif _LAYER[target_top] > _LAYER[source_top]:
                    found.append(f"{where} -- {source_top} (layer {_LAYER[source_top]}) imports the higher "
                                 f"layer {target_top} (layer {_LAYER[target_top]})")
                elif target_top != source_top:
                    inner = target[len(target_top):].split(".")
                    private = [p for p in inner if _is_private(p)] + [n for n in names if _is_private(n)]
                    if private:
                        found.append(f"{where} -- private name(s) {private} of another package; import "
                                     f"{target_top}'s public names instead")
    return found


def test_no_upward_or_private_cross_package_imports():
    found = layering_violations(REPO)
    assert not found, "layering violations:\n" + "\n".join(found)


def test_checker_catches_bad_imports(tmp_path):
    """The checker itself can fail: a fake tree with each kind of forbidden import."""
    for folder in TOP_PACKAGES:
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "__init__.py").write_text("")
    (tmp_path / "stream" / "_csv.py").write_text("from stairsense import PipelineConfig\n")
    (tmp_path / "models" / "sub").mkdir()
    (tmp_path / "models" / "sub" / "_m.py").write_text(
        "def f():\n    from stairsense.stream._csv import read\n"
        "from stairsense.features import _private\n"
        "from .. import _ok\n"  # same top package: allowed
        "from stairsense.stream import read_log\n"  # public, lower layer: allowed
    )
    (tmp_path / "features" / "x.py").write_text("import stairsense.export\n")
    (tmp_path / "stairsense" / "pipeline.py").write_text("from stairsense.serve import make_app\n")
    (tmp_path / "stream" / "_frontend.py").write_text("from .io import read_log\n")
    (tmp_path / "stairsense" / "_cli_serve.py").write_text("from stairsense.serve import make_app\n")  # allowed
    found = layering_violations(tmp_path)
    assert len(found) == 6, found
    assert any(f.startswith("stairsense/pipeline.py:1:") and "may import stairsense.serve" in f for f in found)
    assert any(f.startswith("stream/_frontend.py:1:") and "may import stairsense.stream.io" in f for f in found)
    assert any(f.startswith("stream/_csv.py:1:") and "higher" in f for f in found)
    assert any(f.startswith("models/sub/_m.py:2:") and "['_csv']" in f for f in found)
    assert any(f.startswith("models/sub/_m.py:3:") and "['_private']" in f for f in found)
    assert any(f.startswith("features/x.py:1:") and "higher" in f for f in found)
