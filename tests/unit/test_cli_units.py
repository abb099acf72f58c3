"""Pieces of the command-line tools that need no Spark: overrides of the workflow's entry
points, the statements of `make sql`, the graph's layers and its Graphviz source."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from lineage_udfs.cli.queries import Graph, GraphEdge
from lineage_udfs.cli.render import to_dot, to_html
from lineage_udfs.core.errors import ConfigError
from lineage_udfs.workflow import overrides, settings_from

ROOT = Path(__file__).resolve().parents[2]


def _query_module():  # jobs/ is not a package
    spec = importlib.util.spec_from_file_location("jobs_query", ROOT / "jobs" / "query.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_overrides_nest_dotted_keys_and_drop_empty_values() -> None:
    assert overrides(["graph.max_depth=5", "graph.full_refresh=true", "sink.base_path="]) == {
        "graph": {"max_depth": 5, "full_refresh": True}
    }
    assert overrides(['openlineage.transport={"type": "file", "log_file_path": "x"}']) == {
        "openlineage": {"transport": {"type": "file", "log_file_path": "x"}}
    }
    with pytest.raises(ConfigError):
        overrides(["no-equals"])


def test_settings_from_applies_overrides_after_the_files() -> None:
    settings = settings_from(
        [ROOT / "conf" / "base.yaml", ROOT / "conf" / "databricks.yaml"],
        ["sink.base_path=/Volumes/x/y", "graph.max_depth=", "graph.full_refresh=true"],
    )
    assert settings.sink.base_path == "/Volumes/x/y"
    assert settings.graph.max_depth == 20 and settings.graph.full_refresh is True
    with pytest.raises(ConfigError, match="max_depth"):
        settings_from([ROOT / "conf" / "base.yaml"], ["graph.max_depth=99"])


def test_make_sql_splits_the_documented_multi_line_queries() -> None:
    query = _query_module()
    blocks = [
        block.split("```", 1)[0]
        for doc in (ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")))
        for block in doc.read_text(encoding="utf-8").split("```sql")[1:]
    ]

    def starts(block: str) -> int:  # statements begin a line with SELECT / WITH in the docs
        return sum(1 for line in block.splitlines() if line.startswith(("SELECT", "WITH")))

    multi = [b for b in blocks if starts(b) > 1]
    assert multi, "the docs show no multi-statement SQL block"
    for block in multi:  # a ; inside a comment does not end a statement
        statements = query.statements_of(block)
        assert len(statements) == starts(block) and all("SELECT" in s for s in statements)
    assert query.statements_of("-- only a comment\n") == []


def _graph() -> Graph:
    graph = Graph(focus="b.t", focus_column="x")
    kinds = {"a.s": "table", "b.t": "view", "c.u": "table"}
    for name in kinds:
        graph.node(name, kinds)
    graph.nodes["b.t"].add_column("x")
    edge = graph.edge("a.s", "b.t")
    edge.column_edges |= {("y", "x", "DIRECT", "AGGREGATION"), ("z", "x", "INDIRECT", "JOIN")}
    graph.edge("b.t", "c.u").edge_kinds.add("view")
    graph.edge("c.u", "c.u").edge_kinds.add("query")  # a self-loop does not add a layer
    return graph


def test_layers_run_left_to_right() -> None:
    assert _graph().layers() == {"a.s": 0, "b.t": 1, "c.u": 2}
    assert GraphEdge("a", "b").label == "lineage"


def test_dot_and_html_carry_names_labels_and_the_focus() -> None:
    graph = _graph()
    dot = to_dot(graph, 'upstream of "b.t"')
    assert "rankdir=LR" in dot and 'upstream of \\"b.t\\"' in dot
    assert "DIRECT: AGGREGATION\\nINDIRECT: JOIN" in dot
    assert 'color="#e8590c"' in dot  # the asked table
    page = to_html(graph, "<b>t</b>")
    assert "&lt;b&gt;t&lt;/b&gt;" in page and "<script src" not in page
    assert "sourceMappingURL" not in page


def test_the_command_knows_every_table_the_job_writes() -> None:
    from lineage_udfs.cli.store import TABLES as CLI_TABLES
    from lineage_udfs.spark.storage.schemas import TABLES

    assert tuple(TABLES) == CLI_TABLES
