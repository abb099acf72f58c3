"""Generate the revenue sample's query log in data/freshness/ (deterministic: same output on
every run).

Five weeks of a warehouse's query history (JSON Lines, one row per statement, with query ids,
users, start and end times and statuses) for this graph:

  raw.stripe_payments  -> staging.stg_payments -> marts.fct_payments -> reports.rpt_monthly_revenue
  raw.salesforce_deals -> staging.stg_deals    -> marts.fct_deals    -> reports.rpt_monthly_revenue
  raw.exchange_rates   -> staging.stg_exchange_rates -> marts.fct_payments (amount_usd only)

Loaders write the raw tables (Stripe hourly, Salesforce every six hours, exchange rates daily),
dbt builds the rest every night, analysts and a BI tool read the marts and the report. The
exchange-rate load fails every night of the last three days of the log (its last successful
load is three days before the log ends); everything downstream keeps being rebuilt on time from
the stale rates. The folder also holds the owners file and the catalog's table owners of the
walkthrough (docs/freshness.md).

Usage: python scripts/make_freshness_log.py [output_dir]
"""

from __future__ import annotations

import hashlib
import json
import random
import sys
from datetime import datetime, timedelta
from pathlib import Path

START = datetime(2024, 5, 1)
DAYS = 35
END = START + timedelta(days=DAYS)  # the log ends just before this instant
FX_LAST_GOOD_DAY = DAYS - 4  # day index of the last successful exchange-rate load
"""The exchange-rate load succeeds through day 31 (2024-06-01) and fails on the last three
days (2024-06-02 .. 06-04) of the log."""

ANALYSTS = ("ana", "bo", "chen")

OWNERS_YAML = """\
# Explicit owners: the first pattern that matches a table (shell-style globs on the canonical
# lower-case name) gives its team and contact. Tables no pattern matches get the owner the
# catalog exports, else their dominant writer (marked inferred).
owners:
  - pattern: raw.stripe_*
    team: payments-platform
    contact: payments-data@example.com
  - pattern: raw.exchange_rates
    team: treasury-data
    contact: "#treasury-data"
  - pattern: reports.*
    team: finance-analytics
    contact: finance-analytics@example.com
"""

CATALOG_TABLES = """\
TABLE_CATALOG,TABLE_SCHEMA,TABLE_NAME,TABLE_OWNER
REVENUE,RAW,SALESFORCE_DEALS,SALES_OPS
REVENUE,RAW,STRIPE_PAYMENTS,LOADER_ROLE
REVENUE,MARTS,FCT_DEALS,
"""
"""The catalog's table owners (information_schema.tables with TABLE_OWNER): the explicit
owners file wins over it for raw.stripe_payments; fct_deals has no owner recorded."""


def _ts(at: datetime) -> str:
    return at.strftime("%Y-%m-%dT%H:%M:%SZ")


class _Log:
    def __init__(self) -> None:
        self.rows: list[dict[str, str]] = []

    def add(
        self, at: datetime, text: str, user: str, *, seconds: int = 20, ok: bool = True
    ) -> None:
        query_id = hashlib.sha256(f"{_ts(at)}|{user}|{text}".encode()).hexdigest()[:20]
        self.rows.append(
            {
                "query_id": query_id,
                "query_text": text,
                "user_name": user,
                "start_time": _ts(at),
                "end_time": _ts(at + timedelta(seconds=seconds)),
                "status": "success" if ok else "failed",
            }
        )


def _stripe_load(at: datetime, rng: random.Random) -> str:
    return (
        "INSERT INTO raw.stripe_payments (payment_id, paid_at, amount, currency, customer_id)\n"
        f"VALUES ('py_{rng.randint(10**6, 10**7)}', '{_ts(at)}', {rng.randint(500, 90000)}, "
        f"'EUR', 'cus_{rng.randint(1000, 9999)}')"
    )


def _salesforce_load(at: datetime, rng: random.Random) -> str:
    return (
        "INSERT INTO raw.salesforce_deals (deal_id, closed_at, amount, currency, stage)\n"
        f"VALUES ('0065{rng.randint(10**8, 10**9)}', '{_ts(at)}', {rng.randint(1000, 500000)}, "
        "'USD', 'closed_won')"
    )


def _fx_load(day: datetime) -> str:
    return (
        "INSERT INTO raw.exchange_rates (rate_date, currency, rate_to_usd)\n"
        f"VALUES ('{day:%Y-%m-%d}', 'EUR', 1.08), ('{day:%Y-%m-%d}', 'GBP', 1.27)"
    )


NIGHTLY_BUILD: tuple[tuple[int, str], ...] = (
    (
        0,
        "CREATE OR REPLACE TABLE staging.stg_payments AS\n"
        "SELECT payment_id, CAST(paid_at AS DATE) AS paid_on, amount / 100.0 AS amount_local,\n"
        "       upper(currency) AS currency, customer_id\n"
        "FROM raw.stripe_payments WHERE amount > 0",
    ),
    (
        2,
        "CREATE OR REPLACE TABLE staging.stg_deals AS\n"
        "SELECT deal_id, CAST(closed_at AS DATE) AS closed_on, amount AS amount_usd\n"
        "FROM raw.salesforce_deals WHERE stage = 'closed_won'",
    ),
    (
        4,
        "CREATE OR REPLACE TABLE staging.stg_exchange_rates AS\n"
        "SELECT rate_date, upper(currency) AS currency, rate_to_usd\n"
        "FROM raw.exchange_rates WHERE rate_to_usd > 0",
    ),
    (
        10,
        "CREATE OR REPLACE TABLE marts.fct_payments AS\n"
        "SELECT p.payment_id, p.paid_on, p.currency, p.amount_local,\n"
        "       p.amount_local * r.rate_to_usd AS amount_usd\n"
        "FROM staging.stg_payments p\n"
        "JOIN staging.stg_exchange_rates r ON r.currency = p.currency AND r.rate_date = p.paid_on",
    ),
    (
        14,
        "CREATE OR REPLACE TABLE marts.fct_deals AS\n"
        "SELECT d.deal_id, d.closed_on, d.amount_usd FROM staging.stg_deals d",
    ),
    (
        20,
        "CREATE OR REPLACE TABLE reports.rpt_monthly_revenue AS\n"
        "SELECT month, SUM(payments_usd) AS payments_usd, SUM(deals_usd) AS deals_usd\n"
        "FROM (\n"
        "  SELECT date_trunc('month', paid_on) AS month, amount_usd AS payments_usd,\n"
        "         0 AS deals_usd FROM marts.fct_payments\n"
        "  UNION ALL\n"
        "  SELECT date_trunc('month', closed_on) AS month, 0 AS payments_usd,\n"
        "         amount_usd AS deals_usd FROM marts.fct_deals\n"
        ") u GROUP BY month",
    ),
)
"""dbt's nightly build: (minutes after 02:00, statement)."""


def make_log(rng: random.Random) -> list[dict[str, str]]:
    """Every row of the log, in time order."""
    log = _Log()
    for index in range(DAYS):
        day = START + timedelta(days=index)
        for hour in range(24):  # Stripe: hourly, a few minutes' jitter
            at = day + timedelta(hours=hour, minutes=rng.randint(0, 6))
            log.add(at, _stripe_load(at, rng), "fivetran_stripe", seconds=8)
        for hour in (0, 6, 12, 18):  # Salesforce: every six hours
            at = day + timedelta(hours=hour, minutes=15 + rng.randint(0, 10))
            log.add(at, _salesforce_load(at, rng), "fivetran_salesforce", seconds=30)
        fx_at = day + timedelta(hours=1, minutes=rng.randint(0, 5))  # exchange rates: daily
        log.add(fx_at, _fx_load(day), "airflow_fx", seconds=12, ok=index <= FX_LAST_GOOD_DAY)
        build = day + timedelta(hours=2)
        for minutes, text in NIGHTLY_BUILD:
            log.add(
                build + timedelta(minutes=minutes, seconds=rng.randint(0, 50)), text, "dbt_prod"
            )
        for hour in range(8, 20, 2):  # the BI tool refreshes its dashboard
            at = day + timedelta(hours=hour, minutes=rng.randint(0, 20))
            log.add(
                at,
                "SELECT month, payments_usd, deals_usd FROM reports.rpt_monthly_revenue\n"
                f"WHERE month >= '{(day - timedelta(days=365)):%Y-%m-01}' ORDER BY month",
                "looker",
                seconds=2,
            )
        if day.weekday() < 5:  # analysts, on weekdays
            analyst = ANALYSTS[index % len(ANALYSTS)]
            at = day + timedelta(hours=10, minutes=rng.randint(0, 300))
            log.add(
                at,
                "SELECT currency, SUM(amount_usd) FROM marts.fct_payments\n"
                f"WHERE paid_on >= '{day:%Y-%m-%d}' GROUP BY currency",
                analyst,
                seconds=4,
            )
            log.add(
                at + timedelta(minutes=30),
                "WITH big AS (SELECT * FROM marts.fct_deals WHERE amount_usd > "
                f"{rng.randint(10000, 90000)}) SELECT count(*) FROM big",
                analyst,
                seconds=3,
            )
            log.add(at + timedelta(minutes=31), "SHOW TABLES IN marts", analyst, seconds=1)
    log.rows.sort(key=lambda r: (r["start_time"], r["query_id"]))
    return log.rows


def main(argv: list[str] | None = None) -> int:
    """Write query_log.jsonl, owners.yaml and catalog_tables.csv into the output folder
    (default data/freshness)."""
    args = sys.argv[1:] if argv is None else argv
    out = Path(args[0]) if args else Path(__file__).resolve().parent.parent / "data" / "freshness"
    out.mkdir(parents=True, exist_ok=True)
    rows = make_log(random.Random(20240501))
    (out / "query_log.jsonl").write_text(
        "".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8"
    )
    (out / "owners.yaml").write_text(OWNERS_YAML, encoding="utf-8")
    (out / "catalog_tables.csv").write_text(CATALOG_TABLES, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
