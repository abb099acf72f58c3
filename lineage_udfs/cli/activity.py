"""Freshness, ownership and usage answers, from the tables of the activity stage.

Readers other parts of the product can call (no Spark; delta-rs through :class:`LineageStore`):

- :func:`owner_of`: the owner of a table and the rule that gave it;
- :func:`readers_of`: who read a table within the last N days (before the stage's ``as_of``);
- :func:`late_datasets`: every late or stopped dataset with its downstream blast radius.

The ``lineage freshness | owner | usage | alerts`` commands are built on them
(:mod:`lineage_udfs.cli.activity_commands`).
"""

from __future__ import annotations

import difflib
from datetime import datetime, timedelta
from typing import Any

from lineage_udfs.cli import queries
from lineage_udfs.cli.queries import Answer
from lineage_udfs.cli.store import CliError, LineageStore, Row

LATE_STATUSES = ("late", "stopped")


def _require(store: LineageStore, table: str) -> None:
    if not store.exists(table):
        raise CliError(
            f"no {table} table: run the extraction job with activity.enabled (the default) first"
        )


def _iso(value: Any) -> Any:
    return value.isoformat() if isinstance(value, datetime) else value


def _known(store: LineageStore) -> set[str]:
    names = {r["dataset"] for r in store.rows("dataset_owners")}
    names.update(r["dataset"] for r in store.rows("dataset_activity"))
    return names


def resolve_dataset(store: LineageStore, name: str) -> str:
    """The canonical name of a dataset the activity tables know.

    Raises:
        CliError: unknown; names the closest known datasets.
    """
    _require(store, "dataset_owners")
    wanted = store.follow(name)
    known = _known(store)
    if wanted in known:
        return wanted
    close = [n for n in sorted(known) if n.rsplit(".", 1)[-1] == wanted.rsplit(".", 1)[-1]]
    close += [n for n in difflib.get_close_matches(wanted, sorted(known), n=3) if n not in close]
    hint = f"; did you mean {', '.join(close[:3])}?" if close else ""
    raise CliError(f"unknown dataset {name!r}{hint}")


def owner_of(store: LineageStore, table: str) -> Row | None:
    """The owner of ``table``: ``{dataset, owner, contact, rule, evidence}`` (rule: explicit /
    catalog / inferred / none), or None when the activity tables do not know the table."""
    _require(store, "dataset_owners")
    wanted = store.follow(table)
    for row in store.rows("dataset_owners"):
        if row["dataset"] == wanted:
            return {k: row[k] for k in ("dataset", "owner", "contact", "rule", "evidence")}
    return None


def readers_of(store: LineageStore, table: str, days: int = 30) -> list[Row]:
    """Who read ``table`` within the ``days`` before the activity stage's ``as_of``, most
    recent first: ``{user_name, last_read_at, reads_in_window, first_read_at}``
    (``reads_in_window`` counts over the stage's ``activity.window_days``)."""
    _require(store, "dataset_usage")
    wanted = store.follow(table)
    found = []
    for row in store.rows("dataset_usage"):
        if row["dataset"] != wanted or row["kind"] != "read" or row["last_at"] is None:
            continue
        if row["last_at"] >= row["as_of"] - timedelta(days=days):
            found.append(
                {
                    "user_name": row["user_name"],
                    "last_read_at": row["last_at"],
                    "reads_in_window": row["count_in_window"],
                    "first_read_at": row["first_at"],
                }
            )
    return sorted(found, key=lambda r: (r["last_read_at"], r["user_name"]), reverse=True)


def _expectation(store: LineageStore, dataset: str) -> Row | None:
    for row in store.rows("dataset_expectations"):
        if row["dataset"] == dataset and row["fingerprint"] == "":
            return row
    return None


def _activity(store: LineageStore, dataset: str) -> Row | None:
    for row in store.rows("dataset_activity"):
        if row["dataset"] == dataset and row["column_name"] == "":
            return row
    return None


def _hours(seconds: float | None) -> float | None:
    return None if seconds is None else round(seconds / 3600, 2)


def _path_text(path: list[str] | None) -> str:
    return " -> ".join(path or [])


def _owner_text(owner: Row | None) -> str | None:
    if owner is None or owner["owner"] is None:
        return None
    return f"{owner['owner']} ({owner['rule']})"


def freshness(store: LineageStore, table: str) -> Answer:
    """When ``table`` was last written and by whom, its cadence and status, and every late or
    stopped dataset upstream of it with the path to it and the owner of each hop. The graph
    is the table's upstream lineage with late and stopped nodes marked."""
    _require(store, "dataset_expectations")
    dataset = resolve_dataset(store, table)
    activity = _activity(store, dataset) or {}
    expected = _expectation(store, dataset) or {}
    owner = owner_of(store, dataset)
    rows: list[Row] = [
        {
            "table": dataset,
            "role": "asked",
            "status": expected.get("status", "unknown"),
            "last_write_at": _iso(activity.get("last_write_at")),
            "last_write_user": activity.get("last_write_user"),
            "last_failed_write_at": _iso(activity.get("last_failed_write_at")),
            "median_interval_h": _hours(expected.get("median_interval_s")),
            "p90_interval_h": _hours(expected.get("p90_interval_s")),
            "expected_next_at": _iso(expected.get("expected_next_at")),
            "owner": _owner_text(owner),
            "path": None,
            "reason": expected.get("reason"),
        }
    ]
    upstream = sorted(
        (r for r in store.rows("upstream_staleness") if r["dataset"] == dataset),
        key=lambda r: (r["distance"], r["upstream"]),
    )
    for row in upstream:
        hops = row["hops"] or []
        up_expected = _expectation(store, row["upstream"]) or {}
        rows.append(
            {
                "table": row["upstream"],
                "role": f"late upstream ({row['distance']} hops)",
                "status": row["upstream_status"],
                "last_write_at": _iso(row["upstream_last_write_at"]),
                "last_write_user": (_activity(store, row["upstream"]) or {}).get("last_write_user"),
                "last_failed_write_at": _iso(
                    (_activity(store, row["upstream"]) or {}).get("last_failed_write_at")
                ),
                "median_interval_h": _hours(up_expected.get("median_interval_s")),
                "p90_interval_h": _hours(up_expected.get("p90_interval_s")),
                "expected_next_at": _iso(up_expected.get("expected_next_at")),
                "owner": _owner_text(owner_of(store, row["upstream"])),
                "path": _path_text(row["path"]),
                "hops": [dict(h) for h in hops],
                "reason": up_expected.get("reason"),
            }
        )
    graph = None
    if store.exists("table_closure") and queries.is_table(store, dataset):
        graph = queries.lineage_of(store, dataset, direction="upstream").graph
    if graph is not None:
        statuses = {
            r["dataset"]: r["status"]
            for r in store.rows("dataset_expectations")
            if r["fingerprint"] == ""
        }
        for name, node in graph.nodes.items():
            if statuses.get(name) in LATE_STATUSES:
                node.status = statuses[name]
    late = len(upstream)
    message = f"{dataset}: {rows[0]['status']}" + (
        f"; {late} late or stopped upstream dataset(s)" if late else "; nothing upstream is late"
    )
    columns = ["table", "role", "status", "last_write_at", "last_write_user", "owner", "path"]
    return Answer(f"freshness of {dataset}", columns, rows, graph, message)


def owner(store: LineageStore, table: str) -> Answer:
    """The owner of ``table`` and which rule gave it."""
    dataset = resolve_dataset(store, table)
    found = owner_of(store, dataset)
    rows = [found] if found is not None else []
    columns = ["dataset", "owner", "contact", "rule", "evidence"]
    return Answer(f"owner of {dataset}", columns, rows, found=bool(rows))


def usage(store: LineageStore, table: str) -> Answer:
    """Who writes and reads ``table``: per user and kind, the count in the window and the
    latest time; the message gives the last write and the last read."""
    _require(store, "dataset_usage")
    dataset = resolve_dataset(store, table)
    rows = [
        {
            "user_name": r["user_name"] or "-",
            "kind": r["kind"],
            "count_in_window": r["count_in_window"],
            "last_at": _iso(r["last_at"]),
            "first_at": _iso(r["first_at"]),
        }
        for r in store.rows("dataset_usage")
        if r["dataset"] == dataset
    ]
    order = {"write": 0, "failed_write": 1, "read": 2}
    rows.sort(key=lambda r: (order.get(r["kind"], 3), -r["count_in_window"], r["user_name"]))
    activity = _activity(store, dataset) or {}
    window = next((r["window_start"] for r in store.rows("dataset_usage")), None)
    message = (
        f"last write {_iso(activity.get('last_write_at')) or '-'}"
        f" by {activity.get('last_write_user') or '-'};"
        f" last read {_iso(activity.get('last_read_at')) or '-'}"
        f" by {activity.get('last_read_user') or '-'};"
        f" counts since {_iso(window) or '-'}"
    )
    columns = ["user_name", "kind", "count_in_window", "last_at", "first_at"]
    return Answer(f"usage of {dataset}", columns, rows, message=message)


def late_datasets(store: LineageStore) -> list[Row]:
    """Every late or stopped dataset: status, last write, reason, owner and the datasets
    downstream of it (``table_closure``, nearest first)."""
    _require(store, "dataset_expectations")
    downstream: dict[str, list[tuple[int, str]]] = {}
    if store.exists("table_closure"):
        for row in store.rows("table_closure"):
            if row["ancestor"] != row["descendant"]:
                downstream.setdefault(row["ancestor"], []).append(
                    (row["min_distance"], row["descendant"])
                )
    found = []
    for row in store.rows("dataset_expectations"):
        if row["fingerprint"] != "" or row["status"] not in LATE_STATUSES:
            continue
        owner = owner_of(store, row["dataset"]) or {}
        found.append(
            {
                "dataset": row["dataset"],
                "status": row["status"],
                "last_write_at": _iso(row["last_write_at"]),
                "expected_next_at": _iso(row["expected_next_at"]),
                "owner": owner.get("owner"),
                "contact": owner.get("contact"),
                "owner_rule": owner.get("rule"),
                "downstream": [n for _, n in sorted(downstream.get(row["dataset"], []))],
                "reason": row["reason"],
            }
        )
    return sorted(found, key=lambda r: (r["status"] != "stopped", r["dataset"]))


def alerts(store: LineageStore) -> Answer:
    """Every late or stopped dataset with its downstream blast radius. ``found`` is False
    when there is one, so the command exits 1 (for cron and CI)."""
    rows = late_datasets(store)
    message = f"{len(rows)} late or stopped dataset(s)" if rows else "no late or stopped dataset"
    columns = ["dataset", "status", "last_write_at", "owner", "contact", "downstream"]
    return Answer("alerts", columns, rows, message=message, found=not rows)
