#!/usr/bin/python3
"""Checks that every module imports only what docs/architecture.md allows, and declares it.

The allowed arrows are the table between the `allowed-imports` markers in docs/architecture.md: one row
per target, the modules it may import (Perimeter modules, system-library targets and platform modules
such as Foundation). For every target of Package.swift the script reads the `import` lines of its Swift
files and fails when

- a target imports a module its row does not allow (a new arrow: change the table, and the design, first),
- a target imports a module of this package that Package.swift does not list among its dependencies
  (it builds only by accident, through another target's dependency), or
- a target has no row.

Test targets are checked like the others, with one rule of their own in the table (`tests`).
Run by `make test` (and so by CI); exits 1 with one line per problem. Python 3 standard library only.
"""
import json
import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "architecture.md"
IMPORT = re.compile(r"^\s*(?:@testable\s+|@_implementationOnly\s+)?(?:(?:public|package|internal|fileprivate|private)\s+)?import\s+(?:(?:struct|class|enum|func|protocol|typealias|var|let)\s+)?([A-Za-z_][A-Za-z0-9_]*)", re.M)


def allowed_imports():
    """The table: target name -> set of modules it may import."""
    text = DOC.read_text(encoding="utf-8")
    try:
        table = text.split("<!-- allowed-imports:begin -->", 1)[1].split("<!-- allowed-imports:end -->", 1)[0]
    except IndexError:
        sys.exit(f"check-architecture: {DOC} has no allowed-imports table")
    rows = {}
    for line in table.splitlines():
        cells = [cell.strip(" `") for cell in line.strip().strip("|").split("|")]
        if len(cells) != 2 or cells[0] in ("", "target") or set(cells[0]) <= set("-: "):
            continue
        modules = {m.strip(" `") for m in cells[1].split(",") if m.strip(" `—")}
        for target in (t.strip(" `") for t in cells[0].split(",")):
            rows[target] = modules
    return rows


def package_targets():
    """Package.swift's targets: name -> (folder, declared dependencies, is a test target)."""
    dump = subprocess.run(["swift", "package", "dump-package"], cwd=ROOT, capture_output=True, text=True)
    if dump.returncode != 0:
        sys.exit(f"check-architecture: swift package dump-package failed:\n{dump.stderr}")
    targets = {}
    for target in json.loads(dump.stdout)["targets"]:
        name, kind = target["name"], target["type"]
        if target.get("path"):
            folder = ROOT / target["path"]
        else:
            folder = ROOT / ("Tests" if kind == "test" else "Sources") / name
        declared = set()
        for dependency in target["dependencies"]:
            for value in dependency.values():
                declared.add(value[0])
        targets[name] = (folder, declared, kind == "test", kind == "system")
    return targets


def main():
    rows = allowed_imports()
    targets = package_targets()
    ours = set(targets)
    problems = []
    for name, (folder, declared, is_test, is_system) in sorted(targets.items()):
        if is_system:
            continue
        allowed = rows.get(name)
        if allowed is None and is_test:
            allowed = rows.get("tests", set()) | {name.removesuffix("Tests")}
        if allowed is None:
            problems.append(f"{name}: no row in the allowed-imports table of docs/architecture.md")
            continue
        if is_test and name in rows:
            allowed = allowed | rows.get("tests", set())
        for path in sorted(folder.rglob("*.swift")):
            for module in IMPORT.findall(path.read_text(encoding="utf-8")):
                where = path.relative_to(ROOT)
                if module not in allowed and "*" not in allowed:
                    problems.append(f"{where}: {name} imports {module}, which docs/architecture.md does not allow")
                if module in ours and module not in declared:
                    problems.append(f"{where}: {name} imports {module} without declaring it in Package.swift")
    for problem in sorted(set(problems)):
        print(f"check-architecture: {problem}")
    if problems:
        return 1
    print(f"check-architecture: {len(targets)} targets import only what docs/architecture.md allows")
    return 0


if __name__ == "__main__":
    sys.exit(main())
