# ruff: noqa: E501, N802, W291, W293, RUF005  (data: verbatim logged SQL keeps its trailing blanks; C(...) reads as a table row)
"""Second held-out lineage set (``heldout2_cases.jsonl``): realistic query-log statements.

Every expectation below was written by hand from SQL semantics under the project's documented
conventions (``conf/base.yaml`` ``parser:``), before the parser was run on it. Run::

    python eval/build_heldout2_cases.py > eval/heldout2_cases.jsonl

Helpers:

* ``C(id, dialect, sql, sources, targets, columns, note, **extra)`` adds one case.
* ``E(target_table, spec)``: DIRECT column edges. ``spec`` has one line per target column,
  ``target_col <- src_table.col src_table.col2``.
* ``R(spec)``: result columns of a SELECT, ``output name <- src_table.col …`` per line.
"""

from __future__ import annotations

import json
import sys
import textwrap

CASES: list[dict] = []


def C(cid, dialect, sql, sources, targets, columns, note, **extra):
    case = {
        "id": f"heldout2:{cid}",
        "origin": "heldout2",
        "dialect": dialect,
        "sql": textwrap.dedent(sql).strip("\n"),
        "expected": {"sources": sources, "targets": targets, "columns": columns},
        "note": note,
    }
    case.update(extra)
    CASES.append(case)


def _spec(spec):
    for line in spec.strip().splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        out, _, srcs = line.partition("<-")
        yield out.strip(), srcs.split()


def E(target, spec):
    return [[s, f"{target}.{out}"] for out, srcs in _spec(spec) for s in srcs]


def R(spec):
    return [[s, out] for out, srcs in _spec(spec) for s in srcs]


def I(src, target, names):  # noqa: E743 - identity edges
    return [[f"{src}.{c}", f"{target}.{c}"] for c in names.split()]


# ---------------------------------------------------------------------------------------------
# A. Long statements as real systems log them (dbt, Airflow, Looker/BI, Fivetran)
# ---------------------------------------------------------------------------------------------

C(
    "sf_dbt_fct_orders_cte_chain",
    "snowflake",
    """
create or replace transient table "ANALYTICS"."DBT_PROD"."FCT_ORDERS"
  
  
  
  as (
with  __dbt__cte__stg_orders as (
select
    id as order_id,
    user_id as customer_id,
    order_date,
    status,
    _etl_loaded_at
from "RAW"."JAFFLE_SHOP"."ORDERS"
where status != 'test'
),  __dbt__cte__stg_payments as (
select
    id as payment_id,
    orderid as order_id,
    paymentmethod as payment_method,
    amount / 100 as amount,
    created as created_at
from "RAW"."STRIPE"."PAYMENT"
), orders as (

    select * from __dbt__cte__stg_orders

),

payments as (

    select * from __dbt__cte__stg_payments

),

order_payments as (

    select
        order_id,
        sum(case when payment_method = 'credit_card' then amount else 0 end) as credit_card_amount,
        sum(case when payment_method = 'coupon' then amount else 0 end) as coupon_amount,
        sum(amount) as total_amount

    from payments

    group by order_id

),

final as (

    select
        orders.order_id,
        orders.customer_id,
        orders.order_date,
        orders.status,
        order_payments.credit_card_amount,
        order_payments.coupon_amount,
        order_payments.total_amount as amount

    from orders


    left join order_payments
        on orders.order_id = order_payments.order_id

)

select * from final
  );
""",
    ["raw.jaffle_shop.orders", "raw.stripe.payment"],
    ["analytics.dbt_prod.fct_orders"],
    E(
        "analytics.dbt_prod.fct_orders",
        """
    order_id <- raw.jaffle_shop.orders.id
    customer_id <- raw.jaffle_shop.orders.user_id
    order_date <- raw.jaffle_shop.orders.order_date
    status <- raw.jaffle_shop.orders.status
    credit_card_amount <- raw.stripe.payment.amount
    coupon_amount <- raw.stripe.payment.amount
    amount <- raw.stripe.payment.amount
  """,
    ),
    "dbt-compiled CTAS: ephemeral __dbt__cte__ models, 6-deep CTE chain, SELECT * over CTEs (columns known from the CTE), CASE conditions INDIRECT",
)

C(
    "bq_dbt_dim_customers_except_qualify",
    "bigquery",
    '''
create or replace table `acme-prod`.`dbt_marts`.`dim_customers`
partition by date_trunc(first_order_at, month)
cluster by customer_id
OPTIONS(
    description="""Customer dimension, one row per customer"""
  )
as (
with customers as (
  select * except (_fivetran_synced, _fivetran_deleted)
  from `acme-prod`.`fivetran_shopify`.`customer`
  where not coalesce(_fivetran_deleted, false)
),
orders as (
  select customer_id, created_at, total_price, cancelled_at
  from `acme-prod`.`fivetran_shopify`.`order`
),
customer_orders as (
  select
    customer_id,
    min(created_at) as first_order_at,
    max(created_at) as most_recent_order_at,
    count(*) as number_of_orders,
    sum(total_price) as lifetime_value
  from orders
  where cancelled_at is null
  group by 1
),
latest as (
  select *
  from customers
  qualify row_number() over (partition by id order by updated_at desc) = 1
),
final as (
  select
    latest.id as customer_id,
    latest.email,
    concat(latest.first_name, ' ', latest.last_name) as full_name,
    customer_orders.first_order_at,
    customer_orders.most_recent_order_at,
    coalesce(customer_orders.number_of_orders, 0) as number_of_orders,
    coalesce(customer_orders.lifetime_value, 0) as lifetime_value
  from latest
  left join customer_orders on latest.id = customer_orders.customer_id
)
select * from final
);
''',
    ["acme-prod.fivetran_shopify.customer", "acme-prod.fivetran_shopify.order"],
    ["acme-prod.dbt_marts.dim_customers"],
    E(
        "acme-prod.dbt_marts.dim_customers",
        """
    customer_id <- acme-prod.fivetran_shopify.customer.id
    email <- acme-prod.fivetran_shopify.customer.email
    full_name <- acme-prod.fivetran_shopify.customer.first_name acme-prod.fivetran_shopify.customer.last_name
    first_order_at <- acme-prod.fivetran_shopify.order.created_at
    most_recent_order_at <- acme-prod.fivetran_shopify.order.created_at
    lifetime_value <- acme-prod.fivetran_shopify.order.total_price
  """,
    ),
    "dbt BigQuery CTAS with PARTITION BY/CLUSTER BY/OPTIONS, SELECT * EXCEPT over a table without schema (named columns traced through the stars by name), QUALIFY, table named `order`; COUNT(*) gives no edge",
)

C(
    "dbx_dbt_int_sessions_windows",
    "databricks",
    """
/* {"app": "dbt", "dbt_version": "1.8.3", "profile_name": "lakehouse", "target_name": "prod", "node_id": "model.lakehouse.int_sessions"} */

  
    
        create or replace table `main`.`analytics`.`int_sessions`
      
      
    using delta
      
      
      
      
      
      
      
      as
      with events as (
    select * from `main`.`raw_web`.`page_events`
    where event_ts >= '2024-01-01'
),
ordered as (
    select
        *,
        lag(event_ts) over (partition by anonymous_id order by event_ts) as prev_event_ts
    from events
),
flagged as (
    select
        *,
        case when prev_event_ts is null
               or unix_timestamp(event_ts) - unix_timestamp(prev_event_ts) > 1800
             then 1 else 0 end as is_new_session
    from ordered
),
numbered as (
    select
        *,
        sum(is_new_session) over (partition by anonymous_id order by event_ts rows between unbounded preceding and current row) as session_number
    from flagged
),
sessions as (
    select
        anonymous_id,
        session_number,
        min(event_ts) as session_start,
        max(event_ts) as session_end,
        count(*) as page_views,
        first(page_url) as landing_page
    from numbered
    group by anonymous_id, session_number
)
select
    md5(concat(anonymous_id, '-', cast(session_number as string))) as session_id,
    anonymous_id,
    session_start,
    session_end,
    page_views,
    landing_page
from sessions
""",
    ["main.raw_web.page_events"],
    ["main.analytics.int_sessions"],
    E(
        "main.analytics.int_sessions",
        """
    session_id <- main.raw_web.page_events.anonymous_id
    session_id <- main.raw_web.page_events.event_ts
    anonymous_id <- main.raw_web.page_events.anonymous_id
    session_start <- main.raw_web.page_events.event_ts
    session_end <- main.raw_web.page_events.event_ts
    landing_page <- main.raw_web.page_events.page_url
  """,
    ),
    "dbt-databricks CTAS with query-tag comment, `using delta`, star pass-through CTEs, window frames; session_number sums a CASE of constants over event_ts gaps, a value mapping of event_ts (DIRECT since the value-mapping rule), so session_id derives from anonymous_id and event_ts",
)

C(
    "rs_dbt_daily_revenue_dist_sort",
    "redshift",
    """
  create  table
    "analytics"."dbt_prod"."fct_daily_revenue__dbt_tmp"
    diststyle key distkey (order_date)
    compound sortkey(order_date)
  as (
with orders as (
    select * from "analytics"."dbt_prod"."stg_orders"
),
refunds as (
    select order_id, sum(refund_amount) as refund_amount
    from "analytics"."dbt_prod"."stg_refunds"
    group by 1
),
joined as (
    select
        o.order_date::date as order_date,
        o.order_id,
        o.amount,
        nvl(r.refund_amount, 0) as refund_amount
    from orders o
    left join refunds r using (order_id)
),
daily as (
    select
        order_date,
        count(distinct order_id) as orders,
        sum(amount) as gross_revenue,
        sum(refund_amount) as refunds,
        sum(amount) - sum(refund_amount) as net_revenue
    from joined
    group by order_date
)
select * from daily
  );
""",
    ["analytics.dbt_prod.stg_orders", "analytics.dbt_prod.stg_refunds"],
    ["analytics.dbt_prod.fct_daily_revenue__dbt_tmp"],
    E(
        "analytics.dbt_prod.fct_daily_revenue__dbt_tmp",
        """
    order_date <- analytics.dbt_prod.stg_orders.order_date
    orders <- analytics.dbt_prod.stg_orders.order_id
    gross_revenue <- analytics.dbt_prod.stg_orders.amount
    refunds <- analytics.dbt_prod.stg_refunds.refund_amount
    net_revenue <- analytics.dbt_prod.stg_orders.amount analytics.dbt_prod.stg_refunds.refund_amount
  """,
    ),
    "dbt-redshift CTAS with DISTSTYLE/DISTKEY/SORTKEY, JOIN USING, NVL, COUNT(DISTINCT) is an aggregation (DIRECT)",
)

C(
    "pg_dbt_view_stg_users",
    "postgres",
    """
  create view "warehouse"."analytics"."stg_users__dbt_tmp"
    
    
  as (
    with source as (
    select * from "warehouse"."app_public"."users"
),
renamed as (
    select
        id::bigint as user_id,
        lower(trim(email)) as email,
        nullif(display_name, '') as display_name,
        split_part(email, '@', 2) as email_domain,
        created_at at time zone 'UTC' as created_at_utc,
        (deleted_at is not null) as is_deleted
    from source
)
select * from renamed
  );
""",
    ["warehouse.app_public.users"],
    ["warehouse.analytics.stg_users__dbt_tmp"],
    E(
        "warehouse.analytics.stg_users__dbt_tmp",
        """
    user_id <- warehouse.app_public.users.id
    email <- warehouse.app_public.users.email
    display_name <- warehouse.app_public.users.display_name
    email_domain <- warehouse.app_public.users.email
    created_at_utc <- warehouse.app_public.users.created_at
    is_deleted <- warehouse.app_public.users.deleted_at
  """,
    ),
    "dbt-postgres view: casts, AT TIME ZONE, a projected boolean expression is a transformation (DIRECT), not a CASE condition",
)

C(
    "sf_dbt_snapshot_merge",
    "snowflake",
    """
merge into "ANALYTICS"."SNAPSHOTS"."ORDERS_SNAPSHOT" as DBT_INTERNAL_DEST
    using "ANALYTICS"."SNAPSHOTS"."ORDERS_SNAPSHOT__dbt_tmp" as DBT_INTERNAL_SOURCE
    on DBT_INTERNAL_SOURCE.dbt_scd_id = DBT_INTERNAL_DEST.dbt_scd_id

    when matched
     and DBT_INTERNAL_DEST.dbt_valid_to is null
     and DBT_INTERNAL_SOURCE.dbt_change_type in ('update', 'delete')
        then update
        set dbt_valid_to = DBT_INTERNAL_SOURCE.dbt_valid_to

    when not matched
     and DBT_INTERNAL_SOURCE.dbt_change_type = 'insert'
        then insert ("ORDER_ID", "STATUS", "AMOUNT", "UPDATED_AT", "DBT_UPDATED_AT", "DBT_VALID_FROM", "DBT_VALID_TO", "DBT_SCD_ID")
        values ("ORDER_ID", "STATUS", "AMOUNT", "UPDATED_AT", "DBT_UPDATED_AT", "DBT_VALID_FROM", "DBT_VALID_TO", "DBT_SCD_ID")

;
""",
    ["analytics.snapshots.orders_snapshot__dbt_tmp"],
    ["analytics.snapshots.orders_snapshot"],
    I(
        "analytics.snapshots.orders_snapshot__dbt_tmp",
        "analytics.snapshots.orders_snapshot",
        "order_id status amount updated_at dbt_updated_at dbt_valid_from dbt_valid_to dbt_scd_id",
    ),
    "dbt snapshot MERGE: unqualified INSERT VALUES columns are the USING side's; the MERGE target is not a source",
)

C(
    "hive_airflow_static_partition_overwrite",
    "hive",
    """
-- airflow dag_id=daily_user_agg task_id=load_user_agg run_id=scheduled__2024-03-14T00:00:00+00:00
INSERT OVERWRITE TABLE dw.user_daily_agg PARTITION (ds = '2024-03-14')
SELECT
    u.user_id,
    u.country,
    COUNT(DISTINCT e.session_id) AS sessions,
    SUM(e.duration_ms) / 1000.0 AS seconds_active,
    MAX(e.event_time) AS last_seen
FROM dw.dim_users u
JOIN staging.events e
  ON e.user_id = u.user_id
 AND e.ds = '2024-03-14'
WHERE u.is_active = 1
GROUP BY u.user_id, u.country
""",
    ["dw.dim_users", "staging.events"],
    ["dw.user_daily_agg"],
    E(
        "dw.user_daily_agg",
        """
    user_id <- dw.dim_users.user_id
    country <- dw.dim_users.country
    sessions <- staging.events.session_id
    seconds_active <- staging.events.duration_ms
    last_seen <- staging.events.event_time
  """,
    ),
    "Airflow-rendered INSERT OVERWRITE with a static partition value (no column edge for ds) and a leading comment",
)

C(
    "spark_airflow_dynamic_partition_positional",
    "spark",
    """
INSERT OVERWRITE TABLE mart.sales_by_store PARTITION (region, dt)
SELECT s.store_id, SUM(s.net_amount), COUNT(1), st.region, s.dt
FROM ods.sales s JOIN ods.stores st ON s.store_id = st.id
WHERE s.dt BETWEEN '2024-03-01' AND '2024-03-07'
GROUP BY s.store_id, st.region, s.dt
""",
    ["ods.sales", "ods.stores"],
    ["mart.sales_by_store"],
    E(
        "mart.sales_by_store",
        """
    store_id <- ods.sales.store_id
    revenue <- ods.sales.net_amount
    region <- ods.stores.region
    dt <- ods.sales.dt
  """,
    ),
    "dynamic partitions with unaliased aggregates: positional mapping onto the given target schema (partition columns last)",
    schemas={
        "mart.sales_by_store": {
            "store_id": "int",
            "revenue": "decimal(18,2)",
            "txn_count": "bigint",
            "region": "string",
            "dt": "string",
        }
    },
)

C(
    "sf_looker_explore_query",
    "snowflake",
    """
-- Looker Query Context '{"user_id":42,"history_slug":"9f1c2b","instance_slug":"a1b2c3"}'
SELECT
    orders."STATUS"  AS "orders.status",
    (TO_CHAR(DATE_TRUNC('month', orders."CREATED_AT" ), 'YYYY-MM')) AS "orders.created_month",
    COUNT(DISTINCT orders."ID" ) AS "orders.count",
    COALESCE(SUM(order_items."SALE_PRICE" ), 0) AS "order_items.total_sale_price"
FROM "PUBLIC"."ORDER_ITEMS"
     AS order_items
LEFT JOIN "PUBLIC"."ORDERS"
     AS orders ON order_items."ORDER_ID" = orders."ID"
WHERE ((( orders."CREATED_AT"  ) >= ((DATEADD('month', -11, DATE_TRUNC('month', CURRENT_DATE())))) AND ( orders."CREATED_AT"  ) < ((DATEADD('month', 12, DATEADD('month', -11, DATE_TRUNC('month', CURRENT_DATE())))))))
GROUP BY
    1,
    (TO_CHAR(DATE_TRUNC('month', orders."CREATED_AT" ), 'YYYY-MM'))
ORDER BY
    2 DESC
FETCH NEXT 500 ROWS ONLY
""",
    ["public.order_items", "public.orders"],
    [],
    [],
    "Looker explore SELECT: quoted dotted output names, FETCH NEXT; result columns only",
    result_columns=R("""
    orders.status <- public.orders.status
    orders.created_month <- public.orders.created_at
    orders.count <- public.orders.id
    order_items.total_sale_price <- public.order_items.sale_price
  """),
)

C(
    "sf_looker_pdt_ctas_dollar_name",
    "snowflake",
    """
CREATE TABLE LOOKER_SCRATCH.LR$5ZK8K1710403200842_user_facts AS
SELECT
  user_id,
  COUNT(*) AS lifetime_orders,
  SUM(sale_price) AS lifetime_revenue,
  MIN(created_at) AS first_order
FROM PUBLIC.ORDER_ITEMS
GROUP BY 1
""",
    ["public.order_items"],
    ["looker_scratch.lr$5zk8k1710403200842_user_facts"],
    E(
        "looker_scratch.lr$5zk8k1710403200842_user_facts",
        """
    user_id <- public.order_items.user_id
    lifetime_revenue <- public.order_items.sale_price
    first_order <- public.order_items.created_at
  """,
    ),
    "Looker persistent derived table build: `$` inside an unquoted Snowflake identifier",
)

C(
    "bq_looker_pdt_cte_join",
    "bigquery",
    """
-- Looker Query Context '{"user_id":7,"history_slug":"77ab","instance_slug":"x9"}'
WITH user_facts AS (SELECT * FROM `looker-pdt.looker_scratch.LR_1Q2W3E_user_facts`)
SELECT
    users.state  AS users_state,
    AVG(user_facts.lifetime_revenue ) AS user_facts_average_lifetime_revenue,
    COUNT(DISTINCT users.id ) AS users_count
FROM `acme.thelook.users`
     AS users
LEFT JOIN user_facts ON users.id = user_facts.user_id
GROUP BY
    1
ORDER BY
    3 DESC
LIMIT 500
""",
    ["acme.thelook.users", "looker-pdt.looker_scratch.lr_1q2w3e_user_facts"],
    [],
    [],
    "Looker BigQuery SELECT reading a PDT through a CTE with SELECT * (no schema): named column traced through the star",
    result_columns=R("""
    users_state <- acme.thelook.users.state
    user_facts_average_lifetime_revenue <- looker-pdt.looker_scratch.lr_1q2w3e_user_facts.lifetime_revenue
    users_count <- acme.thelook.users.id
  """),
)

_FT_COLS = "id name type industry annual_revenue owner_id billing_country last_modified_date _fivetran_deleted _fivetran_synced"
C(
    "sf_fivetran_merge_many_columns",
    "snowflake",
    """
MERGE INTO "FIVETRAN_DB"."SALESFORCE"."ACCOUNT" AS "DST"
USING "FIVETRAN_DB"."SALESFORCE"."ACCOUNT_STAGING_9F2A7C" AS "SRC"
ON "DST"."ID" = "SRC"."ID"
WHEN MATCHED AND "SRC"."_FIVETRAN_DELETED" = TRUE THEN UPDATE SET
  "DST"."_FIVETRAN_DELETED" = TRUE,
  "DST"."_FIVETRAN_SYNCED" = "SRC"."_FIVETRAN_SYNCED"
WHEN MATCHED THEN UPDATE SET
  "DST"."NAME" = "SRC"."NAME",
  "DST"."TYPE" = "SRC"."TYPE",
  "DST"."INDUSTRY" = "SRC"."INDUSTRY",
  "DST"."ANNUAL_REVENUE" = "SRC"."ANNUAL_REVENUE",
  "DST"."OWNER_ID" = "SRC"."OWNER_ID",
  "DST"."BILLING_COUNTRY" = "SRC"."BILLING_COUNTRY",
  "DST"."LAST_MODIFIED_DATE" = "SRC"."LAST_MODIFIED_DATE",
  "DST"."_FIVETRAN_DELETED" = "SRC"."_FIVETRAN_DELETED",
  "DST"."_FIVETRAN_SYNCED" = "SRC"."_FIVETRAN_SYNCED"
WHEN NOT MATCHED THEN INSERT ("ID", "NAME", "TYPE", "INDUSTRY", "ANNUAL_REVENUE", "OWNER_ID", "BILLING_COUNTRY", "LAST_MODIFIED_DATE", "_FIVETRAN_DELETED", "_FIVETRAN_SYNCED")
VALUES ("SRC"."ID", "SRC"."NAME", "SRC"."TYPE", "SRC"."INDUSTRY", "SRC"."ANNUAL_REVENUE", "SRC"."OWNER_ID", "SRC"."BILLING_COUNTRY", "SRC"."LAST_MODIFIED_DATE", "SRC"."_FIVETRAN_DELETED", "SRC"."_FIVETRAN_SYNCED")
""",
    ["fivetran_db.salesforce.account_staging_9f2a7c"],
    ["fivetran_db.salesforce.account"],
    I("fivetran_db.salesforce.account_staging_9f2a7c", "fivetran_db.salesforce.account", _FT_COLS),
    "Fivetran-style upsert: quoted names, two WHEN MATCHED branches, constants give no edge",
)

C(
    "bq_fivetran_merge_dedup_subquery",
    "bigquery",
    """
MERGE `acme-prod.hubspot.contact` AS t
USING (
  SELECT * EXCEPT (rn) FROM (
    SELECT *, ROW_NUMBER() OVER (PARTITION BY id ORDER BY _fivetran_synced DESC) AS rn
    FROM `acme-prod.hubspot.contact_staging_20240314`
  )
  WHERE rn = 1
) AS s
ON t.id = s.id
WHEN MATCHED THEN UPDATE SET
  email = s.email, first_name = s.first_name, last_name = s.last_name,
  lifecycle_stage = s.lifecycle_stage, _fivetran_synced = s._fivetran_synced
WHEN NOT MATCHED THEN INSERT (id, email, first_name, last_name, lifecycle_stage, _fivetran_synced)
VALUES (s.id, s.email, s.first_name, s.last_name, s.lifecycle_stage, s._fivetran_synced)
""",
    ["acme-prod.hubspot.contact_staging_20240314"],
    ["acme-prod.hubspot.contact"],
    I(
        "acme-prod.hubspot.contact_staging_20240314",
        "acme-prod.hubspot.contact",
        "id email first_name last_name lifecycle_stage _fivetran_synced",
    ),
    "MERGE whose USING is a dedup subquery with SELECT * EXCEPT over a table without schema; the ROW_NUMBER column rn is excluded",
)

C(
    "trino_airflow_insert_constant_ds",
    "trino",
    """
INSERT INTO hive.analytics.daily_active_users
SELECT
  date '2024-03-14' AS ds,
  platform,
  approx_distinct(user_id) AS dau
FROM hive.raw.app_events
WHERE ds = '2024-03-14'
GROUP BY platform
""",
    ["hive.raw.app_events"],
    ["hive.analytics.daily_active_users"],
    E(
        "hive.analytics.daily_active_users",
        """
    platform <- hive.raw.app_events.platform
    dau <- hive.raw.app_events.user_id
  """,
    ),
    "Airflow-rendered Trino INSERT: a DATE literal column has no source; approx_distinct is an aggregation",
)

C(
    "pg_tableau_custom_sql_wrapper",
    "postgres",
    """
SELECT "Custom SQL Query"."region" AS "region",
  SUM("Custom SQL Query"."sales") AS "sum:sales:ok",
  COUNT(DISTINCT "Custom SQL Query"."order_id") AS "ctd:order_id:ok"
FROM (
  select r.name as region, o.amount as sales, o.id as order_id
  from public.orders o
  join public.regions r on r.id = o.region_id
  where o.created_at >= '2024-01-01'
) "Custom SQL Query"
GROUP BY 1
""",
    ["public.orders", "public.regions"],
    [],
    [],
    'Tableau wraps custom SQL in a subquery aliased "Custom SQL Query"; output names contain colons',
    result_columns=R("""
    region <- public.regions.name
    sum:sales:ok <- public.orders.amount
    ctd:order_id:ok <- public.orders.id
  """),
)

C(
    "rs_metabase_cte_lag",
    "redshift",
    """
-- Metabase:: userID: 12 queryType: native queryHash: 8a7f3c0e
WITH monthly AS (
  SELECT DATE_TRUNC('month', s.saletime) AS month,
         SUM(s.pricepaid) AS revenue,
         SUM(s.commission) AS commission
  FROM public.sales s
  GROUP BY 1
)
SELECT month, revenue, commission, revenue - commission AS net,
       LAG(revenue) OVER (ORDER BY month) AS prev_revenue
FROM monthly
ORDER BY month
""",
    ["public.sales"],
    [],
    [],
    "BI SELECT over an aggregating CTE with LAG (the LAG argument is DIRECT, its ORDER BY is not)",
    result_columns=R("""
    month <- public.sales.saletime
    revenue <- public.sales.pricepaid
    commission <- public.sales.commission
    net <- public.sales.pricepaid public.sales.commission
    prev_revenue <- public.sales.pricepaid
  """),
)

C(
    "sf_dbt_delete_insert_incremental",
    "snowflake",
    """
create or replace temporary table analytics.dbt_prod.fct_sessions__dbt_tmp
         as
        (
select
    session_id,
    user_id,
    min(event_ts) as started_at,
    max(event_ts) as ended_at
from analytics.dbt_prod.stg_events
where event_ts > (select dateadd('day', -3, max(started_at)) from analytics.dbt_prod.fct_sessions)
group by 1, 2
        );

delete from analytics.dbt_prod.fct_sessions
    where (session_id) in (
        select (session_id)
        from analytics.dbt_prod.fct_sessions__dbt_tmp
    );

insert into analytics.dbt_prod.fct_sessions ("SESSION_ID", "USER_ID", "STARTED_AT", "ENDED_AT")
    (
        select "SESSION_ID", "USER_ID", "STARTED_AT", "ENDED_AT"
        from analytics.dbt_prod.fct_sessions__dbt_tmp
    );
""",
    ["analytics.dbt_prod.stg_events", "analytics.dbt_prod.fct_sessions"],
    ["analytics.dbt_prod.fct_sessions"],
    I("analytics.dbt_prod.stg_events", "analytics.dbt_prod.fct_sessions", "session_id user_id")
    + E(
        "analytics.dbt_prod.fct_sessions",
        """
    started_at <- analytics.dbt_prod.stg_events.event_ts
    ended_at <- analytics.dbt_prod.stg_events.event_ts
  """,
    ),
    "dbt delete+insert incremental: temp table collapsed; {{ this }} is read by the is_incremental() filter, so the model is a source and a target; INSERT … (SELECT …) in parentheses",
)

C(
    "bq_dbt_insert_overwrite_script",
    "bigquery",
    """
declare dbt_partitions_for_replacement array<date>;

  
    

    create or replace table `proj`.`analytics`.`fct_orders__dbt_tmp`
      
    partition by order_date
    

    OPTIONS(
      expiration_timestamp=TIMESTAMP_ADD(CURRENT_TIMESTAMP(), INTERVAL 12 hour)
    )
    as (
      select order_id, customer_id, order_date, amount
      from `proj`.`staging`.`stg_orders`
      where order_date >= date_sub(current_date(), interval 3 day)
    );
  
      -- 2. define partitions to update
      set (dbt_partitions_for_replacement) = (
          select as struct
              -- IGNORE NULLS: this needs to be aligned to _dbt_max_partition, which ignores null
              array_agg(distinct date(order_date) IGNORE NULLS)
          from `proj`.`analytics`.`fct_orders__dbt_tmp`
      );

      -- 3. run the merge statement
      merge into `proj`.`analytics`.`fct_orders` as DBT_INTERNAL_DEST
        using (
        select
        * from `proj`.`analytics`.`fct_orders__dbt_tmp`
      ) as DBT_INTERNAL_SOURCE
        on FALSE

    when not matched by source
         and date(DBT_INTERNAL_DEST.order_date) in unnest(dbt_partitions_for_replacement) 
        then delete

    when not matched then insert
        (`order_id`, `customer_id`, `order_date`, `amount`)
    values
        (`order_id`, `customer_id`, `order_date`, `amount`)

;

      -- 4. clean up the temp table
      drop table if exists `proj`.`analytics`.`fct_orders__dbt_tmp`
""",
    ["proj.staging.stg_orders"],
    ["proj.analytics.fct_orders"],
    I(
        "proj.staging.stg_orders",
        "proj.analytics.fct_orders",
        "order_id customer_id order_date amount",
    ),
    "dbt-bigquery insert_overwrite script: DECLARE/SET, a table created and dropped in the script is collapsed, MERGE ON FALSE with WHEN NOT MATCHED BY SOURCE",
)

C(
    "hive_airflow_multi_insert_from_subquery",
    "hive",
    """
FROM (
  SELECT user_id, event_type, platform, ts, get_json_object(payload, '$.amount') AS amount
  FROM raw.events
  WHERE dt = '2024-03-14'
) e
INSERT OVERWRITE TABLE dw.purchases PARTITION (dt = '2024-03-14')
  SELECT user_id, platform, CAST(amount AS DOUBLE), ts WHERE event_type = 'purchase'
INSERT OVERWRITE TABLE dw.signups PARTITION (dt = '2024-03-14')
  SELECT user_id, platform, ts WHERE event_type = 'signup'
""",
    ["raw.events"],
    ["dw.purchases", "dw.signups"],
    E(
        "dw.purchases",
        """
    user_id <- raw.events.user_id
    platform <- raw.events.platform
    amount <- raw.events.payload
    purchased_at <- raw.events.ts
  """,
    )
    + E(
        "dw.signups",
        """
    user_id <- raw.events.user_id
    platform <- raw.events.platform
    signed_up_at <- raw.events.ts
  """,
    ),
    "Hive multi-insert from a subquery, static partitions, positional mapping onto the given target schemas",
    schemas={
        "dw.purchases": {
            "user_id": "bigint",
            "platform": "string",
            "amount": "double",
            "purchased_at": "timestamp",
            "dt": "string",
        },
        "dw.signups": {
            "user_id": "bigint",
            "platform": "string",
            "signed_up_at": "timestamp",
            "dt": "string",
        },
    },
)

C(
    "sf_dbt_view_unused_import_cte",
    "snowflake",
    """
create or replace   view ANALYTICS.DBT_PROD.STG_SUPPORT_TICKETS
  
   as (
    with source as (
    select * from "RAW"."ZENDESK"."TICKET"
),

users as (
    select * from "RAW"."ZENDESK"."USER"
),

renamed as (
    select
        "ID" as ticket_id,
        "REQUESTER_ID" as requester_id,
        "STATUS" as status,
        "PRIORITY" as priority,
        "CREATED_AT"::timestamp_ntz as created_at,
        datediff('minute', "CREATED_AT", "SOLVED_AT") as minutes_to_solve
    from source
    where not "_FIVETRAN_DELETED"
)

select * from renamed
  );
""",
    ["raw.zendesk.ticket"],
    ["analytics.dbt_prod.stg_support_tickets"],
    E(
        "analytics.dbt_prod.stg_support_tickets",
        """
    ticket_id <- raw.zendesk.ticket.id
    requester_id <- raw.zendesk.ticket.requester_id
    status <- raw.zendesk.ticket.status
    priority <- raw.zendesk.ticket.priority
    created_at <- raw.zendesk.ticket.created_at
    minutes_to_solve <- raw.zendesk.ticket.created_at raw.zendesk.ticket.solved_at
  """,
    ),
    "dbt view with a left-over unused import CTE (its table is not a source); quoted upper-case columns through SELECT *",
)

C(
    "duckdb_dbt_read_parquet_glob",
    "duckdb",
    """
create table "dev"."main"."fct_trips__dbt_tmp" as (
with trips as (
  select * from read_parquet('s3://nyc-tlc/trip-data/yellow_tripdata_2024-*.parquet', hive_partitioning = false)
),
zones as (
  select * from "dev"."main"."taxi_zones"
),
joined as (
  select
    trips.tpep_pickup_datetime as pickup_at,
    trips.trip_distance,
    trips.total_amount,
    pz.borough as pickup_borough
  from trips
  left join zones pz on trips.PULocationID = pz.LocationID
)
select * from joined
);
""",
    ["s3://nyc-tlc/trip-data", "dev.main.taxi_zones"],
    ["dev.main.fct_trips__dbt_tmp"],
    None,
    "dbt-duckdb model over read_parquet with a glob (dataset cut at the glob's directory) plus a table",
)

C(
    "sf_airflow_insert_overwrite_into",
    "snowflake",
    """
INSERT OVERWRITE INTO ANALYTICS.REPORTING.DAILY_KPIS (KPI_DATE, ACTIVE_USERS, ORDERS, GMV)
SELECT
    '2024-03-14'::DATE,
    COUNT(DISTINCT e.USER_ID),
    COUNT(DISTINCT o.ORDER_ID),
    SUM(o.AMOUNT_USD)
FROM ANALYTICS.PROD.FCT_EVENTS e
LEFT JOIN ANALYTICS.PROD.FCT_ORDERS o
  ON o.USER_ID = e.USER_ID AND o.ORDER_DATE = '2024-03-14'
WHERE e.EVENT_DATE = '2024-03-14'
""",
    ["analytics.prod.fct_events", "analytics.prod.fct_orders"],
    ["analytics.reporting.daily_kpis"],
    E(
        "analytics.reporting.daily_kpis",
        """
    active_users <- analytics.prod.fct_events.user_id
    orders <- analytics.prod.fct_orders.order_id
    gmv <- analytics.prod.fct_orders.amount_usd
  """,
    ),
    "Snowflake INSERT OVERWRITE INTO with a column list and unaliased expressions (mapped by position onto the list)",
)

C(
    "sf_script_persistent_stage_then_mart",
    "snowflake",
    """
CREATE OR REPLACE TABLE STAGE.DAILY_ORDERS AS
SELECT ORDER_ID, CUSTOMER_ID, AMOUNT, ORDER_DATE
FROM RAW.SHOP.ORDERS
WHERE ORDER_DATE = CURRENT_DATE() - 1;

INSERT INTO MART.CUSTOMER_DAILY (CUSTOMER_ID, ORDER_DATE, ORDERS, AMOUNT)
SELECT CUSTOMER_ID, ORDER_DATE, COUNT(ORDER_ID), SUM(AMOUNT)
FROM STAGE.DAILY_ORDERS
GROUP BY 1, 2;
""",
    ["raw.shop.orders", "stage.daily_orders"],
    ["stage.daily_orders", "mart.customer_daily"],
    I("raw.shop.orders", "stage.daily_orders", "order_id customer_id amount order_date")
    + E(
        "mart.customer_daily",
        """
    customer_id <- stage.daily_orders.customer_id
    order_date <- stage.daily_orders.order_date
    orders <- stage.daily_orders.order_id
    amount <- stage.daily_orders.amount
  """,
    ),
    "script: a persistent table written then read is both target and source, with edges on both sides (not collapsed)",
)


# ---------------------------------------------------------------------------------------------
# B. Vendor query-history oddities
# ---------------------------------------------------------------------------------------------

# --- Snowflake ---------------------------------------------------------------------------------

C(
    "sf_insert_overwrite_all",
    "snowflake",
    """
INSERT OVERWRITE ALL
  INTO mart.orders_small (order_id, amount) VALUES (order_id, amount)
  INTO mart.orders_audit (order_id, loaded_at) VALUES (order_id, CURRENT_TIMESTAMP())
SELECT order_id, amount FROM staging.orders
""",
    ["staging.orders"],
    ["mart.orders_small", "mart.orders_audit"],
    I("staging.orders", "mart.orders_small", "order_id amount")
    + I("staging.orders", "mart.orders_audit", "order_id"),
    "Snowflake unconditional multi-table INSERT OVERWRITE ALL; VALUES name the subquery's columns",
)

C(
    "sf_insert_first_when_else",
    "snowflake",
    """
INSERT FIRST
  WHEN amount >= 10000 THEN
    INTO mart.big_orders (id, amt, cust) VALUES (order_id, amount, customer_id)
  WHEN amount >= 100 THEN
    INTO mart.mid_orders VALUES (order_id, amount, customer_id)
  ELSE
    INTO mart.small_orders (id, amt) VALUES (order_id, amount)
SELECT o.order_id, o.amount, c.customer_id
FROM staging.orders o
JOIN staging.customers c ON o.cust_key = c.cust_key
""",
    ["staging.orders", "staging.customers"],
    ["mart.big_orders", "mart.mid_orders", "mart.small_orders"],
    E(
        "mart.big_orders",
        """
    id <- staging.orders.order_id
    amt <- staging.orders.amount
    cust <- staging.customers.customer_id
  """,
    )
    + E(
        "mart.mid_orders",
        """
    id <- staging.orders.order_id
    amt <- staging.orders.amount
    cust <- staging.customers.customer_id
  """,
    )
    + E(
        "mart.small_orders",
        """
    id <- staging.orders.order_id
    amt <- staging.orders.amount
  """,
    ),
    "Snowflake conditional INSERT FIRST with ELSE; an INTO without column list maps VALUES positionally onto the given schema; WHEN conditions INDIRECT",
    schemas={"mart.mid_orders": {"id": "number", "amt": "number", "cust": "number"}},
)

C(
    "sf_clone_at_timestamp",
    "snowflake",
    """
CREATE OR REPLACE TABLE ANALYTICS.PROD.ORDERS_BACKUP_20240314 CLONE ANALYTICS.PROD.ORDERS
  AT (TIMESTAMP => '2024-03-14 00:00:00'::TIMESTAMP_LTZ);
""",
    ["analytics.prod.orders"],
    ["analytics.prod.orders_backup_20240314"],
    None,
    "zero-copy CLONE with time travel copies data: source → target",
)

C(
    "sf_identifier_ctas",
    "snowflake",
    """
CREATE OR REPLACE TABLE IDENTIFIER('ANALYTICS.REPORTING.WEEKLY_KPIS') AS
SELECT DATE_TRUNC('week', ORDER_DATE) AS WEEK, SUM(AMOUNT) AS REVENUE
FROM IDENTIFIER('ANALYTICS.PROD.FCT_ORDERS')
GROUP BY 1
""",
    ["analytics.prod.fct_orders"],
    ["analytics.reporting.weekly_kpis"],
    E(
        "analytics.reporting.weekly_kpis",
        """
    week <- analytics.prod.fct_orders.order_date
    revenue <- analytics.prod.fct_orders.amount
  """,
    ),
    "IDENTIFIER('db.schema.t') with a string literal names the table (target and source)",
)

C(
    "sf_variant_paths_casts",
    "snowflake",
    """
CREATE OR REPLACE TABLE ANALYTICS.STAGING.WEB_EVENTS AS
SELECT
    src:event_id::string                 AS event_id,
    src:user.id::number                  AS user_id,
    src:"Event Type"::varchar            AS event_type,
    src:context.page['url']::string      AS page_url,
    GET_PATH(src, 'context.ip')::string  AS ip,
    PARSE_JSON(raw_headers):ua::string   AS user_agent,
    TO_TIMESTAMP_NTZ(src:ts::number, 3)  AS event_ts
FROM RAW.SEGMENT.TRACKS
""",
    ["raw.segment.tracks"],
    ["analytics.staging.web_events"],
    E(
        "analytics.staging.web_events",
        """
    event_id <- raw.segment.tracks.src
    user_id <- raw.segment.tracks.src
    event_type <- raw.segment.tracks.src
    page_url <- raw.segment.tracks.src
    ip <- raw.segment.tracks.src
    user_agent <- raw.segment.tracks.raw_headers
    event_ts <- raw.segment.tracks.src
  """,
    ),
    "semi-structured access v:path::type, quoted path keys, bracket access, GET_PATH, PARSE_JSON(x):k trace to the top-level VARIANT column",
)

C(
    "sf_table_flatten_tags",
    "snowflake",
    """
INSERT INTO ANALYTICS.STAGING.EVENT_TAGS (EVENT_ID, TAG)
SELECT e.EVENT_ID, t.VALUE::STRING
FROM RAW.APP.EVENTS e, TABLE(FLATTEN(e.PAYLOAD:tags)) t
WHERE e.EVENT_DATE = CURRENT_DATE()
""",
    ["raw.app.events"],
    ["analytics.staging.event_tags"],
    E(
        "analytics.staging.event_tags",
        """
    event_id <- raw.app.events.event_id
    tag <- raw.app.events.payload
  """,
    ),
    "TABLE(FLATTEN(…)) form of flatten; flatten output columns are not tables",
)

C(
    "sf_qualify_dedup_ctas",
    "snowflake",
    """
CREATE OR REPLACE TABLE ANALYTICS.STAGING.CUSTOMERS_CURRENT AS
SELECT CUSTOMER_ID, EMAIL, PLAN, UPDATED_AT
FROM RAW.CRM.CUSTOMER_VERSIONS
QUALIFY ROW_NUMBER() OVER (PARTITION BY CUSTOMER_ID ORDER BY UPDATED_AT DESC) = 1
""",
    ["raw.crm.customer_versions"],
    ["analytics.staging.customers_current"],
    I(
        "raw.crm.customer_versions",
        "analytics.staging.customers_current",
        "customer_id email plan updated_at",
    ),
    "QUALIFY filter: only INDIRECT",
)

C(
    "sf_view_column_list_copy_grants",
    "snowflake",
    """
CREATE OR REPLACE SECURE VIEW ANALYTICS.SHARED.V_ORDERS_USD (
    ORDER_ID COMMENT 'primary key',
    CUSTOMER_ID,
    AMOUNT_USD COMMENT 'converted at daily rate'
) COPY GRANTS
AS
SELECT o.ID, o.CUSTOMER_ID, o.AMOUNT * fx.RATE
FROM ANALYTICS.PROD.ORDERS o
JOIN ANALYTICS.PROD.FX_RATES fx ON fx.CURRENCY = o.CURRENCY AND fx.RATE_DATE = o.ORDER_DATE
""",
    ["analytics.prod.orders", "analytics.prod.fx_rates"],
    ["analytics.shared.v_orders_usd"],
    E(
        "analytics.shared.v_orders_usd",
        """
    order_id <- analytics.prod.orders.id
    customer_id <- analytics.prod.orders.customer_id
    amount_usd <- analytics.prod.orders.amount analytics.prod.fx_rates.rate
  """,
    ),
    "view column list with COMMENTs renames the SELECT's columns positionally",
)

C(
    "sf_ctas_with_column_definitions",
    "snowflake",
    """
CREATE OR REPLACE TABLE ANALYTICS.STAGING.USERS_TYPED (USER_ID NUMBER(38,0), SIGNUP_DATE DATE, COUNTRY_CODE VARCHAR(2)) AS
SELECT ID, CREATED_AT::DATE, UPPER(COUNTRY)
FROM RAW.APP.USERS
""",
    ["raw.app.users"],
    ["analytics.staging.users_typed"],
    E(
        "analytics.staging.users_typed",
        """
    user_id <- raw.app.users.id
    signup_date <- raw.app.users.created_at
    country_code <- raw.app.users.country
  """,
    ),
    "CTAS with a column definition list: SELECT columns map positionally onto it",
)

C(
    "sf_select_exclude_rename",
    "snowflake",
    """
CREATE OR REPLACE VIEW ANALYTICS.HR.EMPLOYEES_PUBLIC AS
SELECT * EXCLUDE (SSN, SALARY) RENAME (DOB AS BIRTH_DATE)
FROM RAW.HR.EMPLOYEES
""",
    ["raw.hr.employees"],
    ["analytics.hr.employees_public"],
    I("raw.hr.employees", "analytics.hr.employees_public", "id name dept")
    + [["raw.hr.employees.dob", "analytics.hr.employees_public.birth_date"]],
    "SELECT * EXCLUDE (…) RENAME (…) expanded with the given schema",
    schemas={
        "raw.hr.employees": {
            "id": "number",
            "name": "varchar",
            "ssn": "varchar",
            "dob": "date",
            "dept": "varchar",
            "salary": "number",
        }
    },
)

C(
    "sf_select_replace_star",
    "snowflake",
    """
CREATE OR REPLACE TABLE ANALYTICS.STAGING.PRODUCTS_CLEAN AS
SELECT * REPLACE (TRIM(NAME) AS NAME, ROUND(PRICE, 2) AS PRICE)
FROM RAW.SHOP.PRODUCTS
""",
    ["raw.shop.products"],
    ["analytics.staging.products_clean"],
    I("raw.shop.products", "analytics.staging.products_clean", "id name price category"),
    "SELECT * REPLACE (expr AS col) keeps each column's lineage from the same column",
    schemas={
        "raw.shop.products": {
            "id": "number",
            "name": "varchar",
            "price": "number",
            "category": "varchar",
        }
    },
)

C(
    "sf_pivot_with_alias_list",
    "snowflake",
    """
CREATE OR REPLACE TABLE ANALYTICS.REPORTING.QUARTERLY_SALES AS
SELECT *
FROM ANALYTICS.PROD.MONTHLY_SALES
    PIVOT (SUM(AMOUNT) FOR QUARTER IN ('Q1', 'Q2', 'Q3', 'Q4')) AS p (EMPID, Q1, Q2, Q3, Q4)
""",
    ["analytics.prod.monthly_sales"],
    ["analytics.reporting.quarterly_sales"],
    E(
        "analytics.reporting.quarterly_sales",
        """
    empid <- analytics.prod.monthly_sales.empid
    q1 <- analytics.prod.monthly_sales.amount
    q2 <- analytics.prod.monthly_sales.amount
    q3 <- analytics.prod.monthly_sales.amount
    q4 <- analytics.prod.monthly_sales.amount
  """,
    ),
    "PIVOT: pivoted columns come from the aggregated column, the FOR column is INDIRECT; alias list renames",
    schemas={
        "analytics.prod.monthly_sales": {
            "empid": "number",
            "amount": "number",
            "quarter": "varchar",
        }
    },
)

C(
    "sf_session_variable_watermark",
    "snowflake",
    """
SET max_loaded = (SELECT COALESCE(MAX(LOADED_AT), '1970-01-01'::TIMESTAMP_NTZ) FROM ANALYTICS.RAW_VAULT.HUB_CUSTOMER);

INSERT INTO ANALYTICS.RAW_VAULT.HUB_CUSTOMER (CUSTOMER_HK, CUSTOMER_ID, LOADED_AT, RECORD_SOURCE)
SELECT MD5(UPPER(TRIM(CUSTOMER_ID))), CUSTOMER_ID, LOADED_AT, 'crm'
FROM RAW.CRM.CUSTOMERS_STAGE
WHERE LOADED_AT > $max_loaded;
""",
    ["analytics.raw_vault.hub_customer", "raw.crm.customers_stage"],
    ["analytics.raw_vault.hub_customer"],
    E(
        "analytics.raw_vault.hub_customer",
        """
    customer_hk <- raw.crm.customers_stage.customer_id
    customer_id <- raw.crm.customers_stage.customer_id
    loaded_at <- raw.crm.customers_stage.loaded_at
  """,
    ),
    "session variable set from a query (the table is read) then used as $var in a filter; MD5 hash key is a DIRECT (masked) edge",
)

C(
    "sf_stream_consumption",
    "snowflake",
    """
INSERT INTO ANALYTICS.PROD.ORDERS_CHANGES (ORDER_ID, STATUS, CHANGE_TYPE)
SELECT ORDER_ID, STATUS, METADATA$ACTION
FROM RAW.SHOP.ORDERS_STREAM
WHERE METADATA$ISUPDATE = FALSE
""",
    ["raw.shop.orders_stream"],
    ["analytics.prod.orders_changes"],
    I("raw.shop.orders_stream", "analytics.prod.orders_changes", "order_id status")
    + [["raw.shop.orders_stream.metadata$action", "analytics.prod.orders_changes.change_type"]],
    "reading a stream: METADATA$ACTION is a column the stream itself exposes (DIRECT into change_type); METADATA$ISUPDATE in WHERE is INDIRECT. "
    "Revised after scoring: first written as a pseudo-column without edge, but Snowflake documents these as the stream's metadata columns, so the value does flow from the stream",
)

C(
    "sf_time_travel_at_offset",
    "snowflake",
    """
INSERT INTO ANALYTICS.AUDIT.DELETED_ROWS (ID, NAME)
SELECT old.ID, old.NAME
FROM ANALYTICS.PROD.ACCOUNTS AT (OFFSET => -60*30) AS old
LEFT JOIN ANALYTICS.PROD.ACCOUNTS cur ON cur.ID = old.ID
WHERE cur.ID IS NULL
""",
    ["analytics.prod.accounts"],
    ["analytics.audit.deleted_rows"],
    I("analytics.prod.accounts", "analytics.audit.deleted_rows", "id name"),
    "time travel AT (OFFSET => …) on a table alias; self-join of one table",
)

C(
    "sf_result_scan_after_show",
    "snowflake",
    """
SELECT "name" AS warehouse_name, "size", "state"
FROM TABLE(RESULT_SCAN(LAST_QUERY_ID()))
WHERE "state" = 'SUSPENDED'
""",
    [],
    [],
    [],
    "RESULT_SCAN(LAST_QUERY_ID()) reads a previous result, not a dataset: no source table",
)

C(
    "sf_merge_using_flatten_subquery",
    "snowflake",
    """
MERGE INTO ANALYTICS.PROD.PRODUCT_TAGS t
USING (
    SELECT p.ID AS PRODUCT_ID, f.VALUE::STRING AS TAG, p.UPDATED_AT
    FROM RAW.SHOP.PRODUCTS p,
         LATERAL FLATTEN(INPUT => p.ATTRIBUTES:tags) f
    QUALIFY ROW_NUMBER() OVER (PARTITION BY p.ID, f.VALUE ORDER BY p.UPDATED_AT DESC) = 1
) s
ON t.PRODUCT_ID = s.PRODUCT_ID AND t.TAG = s.TAG
WHEN MATCHED THEN UPDATE SET t.UPDATED_AT = s.UPDATED_AT
WHEN NOT MATCHED THEN INSERT (PRODUCT_ID, TAG, UPDATED_AT) VALUES (s.PRODUCT_ID, s.TAG, s.UPDATED_AT)
""",
    ["raw.shop.products"],
    ["analytics.prod.product_tags"],
    E(
        "analytics.prod.product_tags",
        """
    product_id <- raw.shop.products.id
    tag <- raw.shop.products.attributes
    updated_at <- raw.shop.products.updated_at
  """,
    ),
    "MERGE whose USING subquery flattens a VARIANT and dedups with QUALIFY",
)

C(
    "sf_copy_into_from_stage_select",
    "snowflake",
    """
COPY INTO RAW.EVENTS.CLICKS (EVENT_ID, PAYLOAD, FILE_NAME, LOADED_AT)
FROM (
    SELECT $1:event_id::string, $1, METADATA$FILENAME, CURRENT_TIMESTAMP()
    FROM @RAW.EVENTS.S3_LANDING/clicks/2024/03/14/
)
FILE_FORMAT = (TYPE = 'JSON' STRIP_OUTER_ARRAY = TRUE)
PATTERN = '.*[.]json[.]gz'
ON_ERROR = 'SKIP_FILE'
""",
    ["@raw.events.s3_landing/clicks/2024/03/14"],
    ["raw.events.clicks"],
    None,
    "COPY INTO with a transforming SELECT over a stage path: the stage path is the source dataset",
)

# --- BigQuery ----------------------------------------------------------------------------------

C(
    "bq_temp_functions_then_insert",
    "bigquery",
    '''
CREATE TEMP FUNCTION normalize_email(e STRING) AS (LOWER(TRIM(e)));
CREATE TEMP FUNCTION parse_amount(s STRING)
RETURNS FLOAT64
LANGUAGE js AS r"""
  return parseFloat(s.replace('$', '').replace(',', ''));
""";
INSERT INTO `acme.crm.contacts_clean` (contact_id, email, amount)
SELECT id, normalize_email(email), parse_amount(amount_text)
FROM `acme.crm.contacts_raw`;
''',
    ["acme.crm.contacts_raw"],
    ["acme.crm.contacts_clean"],
    E(
        "acme.crm.contacts_clean",
        """
    contact_id <- acme.crm.contacts_raw.id
    email <- acme.crm.contacts_raw.email
    amount <- acme.crm.contacts_raw.amount_text
  """,
    ),
    "BigQuery temp SQL and JS UDFs before the query: UDF parameters are not columns, UDFs not tables; a UDF call keeps its argument's lineage",
)

C(
    "bq_declare_set_watermark_script",
    "bigquery",
    """
DECLARE run_date DATE DEFAULT CURRENT_DATE('America/New_York');
DECLARE max_ts TIMESTAMP;
SET max_ts = (SELECT MAX(updated_at) FROM `acme.analytics.orders_snapshot`);
INSERT INTO `acme.analytics.orders_snapshot` (order_id, status, updated_at, snapshot_date)
SELECT order_id, status, updated_at, run_date
FROM `acme.raw.orders`
WHERE updated_at > max_ts;
""",
    ["acme.analytics.orders_snapshot", "acme.raw.orders"],
    ["acme.analytics.orders_snapshot"],
    I("acme.raw.orders", "acme.analytics.orders_snapshot", "order_id status updated_at"),
    "BigQuery script: DECLAREd variables are not columns (run_date gives no edge); the table read by SET is a source",
)

C(
    "bq_merge_not_matched_by_source",
    "bigquery",
    """
MERGE `acme.dw.inventory` T
USING `acme.staging.inventory_feed` S
ON T.sku = S.sku AND T.warehouse = S.warehouse
WHEN MATCHED AND S.qty = 0 THEN
  DELETE
WHEN MATCHED THEN
  UPDATE SET qty = S.qty, updated_at = S.feed_ts
WHEN NOT MATCHED BY TARGET THEN
  INSERT (sku, warehouse, qty, updated_at) VALUES (S.sku, S.warehouse, S.qty, S.feed_ts)
WHEN NOT MATCHED BY SOURCE AND T.updated_at < TIMESTAMP_SUB(CURRENT_TIMESTAMP(), INTERVAL 30 DAY) THEN
  UPDATE SET active = FALSE
""",
    ["acme.staging.inventory_feed"],
    ["acme.dw.inventory"],
    E(
        "acme.dw.inventory",
        """
    sku <- acme.staging.inventory_feed.sku
    warehouse <- acme.staging.inventory_feed.warehouse
    qty <- acme.staging.inventory_feed.qty
    updated_at <- acme.staging.inventory_feed.feed_ts
  """,
    ),
    "MERGE … WHEN NOT MATCHED BY TARGET / BY SOURCE: the target is still not a source; a constant SET gives no edge",
)

C(
    "bq_wildcard_table_suffix",
    "bigquery",
    """
CREATE OR REPLACE TABLE `acme.analytics.ga_daily` AS
SELECT
  PARSE_DATE('%Y%m%d', event_date) AS event_day,
  event_name,
  COUNT(*) AS events,
  COUNT(DISTINCT user_pseudo_id) AS users
FROM `acme.analytics_123456.events_*`
WHERE _TABLE_SUFFIX BETWEEN '20240301' AND '20240314'
GROUP BY 1, 2
""",
    ["acme.analytics_123456.events_*"],
    ["acme.analytics.ga_daily"],
    E(
        "acme.analytics.ga_daily",
        """
    event_day <- acme.analytics_123456.events_*.event_date
    event_name <- acme.analytics_123456.events_*.event_name
    users <- acme.analytics_123456.events_*.user_pseudo_id
  """,
    ),
    "wildcard table `d.events_*` is one source named as written; _TABLE_SUFFIX is a pseudo-column filter",
)

C(
    "bq_unnest_with_offset",
    "bigquery",
    """
INSERT INTO `acme.dw.order_lines` (order_id, sku, quantity, unit_price)
SELECT o.order_id, item.sku, item.quantity, item.price
FROM `acme.raw.orders` AS o, UNNEST(o.line_items) AS item WITH OFFSET AS pos
WHERE pos < 100
""",
    ["acme.raw.orders"],
    ["acme.dw.order_lines"],
    E(
        "acme.dw.order_lines",
        """
    order_id <- acme.raw.orders.order_id
    sku <- acme.raw.orders.line_items
    quantity <- acme.raw.orders.line_items
    unit_price <- acme.raw.orders.line_items
  """,
    ),
    "comma-join UNNEST … WITH OFFSET: struct fields of the element trace to the array column; the offset is a filter only",
)

C(
    "bq_struct_array_constructors",
    "bigquery",
    """
CREATE OR REPLACE TABLE `acme.dw.customer_profile` AS
SELECT
  c.customer_id,
  STRUCT(c.first_name AS first, c.last_name AS last) AS name,
  ARRAY_AGG(STRUCT(o.order_id, o.amount) IGNORE NULLS ORDER BY o.created_at DESC LIMIT 5) AS recent_orders,
  [c.email, c.secondary_email] AS emails
FROM `acme.crm.customers` c
LEFT JOIN `acme.sales.orders` o USING (customer_id)
GROUP BY c.customer_id, c.first_name, c.last_name, c.email, c.secondary_email
""",
    ["acme.crm.customers", "acme.sales.orders"],
    ["acme.dw.customer_profile"],
    E(
        "acme.dw.customer_profile",
        """
    customer_id <- acme.crm.customers.customer_id
    name <- acme.crm.customers.first_name acme.crm.customers.last_name
    recent_orders <- acme.sales.orders.order_id acme.sales.orders.amount
    emails <- acme.crm.customers.email acme.crm.customers.secondary_email
  """,
    ),
    "STRUCT(...) and [..] constructors and ARRAY_AGG(STRUCT …) keep all member columns as DIRECT; ORDER BY inside the aggregate is INDIRECT",
)

C(
    "bq_script_temp_table_update_from",
    "bigquery",
    """
BEGIN
  CREATE TEMP TABLE recent_logins AS
  SELECT user_id, MAX(login_ts) AS last_ts
  FROM `acme.raw.logins`
  WHERE login_ts > TIMESTAMP_SUB(CURRENT_TIMESTAMP(), INTERVAL 7 DAY)
  GROUP BY user_id;

  UPDATE `acme.dw.users` u
  SET last_login_at = r.last_ts
  FROM recent_logins r
  WHERE u.user_id = r.user_id;
END;
""",
    ["acme.raw.logins"],
    ["acme.dw.users"],
    E("acme.dw.users", "last_login_at <- acme.raw.logins.login_ts"),
    "BEGIN…END block with a TEMP table feeding UPDATE … FROM: temp collapsed and stitched",
)

C(
    "bq_select_replace_except_star",
    "bigquery",
    """
CREATE OR REPLACE VIEW `acme.reporting.payments_v` AS
SELECT * EXCEPT (card_number) REPLACE (ROUND(amount, 2) AS amount)
FROM `acme.raw.payments`
""",
    ["acme.raw.payments"],
    ["acme.reporting.payments_v"],
    I("acme.raw.payments", "acme.reporting.payments_v", "payment_id amount currency paid_at"),
    "BigQuery SELECT * EXCEPT … REPLACE … expanded with the given schema",
    schemas={
        "acme.raw.payments": {
            "payment_id": "STRING",
            "amount": "NUMERIC",
            "currency": "STRING",
            "card_number": "STRING",
            "paid_at": "TIMESTAMP",
        }
    },
)

C(
    "bq_information_schema_jobs",
    "bigquery",
    """
SELECT
  user_email,
  SUM(total_bytes_billed) / POW(1024, 4) AS tib_billed,
  COUNT(*) AS jobs
FROM `region-us`.INFORMATION_SCHEMA.JOBS_BY_PROJECT
WHERE creation_time >= TIMESTAMP_SUB(CURRENT_TIMESTAMP(), INTERVAL 7 DAY)
  AND job_type = 'QUERY'
GROUP BY user_email
ORDER BY tib_billed DESC
""",
    ["region-us.information_schema.jobs_by_project"],
    [],
    [],
    "monitoring query against a region-qualified INFORMATION_SCHEMA view",
    result_columns=R("""
    user_email <- region-us.information_schema.jobs_by_project.user_email
    tib_billed <- region-us.information_schema.jobs_by_project.total_bytes_billed
  """),
)

C(
    "bq_for_system_time_as_of",
    "bigquery",
    """
CREATE OR REPLACE TABLE `acme.recovery.orders_restored` AS
SELECT *
FROM `acme.sales.orders`
  FOR SYSTEM_TIME AS OF TIMESTAMP_SUB(CURRENT_TIMESTAMP(), INTERVAL 1 HOUR)
""",
    ["acme.sales.orders"],
    ["acme.recovery.orders_restored"],
    I("acme.sales.orders", "acme.recovery.orders_restored", "order_id customer_id amount"),
    "time travel FOR SYSTEM_TIME AS OF; SELECT * with schema",
    schemas={
        "acme.sales.orders": {"order_id": "INT64", "customer_id": "INT64", "amount": "NUMERIC"}
    },
)

C(
    "bq_script_archive_then_delete",
    "bigquery",
    """
DECLARE cutoff DATE DEFAULT DATE_SUB(CURRENT_DATE(), INTERVAL 90 DAY);
INSERT INTO `acme.dw.sessions_archive` (session_id, user_id, session_date)
SELECT session_id, user_id, session_date
FROM `acme.dw.sessions`
WHERE session_date < cutoff;
DELETE FROM `acme.dw.sessions` WHERE session_date < cutoff;
""",
    ["acme.dw.sessions"],
    ["acme.dw.sessions", "acme.dw.sessions_archive"],
    I("acme.dw.sessions", "acme.dw.sessions_archive", "session_id user_id session_date"),
    "script: archive rows then DELETE them; the DELETE target is a target and the persistent table read earlier stays a source; a DECLAREd variable in WHERE is not a column",
)

C(
    "bq_create_table_like_copy",
    "bigquery",
    """
CREATE TABLE IF NOT EXISTS `acme.dw.events_copy`
COPY `acme.dw.events`
""",
    ["acme.dw.events"],
    ["acme.dw.events_copy"],
    None,
    "BigQuery CREATE TABLE … COPY copies data: source → target",
)

# --- Databricks --------------------------------------------------------------------------------

C(
    "dbx_streaming_table_read_files",
    "databricks",
    """
CREATE OR REFRESH STREAMING TABLE main.bronze.orders_raw
COMMENT 'raw orders from landing'
TBLPROPERTIES ('quality' = 'bronze')
AS SELECT *, _metadata.file_path AS source_file, current_timestamp() AS ingested_at
FROM STREAM read_files('s3://acme-landing/orders/', format => 'json', inferColumnTypes => true)
""",
    ["s3://acme-landing/orders"],
    ["main.bronze.orders_raw"],
    None,
    "DLT CREATE OR REFRESH STREAMING TABLE over STREAM read_files('s3://…'): the location is the source",
)

C(
    "dbx_live_table_join",
    "databricks",
    """
CREATE OR REFRESH LIVE TABLE customer_orders
COMMENT 'orders per customer'
AS SELECT c.customer_id, c.name, count(o.order_id) AS order_count, sum(o.amount) AS total_amount
FROM LIVE.customers c
JOIN LIVE.orders o ON o.customer_id = c.customer_id
GROUP BY c.customer_id, c.name
""",
    ["customers", "orders"],
    ["customer_orders"],
    E(
        "customer_orders",
        """
    customer_id <- customers.customer_id
    name <- customers.name
    order_count <- orders.order_id
    total_amount <- orders.amount
  """,
    ),
    "DLT LIVE TABLE: LIVE. is the pipeline's virtual schema (expected names are the table names; a live. prefix also matches)",
)

C(
    "dbx_streaming_table_expectations",
    "databricks",
    """
CREATE OR REFRESH STREAMING TABLE silver.orders_clean (
  CONSTRAINT valid_id EXPECT (order_id IS NOT NULL) ON VIOLATION DROP ROW,
  CONSTRAINT positive_amount EXPECT (amount > 0)
)
AS SELECT
  order_id,
  CAST(amount AS DECIMAL(12, 2)) AS amount,
  to_timestamp(order_ts) AS order_ts,
  lower(status) AS status
FROM STREAM(LIVE.orders_raw)
""",
    ["orders_raw"],
    ["silver.orders_clean"],
    E(
        "silver.orders_clean",
        """
    order_id <- orders_raw.order_id
    amount <- orders_raw.amount
    order_ts <- orders_raw.order_ts
    status <- orders_raw.status
  """,
    ),
    "DLT streaming table with EXPECT constraints reading STREAM(LIVE.x)",
)

C(
    "dbx_apply_changes_into",
    "databricks",
    """
APPLY CHANGES INTO LIVE.customers_scd2
FROM STREAM(LIVE.customers_cdc)
KEYS (customer_id)
APPLY AS DELETE WHEN operation = 'DELETE'
SEQUENCE BY sequence_num
COLUMNS * EXCEPT (operation, sequence_num)
STORED AS SCD TYPE 2
""",
    ["customers_cdc"],
    ["customers_scd2"],
    None,
    "DLT APPLY CHANGES INTO target FROM STREAM(source)",
)

C(
    "dbx_copy_into_abfss_container",
    "databricks",
    """
COPY INTO main.bronze.device_readings
FROM (
  SELECT device_id::string, reading::double, to_timestamp(ts) AS ts, _metadata.file_name AS file_name
  FROM 'abfss://landing@acmestorage.dfs.core.windows.net/iot/readings/'
)
FILEFORMAT = CSV
PATTERN = '2024/03/*/part-*.csv'
FORMAT_OPTIONS ('header' = 'true', 'inferSchema' = 'false')
COPY_OPTIONS ('mergeSchema' = 'true')
""",
    ["abfss://landing@acmestorage.dfs.core.windows.net/iot/readings"],
    ["main.bronze.device_readings"],
    None,
    "COPY INTO from an ADLS abfss:// URI: the container before @ is part of the location, not a credential",
)

C(
    "dbx_ctas_read_files_volume",
    "databricks",
    """
CREATE OR REPLACE TABLE main.raw.customers_csv AS
SELECT * FROM read_files(
  '/Volumes/main/raw/landing/customers/',
  format => 'csv',
  header => true,
  schemaHints => 'customer_id BIGINT'
)
""",
    ["/volumes/main/raw/landing/customers"],
    ["main.raw.customers_csv"],
    None,
    "read_files() over a Unity Catalog volume path is a file dataset",
)

C(
    "dbx_merge_schema_evolution_star",
    "databricks",
    """
MERGE WITH SCHEMA EVOLUTION INTO main.silver.users AS t
USING main.bronze.users_updates AS s
ON t.user_id = s.user_id
WHEN MATCHED AND s.op = 'DELETE' THEN DELETE
WHEN MATCHED THEN UPDATE SET *
WHEN NOT MATCHED THEN INSERT *
WHEN NOT MATCHED BY SOURCE THEN DELETE
""",
    ["main.bronze.users_updates"],
    ["main.silver.users"],
    I("main.bronze.users_updates", "main.silver.users", "user_id email plan updated_at"),
    "MERGE WITH SCHEMA EVOLUTION, UPDATE SET * / INSERT * expanded from the given source schema, WHEN NOT MATCHED BY SOURCE",
    schemas={
        "main.bronze.users_updates": {
            "user_id": "bigint",
            "email": "string",
            "plan": "string",
            "updated_at": "timestamp",
        }
    },
)

C(
    "dbx_shallow_clone_version",
    "databricks",
    """
CREATE TABLE IF NOT EXISTS main.dev.orders SHALLOW CLONE main.prod.orders VERSION AS OF 42
""",
    ["main.prod.orders"],
    ["main.dev.orders"],
    None,
    "SHALLOW CLONE … VERSION AS OF: source → target",
)

C(
    "dbx_insert_by_name",
    "databricks",
    """
INSERT INTO main.gold.customer_metrics BY NAME
SELECT total_spend, customer_id, order_count
FROM main.silver.customer_rollup
""",
    ["main.silver.customer_rollup"],
    ["main.gold.customer_metrics"],
    I(
        "main.silver.customer_rollup",
        "main.gold.customer_metrics",
        "customer_id order_count total_spend",
    ),
    "INSERT … BY NAME maps by column name even though the target schema orders columns differently",
    schemas={
        "main.gold.customer_metrics": {
            "customer_id": "bigint",
            "order_count": "bigint",
            "total_spend": "decimal(18,2)",
        }
    },
)

C(
    "dbx_time_travel_timestamp_as_of",
    "databricks",
    """
CREATE OR REPLACE TABLE main.audit.orders_yesterday AS
SELECT order_id, status, amount
FROM main.sales.orders TIMESTAMP AS OF date_sub(current_date(), 1)
""",
    ["main.sales.orders"],
    ["main.audit.orders_yesterday"],
    I("main.sales.orders", "main.audit.orders_yesterday", "order_id status amount"),
    "Delta time travel TIMESTAMP AS OF",
)

C(
    "dbx_with_cte_then_insert",
    "databricks",
    """
WITH latest AS (
  SELECT account_id, max_by(balance, as_of) AS balance, max(as_of) AS as_of
  FROM main.finance.balance_history
  GROUP BY account_id
)
INSERT INTO main.finance.current_balances
SELECT account_id, balance, as_of FROM latest
""",
    ["main.finance.balance_history"],
    ["main.finance.current_balances"],
    I("main.finance.balance_history", "main.finance.current_balances", "account_id balance as_of"),
    "Spark WITH … INSERT INTO (CTE before INSERT); max_by(value, key): key is an ordering (INDIRECT), value DIRECT",
)

# --- Redshift ----------------------------------------------------------------------------------

C(
    "rs_select_into_temp_then_insert_paren",
    "redshift",
    """
SELECT u.userid, u.city, SUM(s.pricepaid) AS total_paid
INTO #top_buyers
FROM public.users u
JOIN public.sales s ON s.buyerid = u.userid
GROUP BY u.userid, u.city
HAVING SUM(s.pricepaid) > 10000;

INSERT INTO reporting.top_buyers_by_city (city, buyers, paid)
(SELECT city, COUNT(*), SUM(total_paid) FROM #top_buyers GROUP BY city);
""",
    ["public.users", "public.sales"],
    ["reporting.top_buyers_by_city"],
    E(
        "reporting.top_buyers_by_city",
        """
    city <- public.users.city
    paid <- public.sales.pricepaid
  """,
    ),
    "Redshift SELECT … INTO #tmp (temp collapsed and stitched), INSERT INTO t (SELECT …) in parentheses",
)

C(
    "rs_create_table_like",
    "redshift",
    """
CREATE TABLE public.sales_archive (LIKE public.sales INCLUDING DEFAULTS);
""",
    ["public.sales"],
    ["public.sales_archive"],
    None,
    "CREATE TABLE … (LIKE x) reads x's definition (corpus OpenLineage convention)",
)

C(
    "rs_super_partiql_unnest",
    "redshift",
    """
CREATE TABLE analytics.cust_orders AS
SELECT c.c_custkey AS cust_key, o.o_orderkey AS order_key, o.o_totalprice AS total
FROM spectrum.customer_orders_lineitem c, c.c_orders o
""",
    ["spectrum.customer_orders_lineitem"],
    ["analytics.cust_orders"],
    E(
        "analytics.cust_orders",
        """
    cust_key <- spectrum.customer_orders_lineitem.c_custkey
    order_key <- spectrum.customer_orders_lineitem.c_orders
    total <- spectrum.customer_orders_lineitem.c_orders
  """,
    ),
    "PartiQL unnesting `FROM t c, c.array_col o`: c.c_orders is a column of c, not a table",
)

C(
    "rs_merge_remove_duplicates",
    "redshift",
    """
MERGE INTO public.customers
USING staging.customers_delta AS d
ON public.customers.customer_id = d.customer_id
REMOVE DUPLICATES
""",
    ["staging.customers_delta"],
    ["public.customers"],
    None,
    "Redshift simplified MERGE … REMOVE DUPLICATES",
)

C(
    "rs_spectrum_external_to_local",
    "redshift",
    """
INSERT INTO public.events_daily (event_date, event_type, events)
SELECT event_date, event_type, COUNT(*)
FROM spectrum_schema.events_ext
WHERE event_date = DATEADD(day, -1, TRUNC(GETDATE()))
GROUP BY 1, 2
""",
    ["spectrum_schema.events_ext"],
    ["public.events_daily"],
    I("spectrum_schema.events_ext", "public.events_daily", "event_date event_type"),
    "Spectrum external schema read into a local table",
)

# --- T-SQL -------------------------------------------------------------------------------------

C(
    "tsql_merge_output_action",
    "tsql",
    """
MERGE dbo.DimCustomer AS tgt
USING (SELECT CustomerKey, FirstName, LastName, EmailAddress FROM stage.Customer) AS src
ON tgt.CustomerKey = src.CustomerKey
WHEN MATCHED AND (tgt.EmailAddress <> src.EmailAddress OR tgt.LastName <> src.LastName)
  THEN UPDATE SET tgt.EmailAddress = src.EmailAddress, tgt.LastName = src.LastName, tgt.ModifiedDate = GETDATE()
WHEN NOT MATCHED BY TARGET
  THEN INSERT (CustomerKey, FirstName, LastName, EmailAddress, ModifiedDate)
       VALUES (src.CustomerKey, src.FirstName, src.LastName, src.EmailAddress, GETDATE())
WHEN NOT MATCHED BY SOURCE THEN DELETE
OUTPUT $action AS MergeAction, inserted.CustomerKey;
""",
    ["stage.customer"],
    ["dbo.dimcustomer"],
    I("stage.customer", "dbo.dimcustomer", "customerkey firstname lastname emailaddress"),
    "T-SQL MERGE with OUTPUT $action to the client (no INTO): no extra dataset; target not a source",
)

C(
    "tsql_insert_exec_procedure",
    "tsql",
    """
INSERT INTO dbo.AuditSnapshot (CapturedAt, ObjectName, RowCount)
EXEC dbo.usp_GetTableCounts @Schema = N'Sales';
""",
    [],
    ["dbo.auditsnapshot"],
    [],
    "INSERT … EXEC: the procedure result is not a table dataset; the procedure name is not a source table",
)

C(
    "tsql_proc_temp_table_chain",
    "tsql",
    """
CREATE PROCEDURE dbo.usp_LoadDailyTerritorySales @RunDate DATE
AS
BEGIN
    SET NOCOUNT ON;

    IF OBJECT_ID('tempdb..#orders') IS NOT NULL DROP TABLE #orders;

    SELECT soh.SalesOrderID, soh.CustomerID, soh.TerritoryID, soh.OrderDate
    INTO #orders
    FROM Sales.SalesOrderHeader soh
    WHERE soh.OrderDate >= @RunDate AND soh.OrderDate < DATEADD(DAY, 1, @RunDate);

    SELECT o.TerritoryID, SUM(d.LineTotal) AS Revenue, COUNT(DISTINCT o.SalesOrderID) AS Orders
    INTO #by_territory
    FROM #orders o
    JOIN Sales.SalesOrderDetail d ON d.SalesOrderID = o.SalesOrderID
    GROUP BY o.TerritoryID;

    DELETE FROM dbo.DailyTerritorySales WHERE SalesDate = @RunDate;

    INSERT INTO dbo.DailyTerritorySales (SalesDate, TerritoryID, TerritoryName, Revenue, Orders)
    SELECT @RunDate, bt.TerritoryID, st.Name, bt.Revenue, bt.Orders
    FROM #by_territory bt
    JOIN Sales.SalesTerritory st ON st.TerritoryID = bt.TerritoryID;

    DROP TABLE #by_territory;
END
""",
    ["sales.salesorderheader", "sales.salesorderdetail", "sales.salesterritory"],
    ["dbo.dailyterritorysales"],
    E(
        "dbo.dailyterritorysales",
        """
    territoryid <- sales.salesorderheader.territoryid
    territoryname <- sales.salesterritory.name
    revenue <- sales.salesorderdetail.linetotal
    orders <- sales.salesorderheader.salesorderid
  """,
    ),
    "procedure with IF OBJECT_ID(...) DROP, a chain of SELECT … INTO #temp, DELETE + INSERT; @param gives no edge",
)

C(
    "tsql_insert_without_into_truncate",
    "tsql",
    """
TRUNCATE TABLE stage.ProductPrices;
INSERT stage.ProductPrices (ProductID, ListPrice, StartDate)
SELECT ProductID, ListPrice, StartDate
FROM Production.ProductListPriceHistory
WHERE EndDate IS NULL;
""",
    ["production.productlistpricehistory"],
    ["stage.productprices"],
    I("production.productlistpricehistory", "stage.productprices", "productid listprice startdate"),
    "T-SQL INSERT without INTO after TRUNCATE TABLE",
)

C(
    "tsql_cross_apply_top1",
    "tsql",
    """
INSERT INTO dbo.CustomerLastOrder (CustomerID, LastOrderID, LastOrderTotal)
SELECT c.CustomerID, x.SalesOrderID, x.TotalDue
FROM Sales.Customer AS c
CROSS APPLY (
    SELECT TOP (1) o.SalesOrderID, o.TotalDue
    FROM Sales.SalesOrderHeader AS o
    WHERE o.CustomerID = c.CustomerID
    ORDER BY o.OrderDate DESC
) AS x;
""",
    ["sales.customer", "sales.salesorderheader"],
    ["dbo.customerlastorder"],
    E(
        "dbo.customerlastorder",
        """
    customerid <- sales.customer.customerid
    lastorderid <- sales.salesorderheader.salesorderid
    lastordertotal <- sales.salesorderheader.totaldue
  """,
    ),
    "CROSS APPLY with a correlated TOP (1) subquery",
)

C(
    "tsql_bracketed_names_with_spaces",
    "tsql",
    """
SELECT od.[OrderID], p.[ProductName], od.[Unit Price] * od.[Quantity] * (1 - od.[Discount]) AS [Extended Price]
INTO [dbo].[Order Line Values]
FROM [Northwind].[dbo].[Order Details] AS od
JOIN [Northwind].[dbo].[Products] AS p ON p.[ProductID] = od.[ProductID];
""",
    ["northwind.dbo.order details", "northwind.dbo.products"],
    ["dbo.order line values"],
    [
        ["northwind.dbo.order details.orderid", "dbo.order line values.orderid"],
        ["northwind.dbo.products.productname", "dbo.order line values.productname"],
        ["northwind.dbo.order details.unit price", "dbo.order line values.extended price"],
        ["northwind.dbo.order details.quantity", "dbo.order line values.extended price"],
        ["northwind.dbo.order details.discount", "dbo.order line values.extended price"],
    ],
    "bracketed identifiers with spaces (Northwind); SELECT … INTO a persistent table creates it as a target",
)

C(
    "tsql_four_part_linked_server",
    "tsql",
    """
INSERT INTO dw.dbo.FactOrders (OrderID, CustomerID, OrderTotal)
SELECT o.OrderID, o.CustomerID, o.Total
FROM [ERPSRV01].[SalesDB].[dbo].[Orders] AS o
WHERE o.ModifiedAt >= DATEADD(DAY, -1, CAST(GETDATE() AS DATE));
""",
    ["erpsrv01.salesdb.dbo.orders"],
    ["dw.dbo.factorders"],
    E(
        "dw.dbo.factorders",
        """
    orderid <- erpsrv01.salesdb.dbo.orders.orderid
    customerid <- erpsrv01.salesdb.dbo.orders.customerid
    ordertotal <- erpsrv01.salesdb.dbo.orders.total
  """,
    ),
    "four-part linked-server name is kept whole",
)

# --- Postgres ----------------------------------------------------------------------------------

C(
    "pg_on_conflict_excluded",
    "postgres",
    """
INSERT INTO analytics.user_stats AS us (user_id, sessions, last_seen_at)
SELECT user_id, count(*), max(started_at)
FROM events.sessions
WHERE started_at >= now() - interval '1 day'
GROUP BY user_id
ON CONFLICT (user_id) DO UPDATE
SET sessions = EXCLUDED.sessions,
    last_seen_at = EXCLUDED.last_seen_at
WHERE us.last_seen_at < EXCLUDED.last_seen_at
""",
    ["events.sessions"],
    ["analytics.user_stats"],
    E(
        "analytics.user_stats",
        """
    user_id <- events.sessions.user_id
    last_seen_at <- events.sessions.started_at
  """,
    ),
    "ON CONFLICT DO UPDATE SET x = EXCLUDED.x: EXCLUDED is the proposed row (not a table); the target alias is not a source",
)

C(
    "pg_matview_with_no_data",
    "postgres",
    """
CREATE MATERIALIZED VIEW IF NOT EXISTS reporting.mv_monthly_signups AS
SELECT date_trunc('month', a.created_at) AS month, a.plan, count(*) AS signups
FROM public.accounts a
WHERE a.is_test = false
GROUP BY 1, 2
WITH NO DATA;
""",
    ["public.accounts"],
    ["reporting.mv_monthly_signups"],
    E(
        "reporting.mv_monthly_signups",
        """
    month <- public.accounts.created_at
    plan <- public.accounts.plan
  """,
    ),
    "CREATE MATERIALIZED VIEW … WITH NO DATA still defines the lineage",
)

C(
    "pg_refresh_matview_concurrently",
    "postgres",
    """
REFRESH MATERIALIZED VIEW CONCURRENTLY reporting.mv_monthly_signups;
""",
    [],
    ["reporting.mv_monthly_signups"],
    None,
    "REFRESH MATERIALIZED VIEW rewrites the view: it is a target; its inputs are not in the statement",
)

C(
    "pg_jsonb_operators_insert",
    "postgres",
    """
INSERT INTO app.signups (id, email, plan_name, referrer)
SELECT (payload->>'id')::bigint,
       payload->>'email',
       payload#>>'{plan,name}',
       headers->'http'->>'referer'
FROM raw.webhooks
WHERE payload->>'type' = 'signup'
  AND received_at > now() - interval '1 hour'
""",
    ["raw.webhooks"],
    ["app.signups"],
    E(
        "app.signups",
        """
    id <- raw.webhooks.payload
    email <- raw.webhooks.payload
    plan_name <- raw.webhooks.payload
    referrer <- raw.webhooks.headers
  """,
    ),
    "jsonb ->, ->>, #>> extraction keeps the jsonb column as DIRECT source",
)

C(
    "pg_lateral_subquery",
    "postgres",
    """
CREATE TABLE analytics.user_last_order AS
SELECT u.id AS user_id, u.email, lo.order_id, lo.total
FROM public.users u
LEFT JOIN LATERAL (
    SELECT o.id AS order_id, o.total
    FROM public.orders o
    WHERE o.user_id = u.id
    ORDER BY o.created_at DESC
    LIMIT 1
) lo ON true
""",
    ["public.users", "public.orders"],
    ["analytics.user_last_order"],
    E(
        "analytics.user_last_order",
        """
    user_id <- public.users.id
    email <- public.users.email
    order_id <- public.orders.id
    total <- public.orders.total
  """,
    ),
    "LEFT JOIN LATERAL correlated subquery",
)

C(
    "pg_generate_series_no_source",
    "postgres",
    """
INSERT INTO dw.dim_date (date_key, full_date, year, month, day_of_week)
SELECT to_char(d, 'YYYYMMDD')::int, d::date, extract(year FROM d), extract(month FROM d), extract(isodow FROM d)
FROM generate_series('2020-01-01'::date, '2030-12-31'::date, interval '1 day') AS g(d)
""",
    [],
    ["dw.dim_date"],
    [],
    "generate_series is a set-returning function, not a table: no source and no column edges",
)

C(
    "pg_copy_query_to_stdout",
    "postgres",
    """
COPY (SELECT id, email, created_at FROM public.users WHERE created_at >= '2024-01-01') TO STDOUT WITH (FORMAT csv, HEADER true)
""",
    ["public.users"],
    [],
    None,
    "psql \\copy / COPY (query) TO STDOUT: reads the table, writes no dataset",
)

C(
    "pg_create_unlogged_table_as",
    "postgres",
    """
CREATE UNLOGGED TABLE scratch.order_dedup AS
SELECT DISTINCT ON (order_id) order_id, status, updated_at
FROM raw.order_events
ORDER BY order_id, updated_at DESC
""",
    ["raw.order_events"],
    ["scratch.order_dedup"],
    I("raw.order_events", "scratch.order_dedup", "order_id status updated_at"),
    "CREATE UNLOGGED TABLE … AS with DISTINCT ON (ON keys and ORDER BY are INDIRECT, the projected columns DIRECT)",
)

C(
    "plpgsql_do_block_temp_on_commit_drop",
    "postgres",
    """
DO $$
BEGIN
  CREATE TEMP TABLE tmp_changed ON COMMIT DROP AS
  SELECT id, email FROM crm.contacts WHERE updated_at > now() - interval '1 day';

  UPDATE mailing.subscribers s
  SET email = t.email
  FROM tmp_changed t
  WHERE s.contact_id = t.id;
END
$$;
""",
    ["crm.contacts"],
    ["mailing.subscribers"],
    E("mailing.subscribers", "email <- crm.contacts.email"),
    "anonymous DO block: temp table collapsed, UPDATE … FROM stitched",
)

# --- Trino / Presto ----------------------------------------------------------------------------

C(
    "trino_insert_cross_join_unnest",
    "trino",
    """
INSERT INTO iceberg.analytics.order_items
SELECT o.order_id, t.sku, t.qty, o.order_ts
FROM iceberg.raw.orders o
CROSS JOIN UNNEST(o.items) AS t (sku, qty)
""",
    ["iceberg.raw.orders"],
    ["iceberg.analytics.order_items"],
    E(
        "iceberg.analytics.order_items",
        """
    order_id <- iceberg.raw.orders.order_id
    sku <- iceberg.raw.orders.items
    qty <- iceberg.raw.orders.items
    order_ts <- iceberg.raw.orders.order_ts
  """,
    ),
    "CROSS JOIN UNNEST(array of rows) AS t (a, b): both element columns trace to the array column",
)

C(
    "presto_unnest_with_ordinality",
    "presto",
    """
INSERT INTO hive.analytics.post_tags
SELECT p.post_id, tag, p.created_at
FROM hive.raw.posts p
CROSS JOIN UNNEST(split(p.tags_csv, ',')) WITH ORDINALITY AS t (tag, pos)
WHERE pos <= 5
""",
    ["hive.raw.posts"],
    ["hive.analytics.post_tags"],
    E(
        "hive.analytics.post_tags",
        """
    post_id <- hive.raw.posts.post_id
    tag <- hive.raw.posts.tags_csv
    created_at <- hive.raw.posts.created_at
  """,
    ),
    "UNNEST … WITH ORDINALITY over a function of a column; the ordinality column is a filter only",
)

C(
    "trino_map_and_json_functions",
    "trino",
    """
CREATE TABLE iceberg.analytics.utm_touches AS
SELECT
  event_id,
  element_at(properties, 'utm_source') AS utm_source,
  properties['utm_medium'] AS utm_medium,
  json_extract_scalar(context_json, '$.campaign.name') AS campaign,
  CAST(json_extract(context_json, '$.page') AS varchar) AS page
FROM iceberg.raw.events
WHERE event_name = 'page_view'
""",
    ["iceberg.raw.events"],
    ["iceberg.analytics.utm_touches"],
    E(
        "iceberg.analytics.utm_touches",
        """
    event_id <- iceberg.raw.events.event_id
    utm_source <- iceberg.raw.events.properties
    utm_medium <- iceberg.raw.events.properties
    campaign <- iceberg.raw.events.context_json
    page <- iceberg.raw.events.context_json
  """,
    ),
    "map element_at / subscript and json_extract(_scalar) keep the map/JSON column as DIRECT source",
)

# --- Hive / Spark ------------------------------------------------------------------------------

C(
    "hive_lateral_view_outer_explode",
    "hive",
    """
INSERT OVERWRITE TABLE dw.user_tags PARTITION (dt = '2024-03-14')
SELECT u.user_id, tag
FROM ods.users u
LATERAL VIEW OUTER explode(split(u.tags_csv, ',')) t AS tag
WHERE u.dt = '2024-03-14'
""",
    ["ods.users"],
    ["dw.user_tags"],
    E(
        "dw.user_tags",
        """
    user_id <- ods.users.user_id
    tag <- ods.users.tags_csv
  """,
    ),
    "LATERAL VIEW OUTER explode(split(col)) traces to the column",
)

C(
    "hive_lateral_view_json_tuple",
    "hive",
    """
INSERT OVERWRITE TABLE dw.access_parsed PARTITION (dt = '2024-03-14')
SELECT a.request_id, j.ip, j.ua, j.path
FROM ods.access_log a
LATERAL VIEW json_tuple(a.payload, 'ip', 'ua', 'path') j AS ip, ua, path
WHERE a.dt = '2024-03-14'
""",
    ["ods.access_log"],
    ["dw.access_parsed"],
    E(
        "dw.access_parsed",
        """
    request_id <- ods.access_log.request_id
    ip <- ods.access_log.payload
    ua <- ods.access_log.payload
    path <- ods.access_log.payload
  """,
    ),
    "LATERAL VIEW json_tuple(col, …) j AS a, b, c: every generated column traces to the JSON column",
)

C(
    "hive_ctas_stored_as_orc",
    "hive",
    """
CREATE TABLE IF NOT EXISTS tmp.orders_enriched
STORED AS ORC
TBLPROPERTIES ('orc.compress' = 'SNAPPY')
AS
SELECT o.order_id, o.amount, c.segment
FROM ods.orders o
LEFT OUTER JOIN ods.customers c ON o.customer_id = c.customer_id
WHERE o.dt = '2024-03-14'
""",
    ["ods.orders", "ods.customers"],
    ["tmp.orders_enriched"],
    E(
        "tmp.orders_enriched",
        """
    order_id <- ods.orders.order_id
    amount <- ods.orders.amount
    segment <- ods.customers.segment
  """,
    ),
    "Hive CTAS with STORED AS / TBLPROPERTIES (the schema name tmp is a persistent schema)",
)

C(
    "spark_ctas_using_parquet_partitioned",
    "spark",
    """
CREATE TABLE lake.daily_device_stats
USING parquet
PARTITIONED BY (dt)
LOCATION 's3a://acme-lake/daily_device_stats'
AS
SELECT device_id, avg(temperature) AS avg_temp, percentile_approx(temperature, 0.95) AS p95_temp, dt
FROM lake.device_readings
GROUP BY device_id, dt
""",
    ["lake.device_readings"],
    ["lake.daily_device_stats"],
    E(
        "lake.daily_device_stats",
        """
    device_id <- lake.device_readings.device_id
    avg_temp <- lake.device_readings.temperature
    p95_temp <- lake.device_readings.temperature
    dt <- lake.device_readings.dt
  """,
    ),
    "Spark CTAS USING … PARTITIONED BY … LOCATION: the table is the target (its LOCATION is storage, not another dataset)",
)

# --- Oracle ------------------------------------------------------------------------------------

C(
    "ora_insert_all_conditional",
    "oracle",
    """
INSERT ALL
  WHEN order_total > 100000 THEN
    INTO sales.large_orders (order_id, customer_id, total) VALUES (order_id, customer_id, order_total)
  WHEN order_status = 'CANCELLED' THEN
    INTO sales.cancelled_orders (order_id, cancelled_on) VALUES (order_id, order_date)
  ELSE
    INTO sales.other_orders (order_id, total) VALUES (order_id, order_total)
SELECT order_id, customer_id, order_total, order_status, order_date
FROM oe.orders
WHERE order_date >= TRUNC(SYSDATE) - 1
""",
    ["oe.orders"],
    ["sales.large_orders", "sales.cancelled_orders", "sales.other_orders"],
    E(
        "sales.large_orders",
        """
    order_id <- oe.orders.order_id
    customer_id <- oe.orders.customer_id
    total <- oe.orders.order_total
  """,
    )
    + E(
        "sales.cancelled_orders",
        """
    order_id <- oe.orders.order_id
    cancelled_on <- oe.orders.order_date
  """,
    )
    + E(
        "sales.other_orders",
        """
    order_id <- oe.orders.order_id
    total <- oe.orders.order_total
  """,
    ),
    "Oracle conditional INSERT ALL … WHEN … ELSE; conditions INDIRECT",
)

C(
    "ora_merge_update_delete_where",
    "oracle",
    """
MERGE INTO hr.bonuses b
USING (SELECT employee_id, salary, department_id FROM hr.employees WHERE department_id = 80) e
ON (b.employee_id = e.employee_id)
WHEN MATCHED THEN
  UPDATE SET b.bonus = e.salary * .01
  DELETE WHERE (e.salary > 8000)
WHEN NOT MATCHED THEN
  INSERT (b.employee_id, b.bonus)
  VALUES (e.employee_id, e.salary * .01)
  WHERE (e.salary <= 8000)
""",
    ["hr.employees"],
    ["hr.bonuses"],
    E(
        "hr.bonuses",
        """
    employee_id <- hr.employees.employee_id
    bonus <- hr.employees.salary
  """,
    ),
    "Oracle MERGE with UPDATE … DELETE WHERE and INSERT … WHERE; target-qualified INSERT column list",
)

C(
    "ora_connect_by_hierarchy",
    "oracle",
    """
CREATE TABLE hr.org_paths AS
SELECT employee_id,
       manager_id,
       LEVEL AS depth,
       SYS_CONNECT_BY_PATH(last_name, '/') AS path,
       CONNECT_BY_ROOT last_name AS top_manager
FROM hr.employees
START WITH manager_id IS NULL
CONNECT BY PRIOR employee_id = manager_id
ORDER SIBLINGS BY last_name
""",
    ["hr.employees"],
    ["hr.org_paths"],
    E(
        "hr.org_paths",
        """
    employee_id <- hr.employees.employee_id
    manager_id <- hr.employees.manager_id
    path <- hr.employees.last_name
    top_manager <- hr.employees.last_name
  """,
    ),
    "hierarchical query: LEVEL is a pseudo-column (no edge); SYS_CONNECT_BY_PATH and CONNECT_BY_ROOT are DIRECT",
)

C(
    "ora_merge_using_dual_binds",
    "oracle",
    """
MERGE INTO app.user_prefs p
USING dual
ON (p.user_id = :1 AND p.pref_key = :2)
WHEN MATCHED THEN UPDATE SET p.pref_value = :3, p.updated_at = SYSTIMESTAMP
WHEN NOT MATCHED THEN INSERT (user_id, pref_key, pref_value, updated_at) VALUES (:1, :2, :3, SYSTIMESTAMP)
""",
    [],
    ["app.user_prefs"],
    [],
    "application upsert with bind variables USING dual: dual is not a dataset, binds give no edges",
)

C(
    "ora_ctas_nested_rownum_topn",
    "oracle",
    """
CREATE TABLE rpt.top_customers AS
SELECT customer_id, cust_name, total_spend
FROM (
  SELECT c.customer_id, c.cust_first_name || ' ' || c.cust_last_name AS cust_name, SUM(o.order_total) AS total_spend
  FROM oe.customers c
  JOIN oe.orders o ON o.customer_id = c.customer_id
  GROUP BY c.customer_id, c.cust_first_name, c.cust_last_name
  ORDER BY total_spend DESC
)
WHERE ROWNUM <= 100
""",
    ["oe.customers", "oe.orders"],
    ["rpt.top_customers"],
    E(
        "rpt.top_customers",
        """
    customer_id <- oe.customers.customer_id
    cust_name <- oe.customers.cust_first_name oe.customers.cust_last_name
    total_spend <- oe.orders.order_total
  """,
    ),
    "Oracle top-N via ROWNUM over an ordered inline view; || concatenation",
)

# --- MySQL -------------------------------------------------------------------------------------

C(
    "mysql_create_table_select_no_as",
    "mysql",
    """
CREATE TABLE archive.orders_2023 SELECT * FROM app.orders WHERE YEAR(created_at) = 2023
""",
    ["app.orders"],
    ["archive.orders_2023"],
    I("app.orders", "archive.orders_2023", "id customer_id total created_at"),
    "MySQL CREATE TABLE … SELECT without AS; * expanded with the given schema",
    schemas={
        "app.orders": {
            "id": "bigint",
            "customer_id": "bigint",
            "total": "decimal(10,2)",
            "created_at": "datetime",
        }
    },
)

C(
    "mysql_insert_ignore_json_extract",
    "mysql",
    """
INSERT IGNORE INTO app.devices (device_id, os, app_version)
SELECT payload->>'$.device.id', JSON_UNQUOTE(JSON_EXTRACT(payload, '$.device.os')), payload->'$.app.version'
FROM app.raw_events
WHERE event_type = 'app_open'
""",
    ["app.raw_events"],
    ["app.devices"],
    E(
        "app.devices",
        """
    device_id <- app.raw_events.payload
    os <- app.raw_events.payload
    app_version <- app.raw_events.payload
  """,
    ),
    "MySQL INSERT IGNORE with ->> / -> / JSON_EXTRACT",
)

# --- DuckDB ------------------------------------------------------------------------------------

C(
    "duckdb_ctas_from_read_csv_auto",
    "duckdb",
    """
CREATE TABLE raw_trips AS FROM read_csv_auto('data/trips/*.csv', header = true)
""",
    ["data/trips"],
    ["raw_trips"],
    None,
    "FROM-first CTAS over read_csv_auto with a glob",
)

C(
    "duckdb_copy_table_partitioned",
    "duckdb",
    """
COPY orders TO 's3://acme-lake/orders' (FORMAT PARQUET, PARTITION_BY (year, month), OVERWRITE_OR_IGNORE true)
""",
    ["orders"],
    ["s3://acme-lake/orders"],
    None,
    "COPY table TO a partitioned S3 prefix",
)

C(
    "duckdb_attach_then_insert_read_parquet",
    "duckdb",
    """
ATTACH 'warehouse.duckdb' AS wh;
INSERT INTO wh.main.orders
SELECT * FROM read_parquet('s3://acme-lake/orders/year=2024/*/*.parquet', hive_partitioning = true);
""",
    ["s3://acme-lake/orders"],
    ["wh.main.orders"],
    None,
    "ATTACH (no lineage) then INSERT from read_parquet over hive partitions (path cut at key=value)",
)

C(
    "duckdb_select_from_file_literal",
    "duckdb",
    """
SELECT passenger_count, avg(tip_amount) AS avg_tip
FROM 'data/yellow_tripdata_2024-01.parquet'
GROUP BY ALL
ORDER BY passenger_count
""",
    ["data/yellow_tripdata_2024-01.parquet"],
    [],
    None,
    "DuckDB FROM 'file.parquet' replacement scan",
)

# --- ClickHouse --------------------------------------------------------------------------------

C(
    "ch_insert_from_remote",
    "clickhouse",
    """
INSERT INTO analytics.events_local
SELECT *
FROM remote('ch-shard-{01..04}.prod:9000', analytics, events_raw, 'reader', 'secret')
WHERE event_date = today()
""",
    ["analytics.events_raw"],
    ["analytics.events_local"],
    None,
    "remote('host', db, table, …) reads db.table on another server: that table is the source",
)

C(
    "ch_insert_from_cluster",
    "clickhouse",
    """
INSERT INTO analytics.daily_agg
SELECT event_date, count() AS events, uniqExact(user_id) AS users
FROM cluster('prod_cluster', analytics, events_local)
WHERE event_date = yesterday()
GROUP BY event_date
""",
    ["analytics.events_local"],
    ["analytics.daily_agg"],
    E(
        "analytics.daily_agg",
        """
    event_date <- analytics.events_local.event_date
    users <- analytics.events_local.user_id
  """,
    ),
    "cluster('name', db, table) reads db.table on every shard",
)

C(
    "ch_array_join_alias",
    "clickhouse",
    """
INSERT INTO analytics.event_tags
SELECT event_id, tag, event_time
FROM analytics.events
ARRAY JOIN tags AS tag
WHERE event_date = yesterday()
""",
    ["analytics.events"],
    ["analytics.event_tags"],
    E(
        "analytics.event_tags",
        """
    event_id <- analytics.events.event_id
    tag <- analytics.events.tags
    event_time <- analytics.events.event_time
  """,
    ),
    "ARRAY JOIN col AS alias: the alias traces to the array column",
)

C(
    "ch_final_prewhere_argmax",
    "clickhouse",
    """
INSERT INTO analytics.user_latest
SELECT user_id, argMax(email, updated_at) AS email, max(updated_at) AS updated_at
FROM analytics.users FINAL
PREWHERE is_deleted = 0
GROUP BY user_id
""",
    ["analytics.users"],
    ["analytics.user_latest"],
    I("analytics.users", "analytics.user_latest", "user_id email updated_at"),
    "FINAL and PREWHERE; argMax(value, key): the value is DIRECT, the key only picks the row",
)


# ---------------------------------------------------------------------------------------------
# C. Column edge cases
# ---------------------------------------------------------------------------------------------

C(
    "col_bq_struct_field_access_alias",
    "bigquery",
    """
INSERT INTO `acme.dw.sessions_flat` (session_id, user_id, os, city)
SELECT s.session_id, s.user.id, s.device.os, s.geo.city.name
FROM `acme.raw.sessions` AS s
""",
    ["acme.raw.sessions"],
    ["acme.dw.sessions_flat"],
    E(
        "acme.dw.sessions_flat",
        """
    session_id <- acme.raw.sessions.session_id
    user_id <- acme.raw.sessions.user
    os <- acme.raw.sessions.device
    city <- acme.raw.sessions.geo
  """,
    ),
    "alias.struct.field(.field) traces to the top-level struct column",
)

C(
    "col_spark_struct_field_no_alias",
    "spark",
    """
INSERT OVERWRITE TABLE dw.events_flat
SELECT event_id, payload.user.id AS user_id, payload.device.os AS os, payload.amount * 100 AS amount_cents
FROM raw.events
""",
    ["raw.events"],
    ["dw.events_flat"],
    E(
        "dw.events_flat",
        """
    event_id <- raw.events.event_id
    user_id <- raw.events.payload
    os <- raw.events.payload
    amount_cents <- raw.events.payload
  """,
    ),
    "unqualified struct.field access (payload is a column of the only table, not a table name)",
)

C(
    "col_pg_select_distinct",
    "postgres",
    """
INSERT INTO dim.country (country_code, country_name)
SELECT DISTINCT upper(c.country_code), c.country_name
FROM raw.customers c
WHERE c.country_code IS NOT NULL
""",
    ["raw.customers"],
    ["dim.country"],
    I("raw.customers", "dim.country", "country_code country_name"),
    "SELECT DISTINCT keeps DIRECT edges",
)

C(
    "col_pg_aggregate_filter",
    "postgres",
    """
CREATE TABLE rpt.order_status_summary AS
SELECT customer_id,
       count(*) FILTER (WHERE status = 'refunded') AS refunds,
       sum(amount) FILTER (WHERE status = 'complete') AS completed_amount,
       avg(amount) AS avg_amount
FROM sales.orders
GROUP BY customer_id
""",
    ["sales.orders"],
    ["rpt.order_status_summary"],
    E(
        "rpt.order_status_summary",
        """
    customer_id <- sales.orders.customer_id
    completed_amount <- sales.orders.amount
    avg_amount <- sales.orders.amount
  """,
    ),
    "aggregate FILTER (WHERE …): the filter column is INDIRECT; count(*) FILTER gives no edge",
)

C(
    "col_duckdb_window_frames",
    "duckdb",
    """
CREATE TABLE stock_signals AS
SELECT
  symbol,
  trade_date,
  avg(close) OVER (PARTITION BY symbol ORDER BY trade_date ROWS BETWEEN 6 PRECEDING AND CURRENT ROW) AS ma7,
  close - lag(close) OVER (PARTITION BY symbol ORDER BY trade_date) AS change,
  rank() OVER (PARTITION BY trade_date ORDER BY volume DESC) AS volume_rank
FROM prices
""",
    ["prices"],
    ["stock_signals"],
    E(
        "stock_signals",
        """
    symbol <- prices.symbol
    trade_date <- prices.trade_date
    ma7 <- prices.close
    change <- prices.close
  """,
    ),
    "window aggregates with ROWS frames: argument DIRECT; PARTITION/ORDER BY INDIRECT; rank() gives no edge",
)

C(
    "col_tsql_json_value_query",
    "tsql",
    """
INSERT INTO dbo.OrderHeaders (OrderID, CustomerID, ShipCity, Items)
SELECT o.OrderID,
       CAST(JSON_VALUE(o.Payload, '$.customer.id') AS INT),
       JSON_VALUE(o.Payload, '$.shipping.address.city'),
       JSON_QUERY(o.Payload, '$.items')
FROM staging.OrderJson AS o
WHERE ISJSON(o.Payload) = 1;
""",
    ["staging.orderjson"],
    ["dbo.orderheaders"],
    E(
        "dbo.orderheaders",
        """
    orderid <- staging.orderjson.orderid
    customerid <- staging.orderjson.payload
    shipcity <- staging.orderjson.payload
    items <- staging.orderjson.payload
  """,
    ),
    "T-SQL JSON_VALUE / JSON_QUERY keep the JSON column as DIRECT source",
)

C(
    "col_ch_json_extract",
    "clickhouse",
    """
INSERT INTO analytics.purchases (user_id, amount, referrer, ts)
SELECT JSONExtractString(raw, 'user_id'), JSONExtractFloat(raw, 'amount'), visitParamExtractString(raw, 'ref'), ts
FROM analytics.raw_events
WHERE JSONExtractString(raw, 'type') = 'purchase'
""",
    ["analytics.raw_events"],
    ["analytics.purchases"],
    E(
        "analytics.purchases",
        """
    user_id <- analytics.raw_events.raw
    amount <- analytics.raw_events.raw
    referrer <- analytics.raw_events.raw
    ts <- analytics.raw_events.ts
  """,
    ),
    "ClickHouse JSONExtract*/visitParamExtract* keep the JSON column as DIRECT source",
)

C(
    "col_spark_coalesce_two_sources",
    "spark",
    """
INSERT OVERWRITE TABLE mdm.contacts_merged
SELECT
  COALESCE(a.email, b.email) AS email,
  COALESCE(a.phone, b.phone, 'n/a') AS phone,
  a.crm_id,
  b.shop_customer_id
FROM crm.contacts a
FULL OUTER JOIN shop.customers b ON a.email_hash = b.email_hash
""",
    ["crm.contacts", "shop.customers"],
    ["mdm.contacts_merged"],
    E(
        "mdm.contacts_merged",
        """
    email <- crm.contacts.email shop.customers.email
    phone <- crm.contacts.phone shop.customers.phone
    crm_id <- crm.contacts.crm_id
    shop_customer_id <- shop.customers.shop_customer_id
  """,
    ),
    "COALESCE of columns from two tables: both DIRECT",
)

C(
    "col_dbx_hash_masking",
    "databricks",
    """
CREATE OR REPLACE TABLE main.shared.customers_masked AS
SELECT
  customer_id,
  sha2(lower(email), 256) AS email_sha256,
  md5(phone) AS phone_md5,
  concat('***-**-', right(ssn, 4)) AS ssn_masked,
  regexp_replace(full_name, '[a-z]', '*') AS name_masked,
  country
FROM main.crm.customers
""",
    ["main.crm.customers"],
    ["main.shared.customers_masked"],
    E(
        "main.shared.customers_masked",
        """
    customer_id <- main.crm.customers.customer_id
    email_sha256 <- main.crm.customers.email
    phone_md5 <- main.crm.customers.phone
    ssn_masked <- main.crm.customers.ssn
    name_masked <- main.crm.customers.full_name
    country <- main.crm.customers.country
  """,
    ),
    "hashing/masking functions (sha2, md5, right, regexp_replace) are DIRECT (MASKED subtype)",
)

C(
    "col_sf_hash_masking",
    "snowflake",
    """
INSERT INTO SHARE_DB.PUBLIC.USERS_PSEUDONYMIZED (USER_KEY, EMAIL_HASH, BIRTH_YEAR)
SELECT HASH(USER_ID), SHA2(EMAIL, 256), YEAR(BIRTH_DATE)
FROM ANALYTICS.PROD.USERS
""",
    ["analytics.prod.users"],
    ["share_db.public.users_pseudonymized"],
    E(
        "share_db.public.users_pseudonymized",
        """
    user_key <- analytics.prod.users.user_id
    email_hash <- analytics.prod.users.email
    birth_year <- analytics.prod.users.birth_date
  """,
    ),
    "Snowflake HASH/SHA2 pseudonymisation is DIRECT",
)

C(
    "col_ansi_positional_insert_schema",
    "ansi",
    """
INSERT INTO dw.payments_fact
SELECT p.id, p.amount_cents / 100.0, p.currency, p.created_at
FROM staging.payments p
""",
    ["staging.payments"],
    ["dw.payments_fact"],
    E(
        "dw.payments_fact",
        """
    payment_id <- staging.payments.id
    amount <- staging.payments.amount_cents
    currency_code <- staging.payments.currency
    paid_at <- staging.payments.created_at
  """,
    ),
    "INSERT without a column list: positional mapping onto the given target schema",
    schemas={
        "dw.payments_fact": {
            "payment_id": "bigint",
            "amount": "decimal(12,2)",
            "currency_code": "char(3)",
            "paid_at": "timestamp",
        }
    },
)

C(
    "col_rs_union_all_constants",
    "redshift",
    """
INSERT INTO analytics.all_orders (order_id, amount, channel)
SELECT id, amount, 'web' FROM web.orders
UNION ALL
SELECT order_id, total, 'store' FROM pos.store_orders
""",
    ["web.orders", "pos.store_orders"],
    ["analytics.all_orders"],
    E(
        "analytics.all_orders",
        """
    order_id <- web.orders.id pos.store_orders.order_id
    amount <- web.orders.amount pos.store_orders.total
  """,
    ),
    "UNION ALL: both branches feed each position; constant channel gives no edge",
)

C(
    "col_bq_except_distinct_filter",
    "bigquery",
    """
INSERT INTO `acme.crm.churned_users` (user_id)
SELECT user_id FROM `acme.activity.active_last_month`
EXCEPT DISTINCT
SELECT user_id FROM `acme.activity.active_this_month`
""",
    ["acme.activity.active_last_month", "acme.activity.active_this_month"],
    ["acme.crm.churned_users"],
    E("acme.crm.churned_users", "user_id <- acme.activity.active_last_month.user_id"),
    "EXCEPT DISTINCT: the right branch is a filter (a source table, no DIRECT edge)",
)

C(
    "col_ora_nvl2_condition",
    "oracle",
    """
CREATE TABLE hr.emp_status AS
SELECT employee_id,
       NVL2(termination_date, 'INACTIVE', status) AS emp_status,
       NVL2(commission_pct, salary * commission_pct, 0) AS commission
FROM hr.employees
""",
    ["hr.employees"],
    ["hr.emp_status"],
    E(
        "hr.emp_status",
        """
    employee_id <- hr.employees.employee_id
    emp_status <- hr.employees.status
    commission <- hr.employees.salary hr.employees.commission_pct
  """,
    ),
    "NVL2(test, a, b): the test is a condition (INDIRECT), a and b DIRECT",
)

C(
    "col_sf_iff_values",
    "snowflake",
    """
CREATE OR REPLACE TABLE ANALYTICS.PROD.LEDGER AS
SELECT
  TXN_ID,
  IFF(IS_REFUND, -AMOUNT, AMOUNT) AS SIGNED_AMOUNT,
  IFF(COUNTRY IS NULL, 'unknown', COUNTRY) AS COUNTRY
FROM RAW.PAY.TRANSACTIONS
""",
    ["raw.pay.transactions"],
    ["analytics.prod.ledger"],
    E(
        "analytics.prod.ledger",
        """
    txn_id <- raw.pay.transactions.txn_id
    signed_amount <- raw.pay.transactions.amount
    country <- raw.pay.transactions.country
  """,
    ),
    "IFF(cond, a, b): cond INDIRECT; a column in both the condition and a branch is DIRECT through the branch",
)

C(
    "col_sf_lateral_column_alias",
    "snowflake",
    """
CREATE OR REPLACE TABLE ANALYTICS.PROD.ORDER_TAX AS
SELECT
  ORDER_ID,
  AMOUNT * FX_RATE AS AMOUNT_USD,
  AMOUNT_USD * 0.2 AS TAX_USD
FROM ANALYTICS.STAGING.ORDERS_FX
""",
    ["analytics.staging.orders_fx"],
    ["analytics.prod.order_tax"],
    E(
        "analytics.prod.order_tax",
        """
    order_id <- analytics.staging.orders_fx.order_id
    amount_usd <- analytics.staging.orders_fx.amount analytics.staging.orders_fx.fx_rate
    tax_usd <- analytics.staging.orders_fx.amount analytics.staging.orders_fx.fx_rate
  """,
    ),
    "lateral column alias: a later select item referencing an earlier alias inherits its sources",
)

C(
    "col_dbx_lateral_column_alias",
    "databricks",
    """
CREATE OR REPLACE TABLE main.gold.cart_metrics AS
SELECT
  cart_id,
  sum(price * qty) AS subtotal,
  subtotal * 0.08 AS tax,
  subtotal + tax AS total
FROM main.silver.cart_items
GROUP BY cart_id
""",
    ["main.silver.cart_items"],
    ["main.gold.cart_metrics"],
    E(
        "main.gold.cart_metrics",
        """
    cart_id <- main.silver.cart_items.cart_id
    subtotal <- main.silver.cart_items.price main.silver.cart_items.qty
    tax <- main.silver.cart_items.price main.silver.cart_items.qty
    total <- main.silver.cart_items.price main.silver.cart_items.qty
  """,
    ),
    "Databricks lateral column alias chained twice",
)

C(
    "col_pg_percentile_within_group",
    "postgres",
    """
CREATE TABLE ops.endpoint_latency AS
SELECT endpoint,
       percentile_cont(0.5) WITHIN GROUP (ORDER BY latency_ms) AS p50_ms,
       percentile_disc(0.99) WITHIN GROUP (ORDER BY latency_ms) AS p99_ms,
       count(*) AS requests
FROM ops.requests
WHERE ts > now() - interval '1 day'
GROUP BY endpoint
""",
    ["ops.requests"],
    ["ops.endpoint_latency"],
    E(
        "ops.endpoint_latency",
        """
    endpoint <- ops.requests.endpoint
    p50_ms <- ops.requests.latency_ms
    p99_ms <- ops.requests.latency_ms
  """,
    ),
    "ordered-set aggregate: the WITHIN GROUP (ORDER BY x) column is the aggregated value (DIRECT), not a sort key",
)

C(
    "col_sf_listagg_array_agg_within_group",
    "snowflake",
    """
CREATE OR REPLACE TABLE ANALYTICS.PROD.CART_SUMMARY AS
SELECT
  CART_ID,
  LISTAGG(DISTINCT CATEGORY, ',') WITHIN GROUP (ORDER BY CATEGORY) AS CATEGORIES,
  ARRAY_AGG(PRODUCT_ID) WITHIN GROUP (ORDER BY ADDED_AT) AS PRODUCTS
FROM ANALYTICS.STAGING.CART_ITEMS
GROUP BY CART_ID
""",
    ["analytics.staging.cart_items"],
    ["analytics.prod.cart_summary"],
    E(
        "analytics.prod.cart_summary",
        """
    cart_id <- analytics.staging.cart_items.cart_id
    categories <- analytics.staging.cart_items.category
    products <- analytics.staging.cart_items.product_id
  """,
    ),
    "LISTAGG/ARRAY_AGG … WITHIN GROUP (ORDER BY y): y is a sort key (INDIRECT) unless it is also the argument",
)

C(
    "col_dbx_count_if_sum_if",
    "databricks",
    """
CREATE OR REPLACE TABLE main.ops.job_health AS
SELECT job_id,
       count_if(status = 'FAILED') AS failures,
       sum(IF(status = 'FAILED', duration_s, 0)) AS failed_seconds,
       max(finished_at) AS last_run_at
FROM main.ops.job_runs
GROUP BY job_id
""",
    ["main.ops.job_runs"],
    ["main.ops.job_health"],
    E(
        "main.ops.job_health",
        """
    job_id <- main.ops.job_runs.job_id
    failures <- main.ops.job_runs.status
    failed_seconds <- main.ops.job_runs.duration_s
    last_run_at <- main.ops.job_runs.finished_at
  """,
    ),
    "count_if(cond) aggregates a value mapping of cond (DIRECT AGGREGATION since the value-mapping rule); IF(cond, x, 0) inside sum keeps x DIRECT, cond only selects (INDIRECT)",
)

C(
    "col_pg_values_cte_lookup",
    "postgres",
    """
WITH status_map(code, label) AS (
  VALUES ('P', 'Pending'), ('S', 'Shipped'), ('D', 'Delivered')
)
INSERT INTO rpt.shipments_labeled (shipment_id, status_label, shipped_at)
SELECT s.id, m.label, s.shipped_at
FROM logistics.shipments s
LEFT JOIN status_map m ON m.code = s.status_code
""",
    ["logistics.shipments"],
    ["rpt.shipments_labeled"],
    E(
        "rpt.shipments_labeled",
        """
    shipment_id <- logistics.shipments.id
    shipped_at <- logistics.shipments.shipped_at
  """,
    ),
    "a VALUES CTE is not a table: no source, its constants give no edge",
)

C(
    "col_spark_ranking_functions_no_edge",
    "spark",
    """
INSERT OVERWRITE TABLE dw.product_rankings
SELECT category, product_id, revenue,
       row_number() OVER (PARTITION BY category ORDER BY revenue DESC) AS rn,
       dense_rank() OVER (ORDER BY revenue DESC) AS global_rank,
       ntile(4) OVER (PARTITION BY category ORDER BY revenue) AS quartile
FROM dw.product_revenue
""",
    ["dw.product_revenue"],
    ["dw.product_rankings"],
    I("dw.product_revenue", "dw.product_rankings", "category product_id revenue"),
    "ranking window functions give no DIRECT edge (their inputs are window keys)",
)

C(
    "col_tsql_datediff_two_columns",
    "tsql",
    """
INSERT INTO rpt.ShippingTimes (SalesOrderID, DaysToShip, ShipMonth)
SELECT SalesOrderID, DATEDIFF(DAY, OrderDate, ShipDate), FORMAT(ShipDate, 'yyyy-MM')
FROM Sales.SalesOrderHeader
WHERE ShipDate IS NOT NULL;
""",
    ["sales.salesorderheader"],
    ["rpt.shippingtimes"],
    E(
        "rpt.shippingtimes",
        """
    salesorderid <- sales.salesorderheader.salesorderid
    daystoship <- sales.salesorderheader.orderdate sales.salesorderheader.shipdate
    shipmonth <- sales.salesorderheader.shipdate
  """,
    ),
    "DATEDIFF(part, a, b): the date part keyword is not a column",
)

C(
    "col_bq_greatest_across_join",
    "bigquery",
    """
CREATE OR REPLACE TABLE `acme.dw.account_activity` AS
SELECT a.account_id,
       GREATEST(IFNULL(w.last_visit, TIMESTAMP '1970-01-01'), IFNULL(m.last_open, TIMESTAMP '1970-01-01')) AS last_activity_at
FROM `acme.crm.accounts` a
LEFT JOIN `acme.web.visits_agg` w USING (account_id)
LEFT JOIN `acme.mobile.opens_agg` m USING (account_id)
""",
    ["acme.crm.accounts", "acme.web.visits_agg", "acme.mobile.opens_agg"],
    ["acme.dw.account_activity"],
    E(
        "acme.dw.account_activity",
        """
    account_id <- acme.crm.accounts.account_id
    last_activity_at <- acme.web.visits_agg.last_visit acme.mobile.opens_agg.last_open
  """,
    ),
    "GREATEST over IFNULLs from two joined tables; JOIN USING",
)

C(
    "col_mysql_self_join_manager",
    "mysql",
    """
CREATE TABLE hr.employee_managers AS
SELECT e.id, e.name, m.name AS manager_name
FROM hr.employees e
LEFT JOIN hr.employees m ON m.id = e.manager_id
""",
    ["hr.employees"],
    ["hr.employee_managers"],
    E(
        "hr.employee_managers",
        """
    id <- hr.employees.id
    name <- hr.employees.name
    manager_name <- hr.employees.name
  """,
    ),
    "self-join: both aliases resolve to one table",
)

C(
    "col_ansi_nested_derived_renames",
    "ansi",
    """
INSERT INTO mart.customer_value (cust, value_band)
SELECT x.c, x.band
FROM (
  SELECT y.customer AS c, CASE WHEN y.total > 1000 THEN 'high' ELSE y.tier END AS band
  FROM (
    SELECT customer_id AS customer, SUM(amount) AS total, MAX(tier) AS tier
    FROM sales.orders
    GROUP BY customer_id
  ) y
) x
""",
    ["sales.orders"],
    ["mart.customer_value"],
    E(
        "mart.customer_value",
        """
    cust <- sales.orders.customer_id
    value_band <- sales.orders.tier
  """,
    ),
    "three levels of derived tables with renames; CASE condition (total ← amount) INDIRECT",
)

C(
    "col_pg_string_agg_order",
    "postgres",
    """
CREATE TABLE rpt.order_product_list AS
SELECT oi.order_id, string_agg(p.name, ', ' ORDER BY p.name) AS products, sum(oi.qty) AS items
FROM sales.order_items oi
JOIN catalog.products p ON p.id = oi.product_id
GROUP BY oi.order_id
""",
    ["sales.order_items", "catalog.products"],
    ["rpt.order_product_list"],
    E(
        "rpt.order_product_list",
        """
    order_id <- sales.order_items.order_id
    products <- catalog.products.name
    items <- sales.order_items.qty
  """,
    ),
    "string_agg(x, sep ORDER BY x)",
)

C(
    "col_duckdb_list_agg_order",
    "duckdb",
    """
CREATE TABLE session_paths AS
SELECT session_id, list(page ORDER BY ts) AS path, count(*) AS hits
FROM pageviews
GROUP BY session_id
""",
    ["pageviews"],
    ["session_paths"],
    E(
        "session_paths",
        """
    session_id <- pageviews.session_id
    path <- pageviews.page
  """,
    ),
    "DuckDB list(x ORDER BY y): y INDIRECT",
)

C(
    "col_bq_ga4_event_params_subquery",
    "bigquery",
    """
CREATE OR REPLACE TABLE `acme.analytics.ga4_page_views` AS
SELECT
  event_date,
  user_pseudo_id,
  (SELECT value.string_value FROM UNNEST(event_params) WHERE key = 'page_location') AS page_location,
  (SELECT value.int_value FROM UNNEST(event_params) WHERE key = 'ga_session_id') AS ga_session_id
FROM `acme.analytics_123456.events_20240314`
WHERE event_name = 'page_view'
""",
    ["acme.analytics_123456.events_20240314"],
    ["acme.analytics.ga4_page_views"],
    E(
        "acme.analytics.ga4_page_views",
        """
    event_date <- acme.analytics_123456.events_20240314.event_date
    user_pseudo_id <- acme.analytics_123456.events_20240314.user_pseudo_id
    page_location <- acme.analytics_123456.events_20240314.event_params
    ga_session_id <- acme.analytics_123456.events_20240314.event_params
  """,
    ),
    "GA4 pattern: scalar subquery over UNNEST(outer array column); value.string_value is a field of the element",
)

C(
    "col_rs_case_share_ratio",
    "redshift",
    """
CREATE TABLE analytics.channel_share AS
SELECT region,
       SUM(CASE WHEN channel = 'online' THEN amount ELSE 0 END)::float / NULLIF(SUM(amount), 0) AS online_share
FROM analytics.sales
GROUP BY region
""",
    ["analytics.sales"],
    ["analytics.channel_share"],
    E(
        "analytics.channel_share",
        """
    region <- analytics.sales.region
    online_share <- analytics.sales.amount
  """,
    ),
    "ratio of conditional sums: only amount is DIRECT",
)

C(
    "col_sf_first_value_ignore_nulls",
    "snowflake",
    """
CREATE OR REPLACE TABLE ANALYTICS.PROD.USER_ATTRIBUTION AS
SELECT DISTINCT
  USER_ID,
  FIRST_VALUE(CHANNEL IGNORE NULLS) OVER (PARTITION BY USER_ID ORDER BY TS ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING) AS FIRST_CHANNEL,
  LAST_VALUE(CHANNEL IGNORE NULLS) OVER (PARTITION BY USER_ID ORDER BY TS ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING) AS LAST_CHANNEL
FROM ANALYTICS.STAGING.TOUCHPOINTS
""",
    ["analytics.staging.touchpoints"],
    ["analytics.prod.user_attribution"],
    E(
        "analytics.prod.user_attribution",
        """
    user_id <- analytics.staging.touchpoints.user_id
    first_channel <- analytics.staging.touchpoints.channel
    last_channel <- analytics.staging.touchpoints.channel
  """,
    ),
    "FIRST_VALUE/LAST_VALUE … IGNORE NULLS with full frames",
)

C(
    "col_pg_merge_expression",
    "postgres",
    """
MERGE INTO inventory.stock AS i
USING inventory.shipments AS s
ON i.sku = s.sku
WHEN MATCHED THEN
  UPDATE SET qty = s.qty_received - s.qty_damaged, updated_at = s.received_at
WHEN NOT MATCHED THEN
  INSERT (sku, qty, updated_at) VALUES (s.sku, s.qty_received, s.received_at)
""",
    ["inventory.shipments"],
    ["inventory.stock"],
    E(
        "inventory.stock",
        """
    sku <- inventory.shipments.sku
    qty <- inventory.shipments.qty_received inventory.shipments.qty_damaged
    updated_at <- inventory.shipments.received_at
  """,
    ),
    "Postgres 15 MERGE with an arithmetic SET expression",
)

C(
    "col_pg_recursive_cte_insert",
    "postgres",
    """
WITH RECURSIVE tree AS (
  SELECT id, parent_id, name, 1 AS depth
  FROM catalog.categories
  WHERE parent_id IS NULL
  UNION ALL
  SELECT c.id, c.parent_id, c.name, t.depth + 1
  FROM catalog.categories c
  JOIN tree t ON c.parent_id = t.id
)
INSERT INTO catalog.category_tree (id, parent_id, name, depth)
SELECT id, parent_id, name, depth FROM tree
""",
    ["catalog.categories"],
    ["catalog.category_tree"],
    I("catalog.categories", "catalog.category_tree", "id parent_id name"),
    "recursive CTE before INSERT: the CTE is not a table; depth comes only from constants",
)

C(
    "col_sf_object_construct",
    "snowflake",
    """
INSERT INTO ANALYTICS.EXPORTS.CUSTOMER_EVENTS (CUSTOMER_ID, BODY, TAGS)
SELECT
  CUSTOMER_ID,
  OBJECT_CONSTRUCT('email', EMAIL, 'plan', PLAN, 'mrr', MRR),
  ARRAY_CONSTRUCT(SEGMENT, REGION)
FROM ANALYTICS.PROD.CUSTOMERS
""",
    ["analytics.prod.customers"],
    ["analytics.exports.customer_events"],
    E(
        "analytics.exports.customer_events",
        """
    customer_id <- analytics.prod.customers.customer_id
    body <- analytics.prod.customers.email analytics.prod.customers.plan analytics.prod.customers.mrr
    tags <- analytics.prod.customers.segment analytics.prod.customers.region
  """,
    ),
    "OBJECT_CONSTRUCT('k', col, …) and ARRAY_CONSTRUCT keep value columns DIRECT; keys are constants",
)

C(
    "col_spark_to_json_named_struct",
    "spark",
    """
INSERT INTO outbox.order_events
SELECT order_id, to_json(named_struct('id', order_id, 'amount', amount, 'items', items)) AS body, current_timestamp() AS created_at
FROM sales.orders
WHERE updated_at > current_timestamp() - INTERVAL 1 HOUR
""",
    ["sales.orders"],
    ["outbox.order_events"],
    E(
        "outbox.order_events",
        """
    order_id <- sales.orders.order_id
    body <- sales.orders.order_id sales.orders.amount sales.orders.items
  """,
    ),
    "to_json(named_struct(…)): every value column DIRECT; current_timestamp() none",
)

C(
    "col_mysql_group_concat",
    "mysql",
    """
CREATE TABLE rpt.post_tags AS
SELECT p.id AS post_id, GROUP_CONCAT(DISTINCT t.name ORDER BY t.name SEPARATOR ',') AS tags
FROM blog.posts p
JOIN blog.post_tags pt ON pt.post_id = p.id
JOIN blog.tags t ON t.id = pt.tag_id
GROUP BY p.id
""",
    ["blog.posts", "blog.post_tags", "blog.tags"],
    ["rpt.post_tags"],
    E(
        "rpt.post_tags",
        """
    post_id <- blog.posts.id
    tags <- blog.tags.name
  """,
    ),
    "GROUP_CONCAT(DISTINCT … ORDER BY … SEPARATOR …); a join-only table is a source without edges",
)

C(
    "col_hive_map_struct_subscripts",
    "hive",
    """
INSERT OVERWRITE TABLE dw.ad_clicks PARTITION (dt = '2024-03-14')
SELECT c.click_id, c.params['utm_campaign'] AS campaign, c.device.os AS os, size(c.items) AS item_count, c.tags[0] AS first_tag
FROM ods.clicks c
WHERE c.dt = '2024-03-14'
""",
    ["ods.clicks"],
    ["dw.ad_clicks"],
    E(
        "dw.ad_clicks",
        """
    click_id <- ods.clicks.click_id
    campaign <- ods.clicks.params
    os <- ods.clicks.device
    item_count <- ods.clicks.items
    first_tag <- ods.clicks.tags
  """,
    ),
    "Hive map['k'], struct.field, array[i] and size(array) trace to the top-level column",
)

C(
    "col_tsql_try_cast_iif",
    "tsql",
    """
INSERT INTO clean.Readings (SensorID, Value, IsValid)
SELECT SensorID,
       TRY_CAST(RawValue AS DECIMAL(10, 3)),
       IIF(TRY_CAST(RawValue AS DECIMAL(10, 3)) IS NULL, 0, 1)
FROM raw.SensorReadings;
""",
    ["raw.sensorreadings"],
    ["clean.readings"],
    E(
        "clean.readings",
        """
    sensorid <- raw.sensorreadings.sensorid
    value <- raw.sensorreadings.rawvalue
    isvalid <- raw.sensorreadings.rawvalue
  """,
    ),
    "TRY_CAST is DIRECT; IIF(cond, 0, 1) has only constant branches: a value mapping of cond (DIRECT since the value-mapping rule)",
)

# ---------------------------------------------------------------------------------------------
# D. More vendor forms (added after reading eval/heldout_cases.jsonl, to replace near-duplicates;
#    expectations still written before running the parser on them)
# ---------------------------------------------------------------------------------------------

C(
    "sf_generator_no_source",
    "snowflake",
    """
INSERT INTO ANALYTICS.PROD.DIM_DATE (DATE_DAY, RANDOM_BUCKET)
SELECT DATEADD(day, SEQ4(), '2020-01-01'::DATE), UNIFORM(1, 100, RANDOM())
FROM TABLE(GENERATOR(ROWCOUNT => 4018))
""",
    [],
    ["analytics.prod.dim_date"],
    [],
    "TABLE(GENERATOR(…)) is a row generator, not a dataset: no source, no column edges",
)

C(
    "sf_unpivot_columns",
    "snowflake",
    """
INSERT INTO ANALYTICS.PROD.SALES_LONG (EMPID, MONTH, SALES)
SELECT EMPID, MONTH, SALES
FROM ANALYTICS.PROD.MONTHLY_SALES_WIDE
    UNPIVOT (SALES FOR MONTH IN (JAN, FEB, MAR))
""",
    ["analytics.prod.monthly_sales_wide"],
    ["analytics.prod.sales_long"],
    E(
        "analytics.prod.sales_long",
        """
    empid <- analytics.prod.monthly_sales_wide.empid
    sales <- analytics.prod.monthly_sales_wide.jan analytics.prod.monthly_sales_wide.feb analytics.prod.monthly_sales_wide.mar
  """,
    ),
    "UNPIVOT: the value column comes from every unpivoted column; the name column holds column names (constants, no edge)",
)

C(
    "bq_merge_insert_row",
    "bigquery",
    """
MERGE `acme.dw.products` T
USING `acme.staging.products_delta` S
ON T.product_id = S.product_id
WHEN MATCHED THEN UPDATE SET name = S.name, price = S.price
WHEN NOT MATCHED THEN INSERT ROW
""",
    ["acme.staging.products_delta"],
    ["acme.dw.products"],
    I("acme.staging.products_delta", "acme.dw.products", "product_id name price"),
    "BigQuery MERGE … INSERT ROW inserts every source column (schemas given)",
    schemas={
        "acme.staging.products_delta": {
            "product_id": "INT64",
            "name": "STRING",
            "price": "NUMERIC",
        },
        "acme.dw.products": {"product_id": "INT64", "name": "STRING", "price": "NUMERIC"},
    },
)

C(
    "tsql_cte_delete_dedup",
    "tsql",
    """
WITH dupes AS (
    SELECT CustomerID, Email,
           ROW_NUMBER() OVER (PARTITION BY Email ORDER BY CreatedAt DESC) AS rn
    FROM dbo.Customers
)
DELETE FROM dupes WHERE rn > 1;
""",
    [],
    ["dbo.customers"],
    [],
    "DELETE through a CTE deletes from its base table: the target is dbo.Customers (not the CTE), and it is not also a source. "
    "Revised twice: first written with no source; then given dbo.Customers as a source too (the CTE's ROW_NUMBER reads the whole table); "
    "back to no source, because the CTE here is the DELETE's updatable view of its own target rows (T-SQL deletes through it), "
    "not a second input: its window reads the rows being deleted, as a DELETE's own WHERE does, and a DML target is not a source "
    "(update_target_as_source=false). A separate self-subquery (WHERE id IN (SELECT … FROM dbo.Customers)) would still be a source",
)

C(
    "spark_insert_table_shorthand",
    "spark",
    """
INSERT INTO sales.orders_backup TABLE sales.orders
""",
    ["sales.orders"],
    ["sales.orders_backup"],
    None,
    "INSERT INTO t TABLE s (TABLE s is SELECT * FROM s)",
)

C(
    "pg_ctas_table_shorthand",
    "postgres",
    """
CREATE TABLE archive.orders_2024_03 AS TABLE public.orders WITH DATA;
""",
    ["public.orders"],
    ["archive.orders_2024_03"],
    None,
    "CREATE TABLE … AS TABLE s WITH DATA",
)

C(
    "sf_create_table_like",
    "snowflake",
    """
CREATE TABLE IF NOT EXISTS ANALYTICS.STAGING.ORDERS_EMPTY LIKE ANALYTICS.PROD.ORDERS;
""",
    ["analytics.prod.orders"],
    ["analytics.staging.orders_empty"],
    None,
    "Snowflake CREATE TABLE … LIKE s reads s's definition (same convention as CREATE TABLE … (LIKE s))",
)

C(
    "mysql_values_row_alias_upsert",
    "mysql",
    """
INSERT INTO app.counters (name, value) VALUES ('signups', 1), ('logins', 3) AS new
ON DUPLICATE KEY UPDATE value = new.value
""",
    [],
    ["app.counters"],
    [],
    "MySQL 8 row alias `AS new` for VALUES: new is not a table",
)

C(
    "bq_generate_date_array_calendar",
    "bigquery",
    """
CREATE OR REPLACE TABLE `acme.dw.calendar` AS
SELECT d AS calendar_date, EXTRACT(YEAR FROM d) AS year, FORMAT_DATE('%A', d) AS weekday
FROM UNNEST(GENERATE_DATE_ARRAY('2020-01-01', '2030-12-31')) AS d
""",
    [],
    ["acme.dw.calendar"],
    [],
    "UNNEST(GENERATE_DATE_ARRAY(…)) of constants: no source table, no column edges",
)

C(
    "sf_changes_clause",
    "snowflake",
    """
INSERT INTO ANALYTICS.AUDIT.ORDER_DELTAS (ORDER_ID, STATUS)
SELECT ORDER_ID, STATUS
FROM ANALYTICS.PROD.ORDERS
  CHANGES (INFORMATION => DEFAULT)
  AT (TIMESTAMP => DATEADD('hour', -1, CURRENT_TIMESTAMP()))
""",
    ["analytics.prod.orders"],
    ["analytics.audit.order_deltas"],
    I("analytics.prod.orders", "analytics.audit.order_deltas", "order_id status"),
    "CHANGES (INFORMATION => …) AT (…) change tracking on a table",
)

C(
    "dbx_table_changes_function",
    "databricks",
    """
INSERT INTO main.audit.order_changes
SELECT order_id, status
FROM table_changes('main.sales.orders', 120)
WHERE _change_type IN ('insert', 'update_postimage')
""",
    ["main.sales.orders"],
    ["main.audit.order_changes"],
    I("main.sales.orders", "main.audit.order_changes", "order_id status"),
    "Delta change data feed table_changes('t', version) reads table t",
)

C(
    "sf_query_stage_directly",
    "snowflake",
    """
INSERT INTO RAW.EVENTS.PAGEVIEWS (URL, TS)
SELECT t.$1:url::string, t.$1:ts::timestamp_ntz
FROM @RAW.EVENTS.LANDING/pageviews/ (FILE_FORMAT => 'RAW.EVENTS.JSON_FF', PATTERN => '.*[.]json') t
""",
    ["@raw.events.landing/pageviews"],
    ["raw.events.pageviews"],
    None,
    "SELECT from a stage path with FILE_FORMAT/PATTERN: the stage path is the source dataset",
)

C(
    "hive_distribute_sort_by",
    "hive",
    """
INSERT OVERWRITE TABLE dw.events_sorted PARTITION (dt)
SELECT user_id, event_type, ts, dt
FROM ods.events
WHERE dt >= '2024-03-01'
DISTRIBUTE BY dt SORT BY user_id, ts
""",
    ["ods.events"],
    ["dw.events_sorted"],
    I("ods.events", "dw.events_sorted", "user_id event_type ts dt"),
    "DISTRIBUTE BY / SORT BY clauses are physical ordering, not lineage",
)

C(
    "spark_hints_broadcast",
    "spark",
    """
INSERT OVERWRITE TABLE dw.sales_enriched
SELECT /*+ BROADCAST(s), REPARTITION(200) */ f.sale_id, f.amount, s.store_name, s.region
FROM dw.fact_sales f
JOIN dw.dim_store s ON f.store_id = s.store_id
""",
    ["dw.fact_sales", "dw.dim_store"],
    ["dw.sales_enriched"],
    I("dw.fact_sales", "dw.sales_enriched", "sale_id amount")
    + I("dw.dim_store", "dw.sales_enriched", "store_name region"),
    "optimizer hints naming an alias do not create tables",
)

C(
    "sf_merge_using_cte_subquery",
    "snowflake",
    """
MERGE INTO ANALYTICS.PROD.CUSTOMER_LTV t
USING (
    WITH o AS (
        SELECT CUSTOMER_ID, SUM(AMOUNT) AS GROSS
        FROM ANALYTICS.PROD.ORDERS
        WHERE STATUS = 'complete'
        GROUP BY 1
    ),
    r AS (
        SELECT CUSTOMER_ID, SUM(AMOUNT) AS REFUNDED
        FROM ANALYTICS.PROD.REFUNDS
        GROUP BY 1
    )
    SELECT o.CUSTOMER_ID, o.GROSS - COALESCE(r.REFUNDED, 0) AS LTV
    FROM o LEFT JOIN r ON r.CUSTOMER_ID = o.CUSTOMER_ID
) s
ON t.CUSTOMER_ID = s.CUSTOMER_ID
WHEN MATCHED THEN UPDATE SET t.LTV = s.LTV, t.UPDATED_AT = CURRENT_TIMESTAMP()
WHEN NOT MATCHED THEN INSERT (CUSTOMER_ID, LTV, UPDATED_AT) VALUES (s.CUSTOMER_ID, s.LTV, CURRENT_TIMESTAMP())
""",
    ["analytics.prod.orders", "analytics.prod.refunds"],
    ["analytics.prod.customer_ltv"],
    E(
        "analytics.prod.customer_ltv",
        """
    customer_id <- analytics.prod.orders.customer_id
    ltv <- analytics.prod.orders.amount analytics.prod.refunds.amount
  """,
    ),
    "MERGE whose USING subquery has its own WITH clause",
)

C(
    "tsql_insert_with_tablock",
    "tsql",
    """
INSERT INTO dw.FactInventory WITH (TABLOCK) (DateKey, ProductKey, UnitsInStock)
SELECT CONVERT(INT, FORMAT(i.SnapshotDate, 'yyyyMMdd')), p.ProductKey, i.Quantity
FROM stage.Inventory AS i
JOIN dw.DimProduct AS p ON p.ProductAlternateKey = i.ProductCode;
""",
    ["stage.inventory", "dw.dimproduct"],
    ["dw.factinventory"],
    E(
        "dw.factinventory",
        """
    datekey <- stage.inventory.snapshotdate
    productkey <- dw.dimproduct.productkey
    unitsinstock <- stage.inventory.quantity
  """,
    ),
    "table hint WITH (TABLOCK) on the INSERT target before the column list",
)


def main() -> int:
    ids = [c["id"] for c in CASES]
    dupes = {i for i in ids if ids.count(i) > 1}
    if dupes:
        raise SystemExit(f"duplicate ids: {sorted(dupes)}")
    for case in CASES:
        sys.stdout.write(json.dumps(case, ensure_ascii=False) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
