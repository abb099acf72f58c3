# Databricks notebook source
# MAGIC %md
# MAGIC # Explore lineage
# MAGIC
# MAGIC What feeds a table, what a change to one of its columns breaks, the graph of it, and the
# MAGIC statements the job could not parse. Reads the lineage Delta tables with delta-rs (no Spark
# MAGIC needed), located from the job's config files.
# MAGIC
# MAGIC Parameters (widgets on Databricks; `LINEAGE_<NAME>` environment variables when run as a
# MAGIC script, e.g. `LINEAGE_TABLE=marts.fct_sales python notebooks/explore_lineage.py`):
# MAGIC `config` (overlay files, comma separated), `warehouse` (the sink's base path, overrides the
# MAGIC config), `table`, `column`, `html_out` (where the graph page is written when run locally),
# MAGIC `as_of` (a date or a Delta version: the answers as the tables were then).

# COMMAND ----------

import os
from pathlib import Path

try:
    dbutils  # type: ignore[name-defined]  # noqa: B018, F821 (defined on Databricks)
    ON_DATABRICKS = True
except NameError:
    ON_DATABRICKS = False


def param(name: str, default: str) -> str:
    """A widget on Databricks, else the LINEAGE_<NAME> environment variable."""
    if ON_DATABRICKS:
        dbutils.widgets.text(name, default)  # type: ignore[name-defined]  # noqa: F821
        return dbutils.widgets.get(name)  # type: ignore[name-defined]  # noqa: F821
    return os.environ.get(f"LINEAGE_{name.upper()}", default)


def show(answer) -> None:
    """An answer's rows as a table (displayHTML on Databricks, text elsewhere)."""
    notes = answer.notes()  # the page shown of a longer answer; a cap that cut it
    print(answer.title + (f": {'; '.join(notes)}" if notes else ""))
    if not answer.rows:
        return
    if ON_DATABRICKS:
        import html

        head = "".join(f"<th>{html.escape(c)}</th>" for c in answer.columns)
        body = "".join(
            "<tr>"
            + "".join(f"<td>{html.escape(str(r.get(c)))}</td>" for c in answer.columns)
            + "</tr>"
            for r in answer.rows
        )
        displayHTML(f"<table><tr>{head}</tr>{body}</table>")  # type: ignore[name-defined]  # noqa: F821
        return
    widths = {c: max(len(c), *(len(str(r.get(c))) for r in answer.rows)) for c in answer.columns}
    print("  ".join(c.ljust(widths[c]) for c in answer.columns))
    for r in answer.rows:
        print("  ".join(str(r.get(c)).ljust(widths[c]) for c in answer.columns))


# the repository root (the bundle's files on Databricks): relative config and sink paths start there
ROOT = next(p for p in (Path.cwd(), *Path.cwd().parents) if (p / "conf" / "base.yaml").is_file())
os.chdir(ROOT)

CONFIG = [Path(p.strip()) for p in param("config", "conf/local.yaml").split(",") if p.strip()]
WAREHOUSE = param("warehouse", "") or None
TABLE = param("table", "reports.daily_revenue")
COLUMN = param("column", "revenue")
HTML_OUT = Path(param("html_out", "lineage-explore.html"))

# COMMAND ----------

from lineage_udfs.cli import queries, records  # noqa: E402
from lineage_udfs.cli.model import Page  # noqa: E402
from lineage_udfs.cli.render import to_html  # noqa: E402
from lineage_udfs.cli.store import isin, open_store  # noqa: E402

# every question reads only the rows of the asked table (predicates pushed into delta-rs);
# AS_OF (a date or a Delta version) answers from the tables as they were then
store = open_store(CONFIG, WAREHOUSE, as_of=param("as_of", "") or None)
PAGE = Page(limit=200)
print({name: store.version(name) for name in ("table_lineage", "column_lineage", "table_closure")})

# COMMAND ----------

# MAGIC %md ## Upstream: what feeds the table

# COMMAND ----------

upstream = queries.lineage_of(store, TABLE, direction="upstream", page=PAGE)
show(upstream)

# COMMAND ----------

# MAGIC %md ## Downstream (impact): what the table feeds, and what a change to one column breaks

# COMMAND ----------

show(queries.lineage_of(store, TABLE, direction="downstream", page=PAGE))
column_upstream = queries.lineage_of(store, f"{TABLE}.{COLUMN}", direction="upstream", page=PAGE)
show(column_upstream)
sources = [r for r in column_upstream.rows if r["direct_distance"] is not None]
if sources:
    first = sources[-1]
    impact = f"{first['table']}.{first['column']}"
    show(queries.lineage_of(store, impact, direction="downstream", page=PAGE))

# COMMAND ----------

# MAGIC %md ## The graph (pan, zoom, click a table or an edge)

# COMMAND ----------

page = to_html(upstream.graph, upstream.title)
if ON_DATABRICKS:
    displayHTML(page)  # type: ignore[name-defined]  # noqa: F821
else:
    HTML_OUT.write_text(page, encoding="utf-8")
    print(f"graph written to {HTML_OUT.resolve()}")

# COMMAND ----------

# MAGIC %md ## Freshness: last write, owner, late or stopped datasets upstream (docs/freshness.md)

# COMMAND ----------

if store.exists("dataset_expectations"):
    from lineage_udfs.cli import activity

    show(activity.freshness(store, TABLE))
    show(activity.owner(store, TABLE))
    show(activity.alerts(store))

# COMMAND ----------

# MAGIC %md ## Statements the job could not parse, and quarantined rows

# COMMAND ----------

failed = store.rows("parsed_statements", isin("status", ["failed", "timeout"]), ["fingerprint"])
for row in sorted(failed, key=lambda r: r["fingerprint"]):
    detail = records.statement(store, row["fingerprint"]).rows[0]
    print(f"{detail['fingerprint']}  {detail['status']}  {detail['error_kind']}: {detail['error']}")
    print(f"  {detail['log_rows']} log rows; masked SQL: {(detail['masked_sql'] or '')[:160]}")
show(records.quarantine(store, limit=20))
