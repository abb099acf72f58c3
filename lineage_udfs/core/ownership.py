"""Explicit dataset owners: the rules of an ``owners`` file, and which one names a table.

An owners file (``activity.owners_file``) holds ``owners: [{pattern, team, contact}]``; a
pattern is a shell-style glob (``*``, ``?``, ``[abc]``) over the canonical lower-case table name,
and the first rule whose pattern matches gives the owner. The Spark stage matches with
:func:`glob_regex` (a Java- and Python-compatible regular expression); the pure-Python
:func:`explicit_owner` is the same match, for tests and the command line.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from lineage_udfs.core.errors import ConfigError


@dataclass(frozen=True, slots=True)
class OwnerRule:
    """One line of an owners file."""

    pattern: str
    team: str
    contact: str | None = None


def owner_rules(document: Any, source: str = "owners file") -> tuple[OwnerRule, ...]:
    """The rules of a loaded owners file (``{"owners": [{pattern, team, contact}, ...]}``).

    Raises:
        ConfigError: the document is not of that shape (the message names ``source`` and the
            entry).

    Examples:
        >>> owner_rules({"owners": [{"pattern": "Raw.*", "team": "ingest"}]})
        (OwnerRule(pattern='raw.*', team='ingest', contact=None),)
        >>> owner_rules({"owners": [{"team": "x"}]})
        Traceback (most recent call last):
        ...
        lineage_udfs.core.errors.ConfigError: owners file: entry 1 needs a pattern and a team
    """
    if document is None:
        return ()
    if not isinstance(document, Mapping) or not isinstance(document.get("owners", []), list):
        raise ConfigError(f"{source}: expected a mapping with a list under 'owners'")
    rules = []
    for index, entry in enumerate(document.get("owners") or [], start=1):
        if not isinstance(entry, Mapping):
            raise ConfigError(f"{source}: entry {index} is not a mapping")
        pattern, team = entry.get("pattern"), entry.get("team")
        if not isinstance(pattern, str) or not pattern or not isinstance(team, str) or not team:
            raise ConfigError(f"{source}: entry {index} needs a pattern and a team")
        unknown = set(entry) - {"pattern", "team", "contact"}
        if unknown:
            raise ConfigError(f"{source}: entry {index} has unknown keys {sorted(unknown)}")
        contact = entry.get("contact")
        rules.append(
            OwnerRule(pattern.strip().lower(), team, None if contact is None else str(contact))
        )
    return tuple(rules)


def glob_regex(pattern: str) -> str:
    """An anchored regular expression for a shell-style glob (``*`` any run of characters,
    ``?`` one character, ``[...]`` a class), valid in Java and Python alike.

    Examples:
        >>> glob_regex("raw.stripe_*")
        '^raw\\\\.stripe_.*$'
        >>> bool(re.match(glob_regex("stg_[pd]*"), "stg_deals"))
        True
    """
    out = ["^"]
    i = 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "*":
            out.append(".*")
        elif ch == "?":
            out.append(".")
        elif ch == "[":
            end = pattern.find("]", i + 1)
            if end == -1:
                out.append(re.escape(ch))
            else:
                body = pattern[i + 1 : end]
                negate = body.startswith("!")
                body = body[1:] if negate else body
                escaped = "".join("\\" + c if c in "\\[]^" else c for c in body)
                out.append(f"[{'^' if negate else ''}{escaped}]")
                i = end
        else:
            out.append(re.escape(ch))
        i += 1
    out.append("$")
    return "".join(out)


def explicit_owner(table: str, rules: Sequence[OwnerRule]) -> OwnerRule | None:
    """The first rule whose pattern matches ``table`` (canonical, lower-case), or None.

    Examples:
        >>> rules = owner_rules({"owners": [{"pattern": "raw.*", "team": "ingest"},
        ...                                 {"pattern": "*", "team": "platform"}]})
        >>> explicit_owner("raw.orders", rules).team, explicit_owner("marts.x", rules).team
        ('ingest', 'platform')
    """
    name = table.lower()
    for rule in rules:
        if re.match(glob_regex(rule.pattern), name):
            return rule
    return None
