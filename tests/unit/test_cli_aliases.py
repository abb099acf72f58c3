"""``lineage aliases <name>`` over a real Delta table written with delta-rs."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
from deltalake import write_deltalake

from lineage_udfs.cli.aliases import aliases
from lineage_udfs.cli.store import LineageStore


def _store(tmp_path: Path) -> LineageStore:
    rows = [
        ("file:/wh/raw.db/orders", "raw.orders", "symlink", "symlinks facet", 1.0, "proposed"),
        ("raw.orders", "main.raw.orders", "default_schema", "session", 0.9, "proposed"),
        ("RAW.ORDERS", "raw.orders", "case", "case", 0.5, "proposed"),
        ("orders", "raw.orders", "default_schema", "session", 0.5, "rejected"),
    ]
    names = ["alias", "canonical", "evidence", "detail", "confidence", "status"]
    table = pa.table({n: [r[i] for r in rows] for i, n in enumerate(names)})
    path = tmp_path / "dataset_aliases"
    write_deltalake(str(path), table)
    return LineageStore(locations={"dataset_aliases": str(path)})


def test_links_evidence_and_the_merged_node(tmp_path: Path) -> None:
    answer = aliases(_store(tmp_path), "raw.orders")
    assert [(r["alias"], r["evidence"], r["merged"]) for r in answer.rows] == [
        ("file:/wh/raw.db/orders", "symlink", True),
        ("raw.orders", "default_schema", True),
        ("RAW.ORDERS", "case", False),
        ("orders", "default_schema", False),
    ]
    assert answer.message == (
        "raw.orders is the graph node main.raw.orders, with file:/wh/raw.db/orders, main.raw.orders"
    )
    lowered = aliases(_store(tmp_path / "b"), "RAW.orders", min_confidence=0.5)
    assert lowered.title == "aliases of raw.orders"
    assert "RAW.ORDERS" in (lowered.message or "")


def test_unknown_name(tmp_path: Path) -> None:
    answer = aliases(_store(tmp_path), "nowhere.t")
    assert not answer.found and answer.message == "no alias links name nowhere.t"


def test_follow_gives_the_node_of_an_alias_and_remembers_it(tmp_path: Path) -> None:
    store = _store(tmp_path)
    assert store.follow("file:/wh/raw.db/orders") == "main.raw.orders"
    assert store.follow("`RAW`.orders.Amount") == "main.raw.orders.amount"  # a column of it
    assert store.follow("main.raw.orders") == "main.raw.orders"  # the node itself
    assert store.follow("RAW.ORDERS") == "main.raw.orders"  # plain: raw.orders, an alias
    assert store.follow("orders") == "orders"  # its only link is rejected
    assert store.follow("Other.T") == "other.t"  # no link: lower-cased, as before
    assert [(f.name, f.node) for f in store.followed] == [
        ("file:/wh/raw.db/orders", "main.raw.orders"),
        ("raw.orders.amount", "main.raw.orders.amount"),
        ("raw.orders", "main.raw.orders"),
    ]
    assert store.followed[0].note == (
        "file:/wh/raw.db/orders is an alias of main.raw.orders (dataset_aliases): "
        "answering for main.raw.orders"
    )
    strict = _store(tmp_path / "strict")
    strict.alias_min_confidence = 0.95  # the session-default link (0.9) does not hold
    assert strict.follow("raw.orders") == "raw.orders" and not strict.followed


def test_follow_without_dataset_aliases(tmp_path: Path) -> None:
    store = LineageStore(locations={"dataset_aliases": str(tmp_path / "none")})
    assert store.follow("Raw.Orders") == "raw.orders" and not store.followed
