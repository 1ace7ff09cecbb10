"""Imported by every benchmark before the project's packages. bench/eventlog.py is named like
the package it measures; run as a script, bench/ comes first on sys.path and would shadow the
real ``eventlog``. Importing this module takes bench/ off the path."""

import sys
from pathlib import Path

_HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _HERE]
