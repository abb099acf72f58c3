"""The single mapping from our canonical table names to OpenLineage dataset (namespace, name).

Follows the OpenLineage dataset naming spec (https://openlineage.io/docs/spec/naming) and uses
``openlineage.client.naming.dataset`` helpers where one fits. The row's ``source_system`` (the
canonical log column, itself an OpenLineage namespace such as ``snowflake://org-account`` or
``postgres://db1:5432``) decides the platform; the table name is the canonical dotted name the
core produced. Names with fewer parts than the platform needs are completed with the log row's
``default_database`` / ``default_schema``; if still incomplete, the known parts are used as is.

Paths and URIs (``s3://b/k``, ``/data/x.csv``, ``@stage/path``) are named as files: the URI's
scheme and authority are the namespace and its path is the name.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlsplit

from openlineage.client.naming import dataset as ol_naming

_DEFAULT_PORTS = {"postgres": "5432", "redshift": "5439", "mysql": "3306", "hive": "10000"}
_THREE_PART = frozenset({"snowflake", "postgres", "redshift", "bigquery", "databricks", "trino"})
_TWO_PART = frozenset({"hive", "mysql"})


@dataclass(frozen=True, slots=True)
class NamingContext:
    """What naming needs from a log row.

    Attributes:
        source_system: the row's source system URI (OpenLineage namespace) or None.
        default_namespace: used when ``source_system`` is empty.
        default_database: session database/catalog/project that qualifies bare names.
        default_schema: session schema/dataset that qualifies bare names.
    """

    source_system: str | None
    default_namespace: str
    default_database: str | None = None
    default_schema: str | None = None


def is_path(table: str) -> bool:
    """True for names that are files, stages or URIs rather than tables."""
    return "://" in table or table.startswith(("/", "@", "~"))


def dataset_identity(table: str, ctx: NamingContext) -> tuple[str, str]:
    """Return the OpenLineage ``(namespace, name)`` of one canonical table name.

    Examples:
        >>> ctx = NamingContext("snowflake://acme-prod", "lw", "analytics", "public")
        >>> dataset_identity("sales.orders", ctx)
        ('snowflake://acme-prod', 'ANALYTICS.SALES.ORDERS')
        >>> dataset_identity("s3://bucket/raw/x.csv", ctx)
        ('s3://bucket', 'raw/x.csv')
    """
    if is_path(table):
        return _file_identity(table, ctx)
    source = (ctx.source_system or "").strip()
    if not source:
        return ctx.default_namespace, table
    scheme, authority = _split_source(source)
    parts = [p for p in table.split(".") if p]
    if scheme in _THREE_PART:
        parts = _qualify(parts, 3, ctx)
    elif scheme in _TWO_PART:
        parts = _qualify(parts, 2, ctx, use_schema_as_db=True)
    naming = _helper(scheme, authority, parts)
    if naming is not None:
        return naming.get_namespace(), naming.get_name()
    name = ".".join(parts)
    if scheme == "snowflake":
        name = ".".join(snowflake_part(p) for p in parts)
    return _normalise_namespace(source, scheme, authority), name


def snowflake_part(part: str) -> str:
    """One part of a Snowflake name as Snowflake resolves it: the core keeps an unquoted
    identifier lower-case (upper-cased here, as Snowflake does) and a quoted one as written, so a
    part with an upper-case letter was quoted and is case-sensitive: kept.

    Examples:
        >>> snowflake_part("orders"), snowflake_part("MyTab"), snowflake_part("ORDERS")
        ('ORDERS', 'MyTab', 'ORDERS')
    """
    return part.upper() if part == part.lower() else part


def _split_source(source: str) -> tuple[str, str]:
    if "://" not in source:
        return source.lower(), ""
    split = urlsplit(source)
    return split.scheme.lower(), split.netloc


def _normalise_namespace(source: str, scheme: str, authority: str) -> str:
    if not authority:
        return scheme if "://" not in source else f"{scheme}://"
    return f"{scheme}://{authority}"


def _qualify(
    parts: list[str], want: int, ctx: NamingContext, *, use_schema_as_db: bool = False
) -> list[str]:
    if use_schema_as_db:
        defaults = [ctx.default_schema or ctx.default_database]
    else:
        defaults = [ctx.default_database, ctx.default_schema]
    missing = want - len(parts)
    if missing <= 0:
        return parts
    fill = defaults[:missing]  # the missing parts are the leftmost ones
    if len(fill) < missing or any(f is None for f in fill):
        return parts
    return [str(f) for f in fill] + parts


def _helper(scheme: str, authority: str, parts: list[str]) -> ol_naming.DatasetNaming | None:
    """The client's naming helper for this platform when the name is complete, else None."""
    host, _, port = authority.partition(":")
    try:
        if scheme == "snowflake" and len(parts) == 3 and "-" in authority:
            org, _, account = authority.partition("-")
            db, schema, table = (snowflake_part(p) for p in parts)
            return ol_naming.Snowflake(org, account, db, schema, table)
        if scheme == "postgres" and len(parts) == 3 and host:
            return ol_naming.Postgres(host, port or _DEFAULT_PORTS["postgres"], *parts)
        if scheme == "redshift" and len(parts) == 3 and "." in host:
            cluster, _, region = host.partition(".")
            return ol_naming.Redshift(cluster, region, port or _DEFAULT_PORTS["redshift"], *parts)
        if scheme == "bigquery" and len(parts) == 3:
            return ol_naming.BigQuery(*parts)
        if scheme == "hive" and len(parts) == 2 and host:
            return ol_naming.Hive(host, port or _DEFAULT_PORTS["hive"], *parts)
        if scheme == "mysql" and len(parts) == 2 and host:
            return ol_naming.MySQL(host, port or _DEFAULT_PORTS["mysql"], *parts)
    except (TypeError, ValueError):  # a helper's validator rejected an empty part
        return None
    return None


def location_identity(location: str, ctx: NamingContext) -> tuple[str, str]:
    """The OpenLineage ``(namespace, name)`` of a storage location, in any of the spellings
    ``lineage_udfs.core.identity`` gives them (``file:/x``, ``s3://b/k``, ``/x``).

    Examples:
        >>> ctx = NamingContext(None, "lw")
        >>> location_identity("file:/wh/raw.db/orders", ctx), location_identity("s3://b/k", ctx)
        (('file', '/wh/raw.db/orders'), ('s3://b', 'k'))
    """
    return _file_identity(location, ctx)


def _file_identity(path: str, ctx: NamingContext) -> tuple[str, str]:
    if path.startswith(("@", "~")):  # Snowflake stage: lives in the warehouse's namespace
        return (ctx.source_system or ctx.default_namespace), path
    naming: ol_naming.DatasetNaming
    if path.startswith("/"):
        naming = ol_naming.LocalFileSystem(path)
        return naming.get_namespace(), naming.get_name()
    split = urlsplit(path)
    scheme = split.scheme.lower()
    name = split.path.lstrip("/") or "/"
    if scheme == "s3" and split.netloc:
        naming = ol_naming.S3(split.netloc, name)
        return naming.get_namespace(), naming.get_name()
    if scheme == "gs" and split.netloc:
        naming = ol_naming.GCS(split.netloc, name)
        return naming.get_namespace(), naming.get_name()
    if scheme == "file":
        return "file", split.path
    return f"{scheme}://{split.netloc}", split.path or "/"
