"""python3 -m mlsys_onnx: see cli.py."""
import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
