"""The tiers' time limits do not depend on the machine's load.

The statements here are read by the sqlfluff tier within its budget (``sqlfluff_timeout_seconds``,
1 s). In a fresh interpreter the first of them also pays for sqlfluff's import and its dialect's
linter, about a quarter of the budget in CPU time; a wall-clock limit gave the sqlparse tier's
answer instead once other processes took the CPU. Each run here is a fresh interpreter (an
executor's first statements), pinned to one CPU at a lower priority; beside it, on the same CPU,
three processes spin. The answers must be those of the same run without them.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[3]
CASES = [  # (file, case id): the cases whose answer the wall clock used to decide under load
    ("tests/unit/core/cases/fallback.yaml", "fallback_mysql_insert_modifiers"),
    ("tests/unit/core/cases/fallback.yaml", "fallback_exasol_preferring_clause"),
    ("eval/heldout2_cases.jsonl", "heldout2:dbx_apply_changes_into"),
]
HOGS = 3 if hasattr(os, "sched_setaffinity") else (os.cpu_count() or 1) + 2
"""Spinning processes, on the parse's CPU (where a process cannot be pinned, as on macOS: more
than there are CPUs)."""
NICE = 5
"""The parsing process's niceness: with three spinning processes of niceness 0 on its CPU it
gets about a tenth of it, so a wall-clock limit would see ten times the parse's CPU time."""

_PIN = """
import os
if hasattr(os, "sched_setaffinity"):
    os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
"""
_HOG = (
    _PIN
    + """
import time
print("spinning", flush=True)
end = time.monotonic() + 120
while time.monotonic() < end:
    pass
"""
)
_PARSE = (
    _PIN
    + """
import json, sys, time
os.nice(int(sys.argv[1]))
from lineage_udfs.core.parser import LineageParser
parser = LineageParser()
print("ready", flush=True)
sys.stdin.readline()
answers = []
for sql, dialect in json.loads(sys.argv[2]):
    wall, cpu = time.perf_counter(), time.process_time()
    result = parser.parse(sql, dialect=dialect)
    answers.append([str(result.parser), str(result.status), list(result.sources),
                    list(result.targets), time.perf_counter() - wall, time.process_time() - cpu])
print(json.dumps(answers))
"""
)


def _load(file: str, case_id: str) -> tuple[str, str]:
    path = REPO / file
    if path.suffix == ".yaml":
        cases = yaml.safe_load(path.read_text(encoding="utf-8"))
    else:
        cases = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    [case] = [c for c in cases if c["id"] == case_id]
    return case["sql"], case["dialect"]


def _answers(
    statements: list[tuple[str, str]], hogs: int
) -> tuple[list[list[object]], float, float]:
    """(parser, status, sources, targets) of each statement, parsed in a fresh interpreter
    beside ``hogs`` spinning processes, and the wall and CPU time the parses took in all. The
    interpreter starts and imports the parser before the hogs start (sqlfluff it imports on
    first use, in the parse)."""
    child = subprocess.Popen(
        [sys.executable, "-c", _PARSE, str(NICE), json.dumps(statements)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        cwd=REPO,
    )
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "ready"
        with _spinning(hogs):
            out, _ = child.communicate("go\n", timeout=120)
    finally:
        child.kill()
        child.wait()
    assert child.returncode == 0, out
    answers = json.loads(out)
    return [a[:4] for a in answers], sum(a[4] for a in answers), sum(a[5] for a in answers)


@contextmanager
def _spinning(count: int) -> Iterator[None]:
    """``count`` processes spinning on the CPU the parse runs on, until the block ends."""
    hogs = [
        subprocess.Popen([sys.executable, "-c", _HOG], stdout=subprocess.PIPE, text=True)
        for _ in range(count)
    ]
    try:
        for hog in hogs:
            assert hog.stdout is not None and hog.stdout.readline().strip() == "spinning"
        yield
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()


@pytest.mark.slow
def test_fallback_tier_budget_beside_cpu_hogs_gives_the_same_answer() -> None:
    statements = [_load(file, case_id) for file, case_id in CASES]
    alone, _, _ = _answers(statements, hogs=0)
    assert [(a[0], a[1]) for a in alone] == [("sqlfluff", "ok")] * len(CASES), alone
    loaded, wall, cpu = _answers(statements, hogs=HOGS)
    took = f"{wall:.2f} s wall, {cpu:.2f} s CPU"
    assert loaded == alone, f"beside {HOGS} spinning processes ({took})"
    assert wall > 2 * cpu, took  # the hogs took the CPU: the parses had less than half of it
