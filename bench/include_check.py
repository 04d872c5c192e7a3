#!/usr/bin/env python3
"""The arrows between the rooms of the code: every #include "..." of a project header in cost/,
moves/ and engine/ must point to its own room or to one the room may use (ARCHITECTURE.md).

    python3 bench/include_check.py [--list]

Prints every arrow that goes against the intended direction and exits 1 if there is any (CTest
runs it: IncludeCheck); --list prints, per room, the rooms it includes. Exit 0 otherwise.
"""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Room -> the rooms it may include (besides itself). Order: from the bottom up.
ALLOWED = {
    "cost": set(),
    "moves": {"cost"},
    "engine/base": {"cost"},
    "engine/io": {"cost", "moves", "engine/base"},
    "engine/construct": {"cost", "engine/base"},
    "engine/exact": {"cost", "engine/base", "engine/construct"},
    "engine/search": {"cost", "moves", "engine/base", "engine/io", "engine/construct", "engine/exact"},
    "engine/generate": {"cost"},
    "engine/report": {"cost", "engine/base", "engine/io", "engine/search"},
    "engine/python": {"cost", "moves", "engine/base", "engine/io", "engine/construct", "engine/exact",
                      "engine/search"},
    "engine/cli": {"cost", "moves", "engine/base", "engine/io", "engine/construct", "engine/exact", "engine/search",
                   "engine/generate", "engine/report"},
}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def room_of(rel):
    for room in sorted(ALLOWED, key=len, reverse=True):
        if rel == room or rel.startswith(room + "/"):
            return room
    return None


def main():
    listing = "--list" in sys.argv[1:]
    bad = []
    uses = {r: set() for r in ALLOWED}
    unknown = []
    for top in ("cost", "moves", "engine"):
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
    for b in bad:
        print(b)
    print(f"include_check: {len(bad)} arrow(s) against the layering" if bad else "include_check: every arrow points down")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
