"""For the shell scripts of bench/:

    python3 bench/benchlib stats FILE KEY...   one line per KEY: its value in the `mlsys solve --stats`
                                               file FILE (an empty line when absent); exit 1 if FILE is
                                               unreadable
    python3 bench/benchlib families            the generator's families, space-separated
"""
import os
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from benchlib.common import FAMILIES  # noqa: E402
from benchlib.mlsys import read_stats  # noqa: E402


def main(argv):
    if argv[:1] == ["families"] and len(argv) == 1:
        print(" ".join(FAMILIES))
        return 0
    if argv[:1] == ["stats"] and len(argv) >= 3:
        st, why = read_stats(argv[1])
        if st is None:
            print(f"benchlib: {argv[1]}: no readable stats ({why})", file=sys.stderr)
            return 1
        for key in argv[2:]:
            v = st.get(key)
            print("" if v is None else v)
        return 0
    print(__doc__.strip(), file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
