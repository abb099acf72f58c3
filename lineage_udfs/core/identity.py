"""Dataset identity: which names are one dataset, on what evidence, and the name the graph uses.

Producers name a dataset differently: the Spark listener by its storage path, SQL logs by the
catalog name, Snowflake in upper case, a session by its default schema, Hadoop clients by
``s3a://``. Each rule below looks at one kind of evidence and proposes links ``alias →
canonical`` with a confidence; a steward's decisions accept or reject links (or add them); and
:func:`resolve` merges the nodes of the links that hold into classes, each named by its most
table-like member. Pure and deterministic: the Spark layer collects the evidence, calls these
and stores the links in ``dataset_aliases``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace

ACCEPTED = "accepted"
REJECTED = "rejected"
PROPOSED = "proposed"

SESSION_CATALOG = "spark_catalog"
"""Spark's session catalog: SQL logs name its tables without it."""

_SCHEME_ALIASES = {"s3a": "s3", "s3n": "s3", "gcs": "gs", "wasbs": "wasb", "abfss": "abfs"}
"""URI schemes that name the same storage (Hadoop's connectors; the TLS variant of Azure's)."""
_URI = re.compile(r"^([a-zA-Z][a-zA-Z0-9+.-]*):(.*)$")


@dataclass(frozen=True, slots=True)
class AliasLink:
    """``alias`` names the same dataset as ``canonical``."""

    alias: str
    canonical: str
    evidence: str
    detail: str
    confidence: float
    status: str = PROPOSED


@dataclass(frozen=True, slots=True)
class Decision:
    """A steward's line: accept or reject ``alias → canonical`` (``canonical`` None: every link
    of the alias)."""

    alias: str
    canonical: str | None
    accept: bool


def is_path(name: str) -> bool:
    """A location (a URI or an absolute path), not a table name."""
    return name.startswith("/") or (_URI.match(name) is not None and "." not in name.split(":")[0])


def normalise_location(name: str) -> str:
    """A location in one spelling: equivalent schemes folded (``s3a``/``s3n`` → ``s3``),
    ``file:///x`` and ``/x`` as ``file:/x``, ``/dbfs/x`` as ``dbfs:/x``, no trailing slash.

    Examples:
        >>> normalise_location("s3a://bucket/wh/orders/")
        's3://bucket/wh/orders'
        >>> normalise_location("file:///lake/wh/t"), normalise_location("/lake/wh/t")
        ('file:/lake/wh/t', 'file:/lake/wh/t')
        >>> normalise_location("/dbfs/mnt/x"), normalise_location("dbfs:///mnt/x/")
        ('dbfs:/mnt/x', 'dbfs:/mnt/x')
    """
    if name.startswith("/dbfs/"):
        name = "dbfs:" + name[len("/dbfs") :]
    elif name.startswith("/"):
        name = "file:" + name
    match = _URI.match(name)
    if match is None:
        return name
    scheme, rest = match.group(1).lower(), match.group(2)
    scheme = _SCHEME_ALIASES.get(scheme, scheme)
    if scheme in ("file", "dbfs"):
        rest = "/" + rest.lstrip("/")  # file:///x, file:/x → file:/x
    stripped = rest.rstrip("/")
    return f"{scheme}:{stripped or '/'}"


def table_name(name: str) -> str:
    """A catalog table name as SQL lineage spells it: lower case, the session catalog left out.

    Examples:
        >>> table_name("spark_catalog.Default.T1"), table_name("main.sales.orders")
        ('default.t1', 'main.sales.orders')
    """
    parts = [p.strip('`"') for p in name.split(".")]
    if len(parts) == 3 and parts[0].lower() == SESSION_CATALOG:
        parts = parts[1:]
    return ".".join(parts).lower()


# --- the evidence rules --------------------------------------------------------------------


def symlink_links(symlinks: Iterable[tuple[str, str, str]]) -> list[AliasLink]:
    """OpenLineage ``symlinks`` facets: ``(node, symlink name, symlink type)``; the producer
    says the dataset at ``node`` is the table ``name`` (confidence 1)."""
    links = []
    for node, name, kind in symlinks:
        canonical = table_name(name) if (kind or "TABLE").upper() == "TABLE" else name
        if canonical != node:
            detail = f"symlinks facet: {kind or 'TABLE'} {name}"
            links.append(AliasLink(node, canonical, "symlink", detail, 1.0))
    return links


def location_links(locations: Iterable[tuple[str, str]]) -> list[AliasLink]:
    """A catalog's table locations (``DESCRIBE DETAIL``: ``(name, location)``): a path-named
    dataset at the location is the table (confidence 0.95: a location can be reused after a
    table is dropped)."""
    links = []
    for name, location in locations:
        if name and location:
            alias = normalise_location(location)
            detail = f"catalog: {name} is stored at {location}"
            links.append(AliasLink(alias, table_name(name), "catalog_location", detail, 0.95))
    return links


def storage_links(nodes: Iterable[str]) -> list[AliasLink]:
    """Locations spelt differently (scheme aliases, ``file:`` forms, trailing slashes) are one
    location (confidence 1)."""
    links = []
    for node in nodes:
        if is_path(node):
            canonical = normalise_location(node)
            if canonical != node:
                detail = f"storage scheme normalisation: {node} is {canonical}"
                links.append(AliasLink(node, canonical, "storage_scheme", detail, 1.0))
    return links


def case_links(nodes: Iterable[str]) -> list[AliasLink]:
    """Table names that differ only in letter case. An unquoted identifier is folded by its
    engine, to upper case (Snowflake, Oracle, Db2) or lower case (PostgreSQL, Redshift, Spark,
    Hive): a name all in one case is the folded spelling of the other (confidence 0.9). A name
    in mixed case was quoted and is case-sensitive on those engines (confidence 0.5: a
    steward decides)."""
    names = sorted({n for n in nodes if not is_path(n)})
    lowered = {n for n in names if n == n.lower()}
    links = []
    for node in names:
        folded = node.lower()
        if folded == node or folded not in lowered:
            continue
        if node == node.upper():
            detail = "case: an unquoted identifier folded to upper case (Snowflake, Oracle)"
            links.append(AliasLink(node, folded, "case", detail, 0.9))
        else:
            detail = "case: mixed case was quoted (case-sensitive where identifiers fold)"
            links.append(AliasLink(node, folded, "case", detail, 0.5))
    return links


def default_schema_links(
    names: Iterable[str], sessions: Iterable[tuple[str | None, str | None]]
) -> list[AliasLink]:
    """A partly qualified name (``orders``, ``sales.orders``: how the Spark listener's symlinks,
    dbt or a session without defaults name a table) and the same table qualified by a session
    default of the query rows (``default_database``, ``default_schema``), when that qualified
    name is among ``names`` too. One session default leading to a known name: confidence 0.9;
    defaults that lead to several: 0.5 for each (a steward decides)."""
    known = {n for n in names if not is_path(n)}
    defaults = sorted(set(sessions), key=str)
    links = []
    for name in sorted(known):
        parts = name.split(".")
        if len(parts) > 2:
            continue
        found: dict[str, str] = {}
        for database, schema in defaults:
            candidates = []
            if len(parts) == 1 and schema:
                candidates.append((f"{schema}.{name}", f"default schema {schema}"))
                if database:
                    candidates.append(
                        (f"{database}.{schema}.{name}", f"defaults {database}.{schema}")
                    )
            if database:
                candidates.append((f"{database}.{name}", f"default database {database}"))
            for candidate, why in candidates:
                if candidate.lower() in known and candidate.lower() != name:
                    found.setdefault(candidate.lower(), why)
        confidence = 0.9 if len(found) == 1 else 0.5
        for canonical, why in sorted(found.items()):
            detail = f"a query row's {why}"
            links.append(AliasLink(name, canonical, "default_schema", detail, confidence))
    return links


# --- the steward and the merge ---------------------------------------------------------------


def apply_decisions(links: Iterable[AliasLink], decisions: Iterable[Decision]) -> list[AliasLink]:
    """Each link with the steward's status (accepted / rejected, else proposed); an accepted
    line that matches no derived link is added with evidence ``steward`` (confidence 1)."""
    by_pair: dict[tuple[str, str | None], bool] = {}
    for d in decisions:
        by_pair[(d.alias, d.canonical)] = d.accept
    out = []
    matched: set[tuple[str, str | None]] = set()
    for link in links:
        for key in ((link.alias, link.canonical), (link.alias, None)):
            if key in by_pair:
                matched.add(key)
                link = replace(link, status=ACCEPTED if by_pair[key] else REJECTED)
                break
        out.append(link)
    for (alias, canonical), accept in sorted(by_pair.items(), key=str):
        if accept and canonical is not None and (alias, canonical) not in matched:
            out.append(AliasLink(alias, canonical, "steward", "the steward file", 1.0, ACCEPTED))
    return out


def holds(link: AliasLink, min_confidence: float) -> bool:
    """Whether the graph merges the link: accepted by the steward, or proposed with at least
    ``min_confidence``."""
    if link.status == REJECTED:
        return False
    return link.status == ACCEPTED or link.confidence >= min_confidence


def _preference(name: str) -> tuple[bool, int, bool, str]:
    """Table names before locations, more qualified before less, folded case before other."""
    return (is_path(name), -name.count("."), name != name.lower(), name)


def resolve(links: Iterable[AliasLink], min_confidence: float) -> dict[str, str]:
    """Node → the name of its class, for every node of a link that holds (a node that names
    its class maps to itself). Links form classes by union (a path → its normalised form →
    the table the catalog stores there → ...), each named by its preferred member."""
    parent: dict[str, str] = {}

    def find(x: str) -> str:
        parent.setdefault(x, x)
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for link in links:
        if holds(link, min_confidence):
            a, b = find(link.alias), find(link.canonical)
            if a != b:
                parent[max(a, b)] = min(a, b)
    classes: dict[str, list[str]] = {}
    for node in list(parent):
        classes.setdefault(find(node), []).append(node)
    names: dict[str, str] = {}
    for members in classes.values():
        best = min(members, key=_preference)
        names.update({m: best for m in members})
    return names


def alias_sets(links: Iterable[AliasLink], min_confidence: float) -> dict[str, tuple[str, ...]]:
    """Node → the other members of its class (sorted), for every node of a link that holds:
    the names an emitted dataset lists in its OpenLineage ``symlinks`` facet.

    Examples:
        >>> links = [AliasLink("file:/wh/t", "db.t", "symlink", "", 1.0),
        ...          AliasLink("T", "db.t", "case", "", 0.5)]
        >>> alias_sets(links, 0.9)
        {'db.t': ('file:/wh/t',), 'file:/wh/t': ('db.t',)}
    """
    members: dict[str, list[str]] = {}
    for node, name in resolve(links, min_confidence).items():
        members.setdefault(name, []).append(node)
    return {
        node: tuple(sorted(m for m in group if m != node))
        for group in members.values()
        for node in sorted(group)
    }


def aliases_of(name: str, links: Iterable[AliasLink]) -> list[AliasLink]:
    """The links that name ``name`` on either side (``lineage aliases``)."""
    return [link for link in links if name in (link.alias, link.canonical)]


def decisions_from(rows: Iterable[Mapping[str, object]]) -> list[Decision]:
    """Steward lines (``alias``, optional ``canonical``, ``decision``: accept / reject).

    Raises:
        ValueError: a line without an alias or with another decision (names the line).
    """
    out = []
    for i, row in enumerate(rows, 1):
        alias, decision = row.get("alias"), str(row.get("decision") or "").strip().lower()
        if not isinstance(alias, str) or not alias.strip():
            raise ValueError(f"steward line {i}: no alias")
        if decision not in ("accept", "reject"):
            raise ValueError(f"steward line {i}: decision is accept or reject, not {decision!r}")
        canonical = row.get("canonical")
        out.append(
            Decision(alias, str(canonical) if canonical else None, accept=decision == "accept")
        )
    return out
