"""Make tests/support importable as ``support`` for the emit tests.

The ``spark`` fixture is the project's one session fixture in tests/spark/conftest.py.
"""

import sys
from pathlib import Path

_TESTS = str(Path(__file__).resolve().parents[2])
if _TESTS not in sys.path:
    sys.path.insert(0, _TESTS)
