"""Column tags: declarations (a tags file, name rules), their matching, and the rule order.

A tag (``pii``, ``email`` …) is declared on columns, named ``table.column`` in the canonical
lower-case form of the lineage tables, four ways, in this order of precedence (the first that
names a column gives its ``rule``):

1. ``column``: an explicit column in the tags file (``raw.customers.email``);
2. ``source``: a column listed in a tag export of the source (Snowflake ``TAG_REFERENCES``,
   Unity Catalog ``information_schema.column_tags``);
3. ``pattern``: a name pattern in the tags file (``*.email``, ``*ssn*``; ``fnmatch`` globs on
   ``table.column``);
4. ``name rule``: a built-in name rule (:data:`NAME_RULES`), only when switched on.

The graph stage carries declared tags downstream over the column lineage (see
``lineage_udfs.spark.graph.tags``); this module is pure Python and decides nothing about edges.

The tags file (YAML or JSON)::

    tags:
      - column: raw.customers.email
        tags: [pii]
      - pattern: "*ssn*"
        tags: [pii]
        value: national_id          # optional, carried with the tag
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from lineage_udfs.core.errors import InputError

RULE_ORDER: tuple[str, ...] = ("column", "source", "pattern", "name rule")
"""Declaration kinds, strongest first: when several declare one tag on one column, the first
kind gives the row's ``rule`` (then the smaller rule text, then the smaller value)."""

NAME_RULES: dict[str, tuple[str, tuple[str, ...]]] = {
    "email": ("pii", ("*email*", "*e_mail*")),
    "phone": ("pii", ("*phone*", "*mobile_number*", "*msisdn*")),
    "national_id": ("pii", ("*ssn*", "*social_security*", "*national_id*", "*passport*")),
    "birth_date": ("pii", ("*birth_date*", "*date_of_birth*", "*birthdate*", "dob")),
    "address": ("pii", ("*street*", "*postal_code*", "*zip_code*", "*home_address*")),
    "payment_card": ("pii", ("*card_number*", "*credit_card*", "*iban*")),
    "ip_address": ("pii", ("*ip_address*", "ip")),
}
"""Opt-in name rules: rule name -> (tag, column-name globs matched on the column name only)."""


@dataclass(frozen=True, slots=True)
class Declaration:
    """One declaration: ``tag`` on the columns ``column`` names (``kind`` ``column`` or
    ``source``) or that ``pattern`` matches (``pattern``, ``name rule``)."""

    tag: str
    kind: str
    rule: str
    column: str | None = None
    pattern: str | None = None
    value: str | None = None

    def matches(self, ref: str) -> bool:
        """Whether this declaration names ``ref`` (``table.column``, lower case)."""
        if self.column is not None:
            return self.column == ref
        assert self.pattern is not None
        if self.kind == "name rule":  # the column name only
            return fnmatch.fnmatchcase(ref.rsplit(".", 1)[-1], self.pattern)
        return fnmatch.fnmatchcase(ref, self.pattern)


@dataclass(frozen=True, slots=True)
class TagRow:
    """A declared tag on a column: the winning declaration by :func:`precedence`."""

    ref: str
    tag: str
    rule: str
    value: str | None


_NAME = re.compile(r"^[a-z0-9_][a-z0-9_.:\-]*$")


def _tag_name(value: Any, where: str) -> str:
    name = str(value).strip().lower()
    if not _NAME.match(name):
        raise InputError(f"{where}: tag {value!r} is not a tag name (letters, digits, _ . : -)")
    return name


def _ref(value: Any, where: str) -> str:
    ref = "".join(ch for ch in str(value).strip() if ch not in '`"[]').lower()
    if ref.count(".") < 1 or ref.startswith(".") or ref.endswith("."):
        raise InputError(f"{where}: column {value!r} is not TABLE.COLUMN")
    return ref


def parse_tags_file(data: Any, origin: str = "tags file") -> list[Declaration]:
    """The declarations of a parsed tags file (see the module docstring).

    Raises:
        InputError: one line naming the entry that is not valid.

    Examples:
        >>> found = parse_tags_file({"tags": [{"column": "Raw.Customers.EMAIL", "tags": ["PII"]},
        ...                                   {"pattern": "*ssn*", "tags": "pii"}]})
        >>> [(d.kind, d.tag, d.rule) for d in found]
        [('column', 'pii', 'column raw.customers.email'), ('pattern', 'pii', 'pattern *ssn*')]
        >>> parse_tags_file({"tags": [{"column": "email", "tags": ["pii"]}]})
        Traceback (most recent call last):
        ...
        lineage_udfs.core.errors.InputError: tags file entry 1: column 'email' is not TABLE.COLUMN
    """
    if data is None:
        return []
    if not isinstance(data, Mapping) or not isinstance(data.get("tags", []), list):
        raise InputError(f"{origin}: expected a mapping with a list under 'tags'")
    unknown = sorted(set(data) - {"tags"})
    if unknown:
        raise InputError(f"{origin}: unknown key(s) {unknown}")
    out: list[Declaration] = []
    for i, entry in enumerate(data.get("tags") or [], start=1):
        where = f"{origin} entry {i}"
        if not isinstance(entry, Mapping):
            raise InputError(f"{where}: expected a mapping with column or pattern, and tags")
        extra = sorted(set(entry) - {"column", "pattern", "tags", "value"})
        if extra:
            raise InputError(f"{where}: unknown key(s) {extra}")
        if ("column" in entry) == ("pattern" in entry):
            raise InputError(f"{where}: give exactly one of column or pattern")
        names = entry.get("tags")
        names = [names] if isinstance(names, str) else names
        if not names or not isinstance(names, list):
            raise InputError(f"{where}: tags must be a tag name or a list of them")
        value = None if entry.get("value") is None else str(entry["value"])
        for name in names:
            tag = _tag_name(name, where)
            if "column" in entry:
                ref = _ref(entry["column"], where)
                out.append(Declaration(tag, "column", f"column {ref}", column=ref, value=value))
            else:
                pattern = str(entry["pattern"]).strip().lower()
                if not pattern:
                    raise InputError(f"{where}: empty pattern")
                out.append(
                    Declaration(tag, "pattern", f"pattern {pattern}", pattern=pattern, value=value)
                )
    return out


def name_rule_declarations(rules: bool | Sequence[str]) -> list[Declaration]:
    """The declarations of the built-in name rules switched on: all (``True``), none
    (``False``) or those named.

    Raises:
        InputError: an unknown rule name.

    Examples:
        >>> [d.pattern for d in name_rule_declarations(["email"])]
        ['*email*', '*e_mail*']
        >>> name_rule_declarations(["emails"])
        Traceback (most recent call last):
        ...
        lineage_udfs.core.errors.InputError: unknown name rule 'emails' (known: address, \
birth_date, email, ip_address, national_id, payment_card, phone)
    """
    if rules is False:
        return []
    names = sorted(NAME_RULES) if rules is True else list(rules)  # type: ignore[arg-type]
    out = []
    for name in names:
        if name not in NAME_RULES:
            raise InputError(f"unknown name rule {name!r} (known: {', '.join(sorted(NAME_RULES))})")
        tag, patterns = NAME_RULES[name]
        out += [Declaration(tag, "name rule", f"name rule {name}", pattern=p) for p in patterns]
    return out


def precedence(declaration: Declaration) -> tuple[int, str, str]:
    """Sort key of declarations of one tag on one column: the strongest first."""
    return (RULE_ORDER.index(declaration.kind), declaration.rule, declaration.value or "")


def declared(refs: Iterable[str], declarations: Sequence[Declaration]) -> list[TagRow]:
    """Every (column, tag) the declarations name among ``refs`` (and every explicit or
    source-declared column, named or not), one row each: the strongest declaration's.

    Examples:
        >>> ds = parse_tags_file({"tags": [{"pattern": "*.email", "tags": ["pii"]},
        ...                                {"column": "a.t.email", "tags": ["pii"]}]})
        >>> [(r.ref, r.rule) for r in declared(["a.t.email", "b.u.email", "b.u.id"], ds)]
        [('a.t.email', 'column a.t.email'), ('b.u.email', 'pattern *.email')]
    """
    best: dict[tuple[str, str], Declaration] = {}

    def offer(ref: str, d: Declaration) -> None:
        key = (ref, d.tag)
        if key not in best or precedence(d) < precedence(best[key]):
            best[key] = d

    for d in declarations:
        if d.column is not None:
            offer(d.column, d)
    globbed = [d for d in declarations if d.column is None]
    if globbed:
        for ref in refs:
            for d in globbed:
                if d.matches(ref):
                    offer(ref, d)
    return [TagRow(ref, tag, d.rule, d.value) for (ref, tag), d in sorted(best.items())]


def split_ref(ref: str) -> tuple[str, str]:
    """``table.column`` -> (table, column): the column is the last dotted part."""
    table, _, column = ref.rpartition(".")
    return table, column
