"""The sqlfluff tier with sqlfluff's Python parser and with its Rust parser (sqlfluffrs).

Takes a log's distinct statements that reach the tier (sqlglot rejects them and they are not
cut short) and a seeded sample of the ones sqlglot reads, runs ``SqlfluffTier.tables`` over
both in two child processes (one with sqlfluffrs hidden, so sqlfluff's "auto" falls back to
its Python parser), checks that both read the same tables, and writes a Markdown report.

Usage (from the repository root)::

    PYTHONPATH=. .venv/bin/python bench/sqlfluff_tier.py --log bench/data/log_100000.parquet \\
        --valid 300 --out bench/results/sqlfluff_tier.md
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from run_bench import _cpu_model  # bench/ is on sys.path

ROOT = Path(__file__).resolve().parent.parent


def _groups(log: Path, valid: int) -> dict[str, list[dict]]:
    """The statements that reach the sqlfluff tier, and a sample of those sqlglot reads."""
    import sqlglot
    from run_bench import distinct_statements

    from lineage_udfs.core.dialects import to_sqlglot_dialect
    from lineage_udfs.core.parser import _cut_short

    broken, good = [], []
    for s in distinct_statements(log):
        dialect = to_sqlglot_dialect(s["dialect"])
        try:
            sqlglot.parse(s["sql"], read=dialect)
            error = None
        except Exception as exc:
            error = exc
        if error is None:
            good.append(s)
        elif not _cut_short(s["sql"], error, dialect):
            broken.append(s)
    return {"rejected by sqlglot": broken, "read by sqlglot": random.Random(7).sample(good, valid)}


def _child(path: str, rust: bool) -> int:
    if not rust:
        sys.modules["sqlfluffrs"] = None  # type: ignore[assignment]
    from lineage_udfs.core.fallback import SqlfluffTier

    groups = json.loads(Path(path).read_text())
    tier = SqlfluffTier()
    tier.tables("SELECT 1", "spark")  # build the linter
    out: dict[str, dict] = {}
    for name, rows in groups.items():
        tables, started = [], time.perf_counter()
        for s in rows:
            try:
                found = tier.tables(s["sql"], s["dialect"], s["database"], s["schema"])
                tables.append(None if found is None else [found.sources, found.targets])
            except Exception as exc:
                tables.append(f"error {type(exc).__name__}")
        out[name] = {"seconds": time.perf_counter() - started, "tables": tables}
    print(json.dumps(out))
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--log", default="bench/data/log_100000.parquet")
    ap.add_argument("--valid", type=int, default=300)
    ap.add_argument("--out", default="bench/results/sqlfluff_tier.md")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--rust", action="store_true", help=argparse.SUPPRESS)
    ns = ap.parse_args(argv)
    if ns.child:
        return _child(ns.child, ns.rust)
    groups = _groups(Path(ns.log), ns.valid)
    data = Path(ns.out).with_suffix(".statements.json")
    data.write_text(json.dumps(groups))
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    runs = {}
    try:
        for rust in (False, True):
            cmd = [sys.executable, __file__, "--child", str(data), *(["--rust"] if rust else [])]
            done = subprocess.run(cmd, capture_output=True, text=True, env=env, check=True)
            runs[rust] = json.loads(done.stdout.strip().splitlines()[-1])
    finally:
        data.unlink()
    lines = [
        "# The sqlfluff tier: Python parser vs Rust parser (sqlfluffrs)",
        "",
        "Command (from the repository root): `PYTHONPATH=. .venv/bin/python"
        f" bench/sqlfluff_tier.py {' '.join(sys.argv[1:] if argv is None else argv)}`",
        "",
        f"- {time.strftime('%Y-%m-%d %H:%M %Z')}; CPU {_cpu_model()},"
        f" nproc {os.cpu_count()}; python {platform.python_version()}; load average at end"
        f" {os.getloadavg()[0]:.2f}",
        f"- {Path(ns.log).name}: its distinct statements that reach the tier (sqlglot rejects"
        " them, not cut short) and a seeded sample of those sqlglot reads",
        "",
        "| statements | n | Python parser ms each | Rust parser ms each | speed-up | same tables"
        " | read (not None) |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for name, rows in groups.items():
        py, rs = runs[False][name], runs[True][name]
        n = len(rows)
        same = sum(a == b for a, b in zip(py["tables"], rs["tables"], strict=True))
        read = sum(isinstance(t, list) for t in rs["tables"])
        lines.append(
            f"| {name} | {n} | {1000 * py['seconds'] / n:.1f} | {1000 * rs['seconds'] / n:.1f} |"
            f" {py['seconds'] / rs['seconds']:.1f} x | {same} / {n} | {read} |"
        )
    Path(ns.out).write_text("\n".join(lines) + "\n")
    print(f"wrote {ns.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
