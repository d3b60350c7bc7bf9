"""The docs stay true to the code: every repo path README.md and docs/*.md name exists, every name
they write beside a file is defined in that file, and nothing points to the shell's old files.

What counts, read from the spans in backticks (fenced code blocks left out):
- A path: the span's first word, when it has a "/" and begins with an entry of the repo's top
  level (`sim/rules.py`, `ui/views/`, `build.py`), or is a bare file name ending in .py, .js, .css,
  .html, .md or .toml (then it must exist somewhere in the repo: README's `steps.py`). Not checked:
  spans with a placeholder or a pattern (`site/<module>.py`, `?theme=light|dark`), what the build
  or the environment makes (`dist/site/`, `.cache/`, `.venv/`), and upstream files, whose first
  part is no entry of this repo (`vllm/v1/kv_cache_interface.py`, `src/llama-context.cpp`).
- A named place: a path span followed, after white space only, by a span holding a name
  (`sim/rules.py` `RULES`, `ui/worker.py` `Link.receive`). In a Python file the name must be
  defined at module level (def, class, assignment, import), and `A.b` in class A's body; in a
  JavaScript file declared (function, const, let, class, a method or a property); elsewhere it
  must appear as a word. docs/extending.md writes every place it lists this way.
"""

from __future__ import annotations

import ast
import os
import re
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOCS = sorted((ROOT / "docs").glob("*.md")) + [ROOT / "README.md"]
MADE = {".git", ".venv", ".cache", "dist", "node_modules", "__pycache__", ".pytest_cache",
        ".ruff_cache"}  # made by the build, the tools or the environment, never named as sources
FILE_NAME = re.compile(r"^[A-Za-z0-9_][\w.-]*\.(py|js|css|html|md|toml)$")
NAME = re.compile(r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*$")
NOT_A_PATH = ("<", ">", "*", "{", "|", "?", "=", "@", "://", "[")
SPAN = re.compile(r"`([^`\n]+)`")
FENCE = re.compile(r"^```.*?^```", re.S | re.M)

# The shell's files before it became assets/js/: no file may point to them any more.
OLD_FILES = ("assets/" + "player.js", "assets/" + "lab.js")
OLD_FILES_SEARCHED = ("sim", "ui", "assets", "sitebuild", "bench", "tests", "docs", "site",
                      "README.md", "build.py", "serve.py", "Makefile")
# Still naming them, in files others were editing when this test was written (issue 36): fix
# the comment there (assets/js/player.js, assets/js/link.js) and drop the entry.
TEXT = {".py", ".js", ".css", ".html", ".md", ".toml", ".json", ".txt", ".sh", ".cfg"}


def spans(text: str) -> list[tuple[int, int, str, int]]:
    """(start, end, content, line) of every span in backticks outside fenced code blocks."""
    text = FENCE.sub(lambda m: "\n" * m.group(0).count("\n"), text)
    return [(m.start(), m.end(), m.group(1), text.count("\n", 0, m.start()) + 1)
            for m in SPAN.finditer(text)]


@cache
def top_level() -> frozenset[str]:
    return frozenset(p.name for p in ROOT.iterdir() if p.name not in MADE)


def files_under(base: Path) -> list[Path]:
    """Every file under `base` (or `base` itself), leaving out what the tools make."""
    if base.is_file():
        return [base]
    found = []
    for folder, dirs, names in os.walk(base):
        dirs[:] = [d for d in dirs if d not in MADE]
        found += [Path(folder) / name for name in names]
    return found


@cache
def file_names() -> frozenset[str]:
    return frozenset(p.name for p in files_under(ROOT))


def repo_path(span: str) -> str | None:
    """The repo path a span names (see the module docstring), or None."""
    words = span.split()
    word = words[0] if words else ""
    if any(mark in word for mark in NOT_A_PATH) or word.startswith(("../", "./")):
        return None
    if "/" in word:
        return word if word.split("/")[0] in top_level() else None
    return word if FILE_NAME.match(word) else None


def exists(path: str) -> bool:
    return (ROOT / path).exists() if "/" in path else path in file_names()


def named_places(doc: Path) -> list[tuple[str, str, int]]:
    """(path, name, line) of every path span followed by a name span (white space between)."""
    text = doc.read_text()
    found = spans(text)
    places = []
    for (_, end, first, line), (start, _, second, _) in zip(found, found[1:]):
        path = repo_path(first)
        if path and path == first and "/" in path and NAME.match(second) \
                and not text[end:start].strip():
            places.append((path, second, line))
    return places


@cache
def python_names(path: str) -> dict[str, frozenset[str]]:
    """Names defined at a module's top level -> the names defined in each class's body."""
    names: dict[str, frozenset[str]] = {}

    def targets(node) -> list[str]:
        found = node.targets if isinstance(node, ast.Assign) else [node.target]
        return [n.id for t in found for n in ast.walk(t) if isinstance(n, ast.Name)]

    def visit(body) -> None:
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                names[node.name] = frozenset()
            elif isinstance(node, ast.ClassDef):
                members = set()
                for item in node.body:
                    if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                        members.add(item.name)
                    elif isinstance(item, (ast.Assign, ast.AnnAssign)):
                        members.update(targets(item))
                names[node.name] = frozenset(members)
            elif isinstance(node, (ast.Assign, ast.AnnAssign)):
                names.update(dict.fromkeys(targets(node), frozenset()))
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                for alias in node.names:
                    names[alias.asname or alias.name.split(".")[0]] = frozenset()
            elif isinstance(node, ast.If):
                visit(node.body), visit(node.orelse)
            elif isinstance(node, ast.Try):
                visit(node.body), visit(node.orelse), visit(node.finalbody)
                for handler in node.handlers:
                    visit(handler.body)

    visit(ast.parse((ROOT / path).read_text()).body)
    return names


def js_declares(text: str, name: str) -> bool:
    n = re.escape(name)
    return any(re.search(p, text, re.M) for p in (
        rf"\bfunction\s+{n}\b", rf"\b(?:const|let|var|class)\s+{n}\b",
        rf"^\s*(?:async\s+)?{n}\s*\([^)]*\)\s*\{{", rf"^\s*{n}\s*:", rf"\b{n}\s*:\s", rf"\bexport\s*\{{[^}}]*\b{n}\b"))


def defined(path: str, name: str) -> bool:
    parts = name.split(".")
    if path.endswith(".py"):
        names = python_names(path)
        if parts[0] not in names:
            return False
        return len(parts) == 1 or (len(parts) == 2 and parts[1] in names[parts[0]])
    text = (ROOT / path).read_text()
    if path.endswith(".js"):
        return all(js_declares(text, part) for part in parts)
    return all(re.search(rf"\b{re.escape(part)}\b", text) for part in parts)


def test_every_path_the_docs_name_exists() -> None:
    checked, missing = 0, []
    for doc in DOCS:
        for _, _, span, line in spans(doc.read_text()):
            path = repo_path(span)
            if path is None:
                continue
            checked += 1
            if not exists(path):
                missing.append(f"{doc.relative_to(ROOT)}:{line}: {path}")
    assert not missing, "paths that do not exist:\n" + "\n".join(missing)
    assert checked >= 150, f"only {checked} paths read: has the way the docs write paths changed?"


def test_every_place_the_docs_name_is_defined_in_its_file() -> None:
    wrong = [f"{doc.relative_to(ROOT)}:{line}: `{path}` `{name}`"
             for doc in DOCS for path, name, line in named_places(doc)
             if not (ROOT / path).is_file() or not defined(path, name)]
    assert not wrong, "names not defined in the file written beside them:\n" + "\n".join(wrong)


def test_extending_names_its_places_in_each_section() -> None:
    """docs/extending.md lists its places as file-and-name pairs, in each of its four sections."""
    doc = ROOT / "docs" / "extending.md"
    starts = [i + 1 for i, line in enumerate(doc.read_text().splitlines()) if line.startswith("## (")]
    assert len(starts) == 4, "expected the sections (a) to (d)"
    lines = [line for _, _, line in named_places(doc)]
    for first, end in zip(starts, [*starts[1:], 10**9]):
        assert sum(first < line < end for line in lines) >= 10, f"section at line {first}"


def test_the_checks_catch_a_wrong_place() -> None:
    """The checks can fail: a name that is not in its file, a path that is not in the repo."""
    assert defined("sim/rules.py", "RULES") and defined("ui/worker.py", "Link.receive")
    assert not defined("sim/rules.py", "NO_SUCH_NAME") and not defined("ui/worker.py", "Link.nothing")
    assert defined("assets/js/player.js", "player.show") and not defined("assets/js/player.js", "player.nothing")
    assert repo_path("sim/no_such_file.py") and not exists("sim/no_such_file.py")
    assert repo_path("vllm/v1/kv_cache_interface.py") is None and repo_path("site/<module>.py") is None
    assert exists("steps.py") and not exists("no_such_file.py")


def test_no_file_points_to_the_shells_old_files() -> None:
    found = []
    for entry in OLD_FILES_SEARCHED:
        for path in files_under(ROOT / entry):
            rel = path.relative_to(ROOT).as_posix()
            if path.suffix not in TEXT and path.name != "Makefile":
                continue
            text = path.read_text(errors="replace")
            found += [f"{rel}: {old}" for old in OLD_FILES if old in text]
    assert not found, ("these name files that are now assets/js/player.js and the modules of "
                       "assets/js/:\n" + "\n".join(found))
