#!/usr/bin/env python3
"""The arrows between the rooms of the code: every #include "..." of a project header in cost/,
moves/, engine/ and tests/soundness must point to its own room or to one the room may use
(ARCHITECTURE.md); and the size of the code: no C++ source in cost/, moves/, engine/, tests/ or
bench/ over 500 lines, no function over 120 lines (issue 50).

    python3 bench/include_check.py [--list]

Prints every arrow that goes against the intended direction and exits 1 if there is any (CTest
runs it: IncludeCheck); --list prints, per room, the rooms it includes. Exit 0 otherwise.
"""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Room -> the rooms it may include (besides itself). Order: from the bottom up. cost/ is three
# rooms: the model, the pricing (the law) and the bound; moves/ never sees the bound, and the
# soundness reference (tests/soundness) sees only the law.
COST = {"cost/model", "cost/pricing", "cost/bound"}
ALLOWED = {
    "cost/model": set(),
    "cost/pricing": {"cost/model"},
    "cost/bound": {"cost/model", "cost/pricing"},
    "moves": {"cost/model", "cost/pricing"},
    "engine/base": {"cost/model", "cost/pricing"},
    "engine/io": {"cost/model", "cost/pricing", "moves", "engine/base"},
    "engine/construct": {"cost/model", "cost/pricing", "engine/base"},
    "engine/exact": COST | {"engine/base", "engine/construct"},
    "engine/search": COST | {"moves", "engine/base", "engine/io", "engine/construct", "engine/exact"},
    "engine/generate": {"cost/model"},
    "engine/report": COST | {"engine/base", "engine/io", "engine/search"},
    "engine/python": COST | {"moves", "engine/base", "engine/io", "engine/construct", "engine/exact",
                             "engine/search"},
    "engine/cli": COST | {"moves", "engine/base", "engine/io", "engine/construct", "engine/exact", "engine/search",
                          "engine/generate", "engine/report"},
    "tests/soundness": {"cost/model", "cost/pricing"},
}
# Every C++ source of these folders: at most MAX_FILE_LINES lines, no function over MAX_FUNCTION_LINES.
SIZE_ROOTS = ("cost", "moves", "engine", "tests", "bench")
MAX_FILE_LINES, MAX_FUNCTION_LINES = 500, 120
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def room_of(rel):
    for room in sorted(ALLOWED, key=len, reverse=True):
        if rel == room or rel.startswith(room + "/"):
            return room
    return None


def code_only(text):
    """The text with comments, string and character literals blanked (newlines kept)."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("\n" * text.count("\n", i, j))
            i = j
        elif text.startswith('R"', i) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            k = text.find("(", i)
            delim = ")" + text[i + 2:k] + '"'
            j = text.find(delim, k)
            j = n if j < 0 else j + len(delim)
            out.append('""' + "\n" * text.count("\n", i, j))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(c + c)
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


CONTROL = re.compile(r"\b(if|for|while|switch|catch|do|else|try)\b\s*(\(.*)?$")
SCOPE = re.compile(r"^(namespace|class|struct|enum|union|extern)\b")


def long_functions(path, limit):
    """(first line, lines) of every function body over `limit` lines: a brace whose opening text has
    a parameter list, not a control statement, a scope or an initializer; lambdas and blocks inside
    a function count towards it."""
    code = code_only(open(path, encoding="utf-8", errors="replace").read())
    found, stack, head, line = [], [], "", 1
    for c in code:
        if c == "\n":
            line += 1
            head += " "
        elif c == "{":
            h = head.strip()
            inside = any(kind == "f" for kind, _ in stack)
            last = re.split(r"[;}{]", h)[-1].strip()
            is_func = (not inside and "(" in last and ")" in last and not SCOPE.match(last)
                       and not CONTROL.search(last) and not last.endswith("=") and not last.startswith("#"))
            stack.append(("f" if is_func else "b", line))
            head = ""
        elif c == "}":
            if stack:
                kind, start = stack.pop()
                if kind == "f" and line - start + 1 > limit:
                    found.append((start, line - start + 1))
            head = ""
        elif c == ";":
            head = ""
        else:
            head += c
    return found


def size_problems():
    bad = []
    for top in SIZE_ROOTS:
        for dirpath, dirs, names in os.walk(os.path.join(ROOT, top)):
            dirs[:] = [d for d in dirs if d not in ("corpus", "crashes")]
            for n in sorted(names):
                if not n.endswith((".h", ".cpp")):
                    continue
                path = os.path.join(dirpath, n)
                rel = os.path.relpath(path, ROOT)
                with open(path, encoding="utf-8", errors="replace") as f:
                    lines = sum(1 for _ in f)
                if lines > MAX_FILE_LINES:
                    bad.append(f"{rel}: {lines} lines (at most {MAX_FILE_LINES})")
                for start, length in long_functions(path, MAX_FUNCTION_LINES):
                    bad.append(f"{rel}:{start}: a function of {length} lines (at most {MAX_FUNCTION_LINES})")
    return bad


def main():
    listing = "--list" in sys.argv[1:]
    bad = []
    uses = {r: set() for r in ALLOWED}
    unknown = []
    for top in ("cost", "moves", "engine", "tests/soundness"):
        for dirpath, _, names in os.walk(os.path.join(ROOT, top)):
            for n in sorted(names):
                if not n.endswith((".h", ".cpp")):
                    continue
                rel = os.path.relpath(os.path.join(dirpath, n), ROOT)
                src = room_of(rel)
                if src is None:
                    unknown.append(rel)
                    continue
                with open(os.path.join(ROOT, rel), encoding="utf-8", errors="replace") as f:
                    for lineno, line in enumerate(f, 1):
                        m = INCLUDE.match(line)
                        if not m:
                            continue
                        dst = room_of(m.group(1))
                        if dst is None:
                            if os.path.exists(os.path.join(ROOT, m.group(1))):
                                bad.append(f"{rel}:{lineno}: includes {m.group(1)}, which is in no room")
                            continue
                        if dst != src:
                            uses[src].add(dst)
                        if dst != src and dst not in ALLOWED[src]:
                            bad.append(f"{rel}:{lineno}: {src} -> {dst} ({m.group(1)}) goes against the layering")
    for rel in unknown:
        bad.append(f"{rel}: a source file in no room (add its folder to ALLOWED in bench/include_check.py)")
    if listing:
        for r in ALLOWED:
            print(f"{r:17} -> {', '.join(sorted(uses[r])) or '(nothing)'}")
    sizes = size_problems()
    bad += sizes
    for b in bad:
        print(b)
    print(f"include_check: {len(bad)} problem(s): arrows against the layering, or code over the size limits"
          if bad else "include_check: every arrow points down; no file over 500 lines, no function over 120")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
