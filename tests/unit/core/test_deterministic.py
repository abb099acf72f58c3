"""A statement's result does not depend on the process: the same script parsed under two hash
seeds (Python randomizes string hashes per process, so sets of names iterate in another
order) gives the same record, edge for edge and in the same order."""

from __future__ import annotations

import json
import os
import subprocess
import sys

SCRIPT = """
CREATE TEMPORARY TABLE stage AS
SELECT o.id, o.amount, c.region, p.sku, s.store
FROM raw.orders o JOIN raw.customers c ON o.cid = c.id
JOIN raw.products p ON o.pid = p.id JOIN raw.stores s ON o.sid = s.id
JOIN raw.channels ch ON o.ch = ch.id;
INSERT INTO mart.sales SELECT id, amount, region, sku, store FROM stage;
INSERT INTO mart.sales_by_region SELECT region, SUM(amount) FROM stage GROUP BY region
"""

CHILD = """
import json, sys
from lineage_udfs.core.parser import LineageParser
from lineage_udfs.core.records import to_record
record = to_record(LineageParser().parse(sys.stdin.read(), dialect="spark"))
record.pop("parse_ms")
for statement in record["statements"]:
    statement.pop("parse_ms", None)
print(json.dumps(record))
"""


def _record(seed: str) -> dict:
    env = {**os.environ, "PYTHONHASHSEED": seed}
    out = subprocess.run(
        [sys.executable, "-c", CHILD],
        input=SCRIPT,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout)


def test_the_same_script_gives_the_same_record_under_any_hash_seed() -> None:
    records = [_record(seed) for seed in ("1", "2", "3", "4")]
    assert records[0]["status"] == "ok"
    assert len(records[0]["table_edges"]) >= 8 and len(records[0]["column_edges"]) >= 8
    assert all(r == records[0] for r in records[1:])
