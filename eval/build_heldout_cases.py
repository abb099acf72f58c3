# ruff: noqa: E501, N802  (data: one SQL string per line; C(...) reads as a table row)
"""Build eval/heldout_cases.jsonl: hand-written held-out lineage cases (corpus format).

Every expectation below was derived by reasoning about the SQL under the project's documented
conventions (conf/base.yaml `parser:`, lineage_udfs/core/options.py), never by running the
parser. See eval/README.md.

    python eval/build_heldout_cases.py > eval/heldout_cases.jsonl

Helpers:
    C(id, dialect, sql, sources, targets, columns, note, **extra)
    columns: list of "src_table.col > tgt_table.col" strings, or None (not asserted).
    result:  list of "src_table.col > output_name" strings (plain SELECTs).
"""

from __future__ import annotations

import json
import sys
import textwrap

CASES: list[dict] = []


def _pairs(items):
    if items is None:
        return None
    out = []
    for s in items:
        a, b = (x.strip() for x in s.split(">"))
        out.append([a.lower(), b.lower()])
    return out


def C(cid, dialect, sql, sources, targets, columns, note, result=None, **extra):
    case = {
        "id": f"heldout:{cid}",
        "origin": "heldout",
        "dialect": dialect,
        "sql": textwrap.dedent(sql).strip("\n"),
        "expected": {
            "sources": None if sources is None else [s.lower() for s in sources],
            "targets": None if targets is None else [t.lower() for t in targets],
            "columns": _pairs(columns),
        },
        "note": note,
    }
    if result is not None:
        case["result_columns"] = _pairs(result)
    case.update(extra)
    assert case["id"] not in {c["id"] for c in CASES}, case["id"]
    CASES.append(case)


# =====================================================================================
# Snowflake
# =====================================================================================
C(
    "sf_copy_into_from_stage_path",
    "snowflake",
    """
    COPY INTO raw.orders
    FROM @raw.s3_stage/orders/2024/
    FILE_FORMAT = (TYPE = 'CSV' SKIP_HEADER = 1)
    ON_ERROR = 'CONTINUE';
""",
    ["@raw.s3_stage/orders/2024"],
    ["raw.orders"],
    None,
    "COPY INTO table FROM @stage/path: the stage location (path kept, trailing / dropped) is the source dataset",
)

C(
    "sf_copy_into_transform_select",
    "snowflake",
    """
    COPY INTO analytics.events (event_id, event_ts, payload)
    FROM (SELECT $1:id::string, $1:ts::timestamp_ntz, $1 FROM @analytics.events_stage)
    FILE_FORMAT = (TYPE = JSON);
""",
    ["@analytics.events_stage"],
    ["analytics.events"],
    None,
    "COPY INTO with a transforming SELECT over a stage: stage is the source",
)

C(
    "sf_copy_unload_to_stage",
    "snowflake",
    """
    COPY INTO @exports.unload_stage/daily/orders_
    FROM (SELECT order_id, amount FROM prod.sales.orders WHERE order_date = CURRENT_DATE)
    FILE_FORMAT = (TYPE = PARQUET)
    HEADER = TRUE;
""",
    ["prod.sales.orders"],
    ["@exports.unload_stage/daily/orders_"],
    None,
    "COPY INTO @stage FROM (query) is an unload: table is the source, stage location the target",
)

C(
    "sf_merge_dedup_qualify_default_db",
    "snowflake",
    """
    MERGE INTO analytics.dim_customer AS tgt
    USING (
      SELECT customer_id, email, updated_at
      FROM staging.stg_customers
      QUALIFY ROW_NUMBER() OVER (PARTITION BY customer_id ORDER BY updated_at DESC) = 1
    ) AS src
    ON tgt.customer_id = src.customer_id
    WHEN MATCHED AND src.updated_at > tgt.updated_at THEN
      UPDATE SET tgt.email = src.email, tgt.updated_at = src.updated_at
    WHEN NOT MATCHED THEN
      INSERT (customer_id, email, updated_at) VALUES (src.customer_id, src.email, src.updated_at);
""",
    ["prod.staging.stg_customers"],
    ["prod.analytics.dim_customer"],
    [
        "prod.staging.stg_customers.email > prod.analytics.dim_customer.email",
        "prod.staging.stg_customers.updated_at > prod.analytics.dim_customer.updated_at",
        "prod.staging.stg_customers.customer_id > prod.analytics.dim_customer.customer_id",
    ],
    "MERGE upsert with a QUALIFY-deduplicated USING subquery; UPDATE SET and INSERT VALUES branches; "
    "schema.table qualified with default_db; target not a source",
    default_db="PROD",
)

C(
    "sf_ctas_dbt_cte_chain_star",
    "snowflake",
    """
    create or replace transient table ANALYTICS.MARTS.FCT_ORDERS as (
    with orders as (
        select * from ANALYTICS.STAGING.STG_ORDERS
    ),
    payments as (
        select order_id, sum(amount) as amount
        from ANALYTICS.STAGING.STG_PAYMENTS
        group by order_id
    ),
    final as (
        select o.order_id, o.customer_id, o.order_date, coalesce(p.amount, 0) as amount
        from orders o
        left join payments p on o.order_id = p.order_id
    )
    select * from final
    );
""",
    ["analytics.staging.stg_orders", "analytics.staging.stg_payments"],
    ["analytics.marts.fct_orders"],
    [
        "analytics.staging.stg_orders.order_id > analytics.marts.fct_orders.order_id",
        "analytics.staging.stg_orders.customer_id > analytics.marts.fct_orders.customer_id",
        "analytics.staging.stg_orders.order_date > analytics.marts.fct_orders.order_date",
        "analytics.staging.stg_payments.amount > analytics.marts.fct_orders.amount",
    ],
    "dbt-style CTAS: CTE chain, a `select *` CTE over an unknown-schema table referenced by alias "
    "columns downstream, final `select *` over a CTE with explicit columns",
)

C(
    "sf_view_dbt_staging_rename",
    "snowflake",
    """
    create or replace view ANALYTICS.DBT_STAGING.STG_ORDERS as (
        with source as (
            select * from RAW.JAFFLE_SHOP.ORDERS
        ),
        renamed as (
            select
                id as order_id,
                user_id as customer_id,
                order_date,
                status
            from source
        )
        select * from renamed
    );
""",
    ["raw.jaffle_shop.orders"],
    ["analytics.dbt_staging.stg_orders"],
    [
        "raw.jaffle_shop.orders.id > analytics.dbt_staging.stg_orders.order_id",
        "raw.jaffle_shop.orders.user_id > analytics.dbt_staging.stg_orders.customer_id",
        "raw.jaffle_shop.orders.order_date > analytics.dbt_staging.stg_orders.order_date",
        "raw.jaffle_shop.orders.status > analytics.dbt_staging.stg_orders.status",
    ],
    "dbt staging view: source CTE `select *`, renamed CTE with aliases, final `select *` expands to the "
    "renamed CTE's explicit columns",
)

C(
    "sf_dbt_incremental_temp_then_merge",
    "snowflake",
    """
    create or replace temporary table ANALYTICS.DBT.FCT_EVENTS__DBT_TMP as (
        select event_id, user_id, event_ts
        from RAW.APP.EVENTS
        where event_ts > (select max(event_ts) from ANALYTICS.DBT.FCT_EVENTS)
    );
    merge into ANALYTICS.DBT.FCT_EVENTS as DBT_INTERNAL_DEST
    using ANALYTICS.DBT.FCT_EVENTS__DBT_TMP as DBT_INTERNAL_SOURCE
    on (DBT_INTERNAL_SOURCE.event_id = DBT_INTERNAL_DEST.event_id)
    when matched then update set
        "EVENT_ID" = DBT_INTERNAL_SOURCE."EVENT_ID",
        "USER_ID" = DBT_INTERNAL_SOURCE."USER_ID",
        "EVENT_TS" = DBT_INTERNAL_SOURCE."EVENT_TS"
    when not matched then insert ("EVENT_ID", "USER_ID", "EVENT_TS")
    values ("EVENT_ID", "USER_ID", "EVENT_TS");
""",
    ["raw.app.events", "analytics.dbt.fct_events"],
    ["analytics.dbt.fct_events"],
    [
        "raw.app.events.event_id > analytics.dbt.fct_events.event_id",
        "raw.app.events.user_id > analytics.dbt.fct_events.user_id",
        "raw.app.events.event_ts > analytics.dbt.fct_events.event_ts",
    ],
    "dbt incremental on Snowflake: temporary __dbt_tmp table collapsed, MERGE column lineage stitched "
    "through it; fct_events is a source only because the temp query reads it in a scalar subquery",
)

C(
    "sf_view_lateral_flatten",
    "snowflake",
    """
    CREATE OR REPLACE VIEW ANALYTICS.MARTS.ORDER_ITEMS_V AS
    SELECT o.order_id,
           f.value:sku::string AS sku,
           f.value:qty::number AS qty
    FROM RAW.SHOP.ORDERS o,
         LATERAL FLATTEN(input => o.line_items) f;
""",
    ["raw.shop.orders"],
    ["analytics.marts.order_items_v"],
    [
        "raw.shop.orders.order_id > analytics.marts.order_items_v.order_id",
        "raw.shop.orders.line_items > analytics.marts.order_items_v.sku",
        "raw.shop.orders.line_items > analytics.marts.order_items_v.qty",
    ],
    "LATERAL FLATTEN: f.value traces to the flattened input column",
)

C(
    "sf_alter_table_swap",
    "snowflake",
    """
    ALTER TABLE analytics.fct_orders__dbt_backup SWAP WITH analytics.fct_orders;
""",
    ["analytics.fct_orders__dbt_backup", "analytics.fct_orders"],
    ["analytics.fct_orders__dbt_backup", "analytics.fct_orders"],
    None,
    "SWAP exchanges contents: data flows both ways, so each table is source and target "
    "(OpenLineage convention; sqllineage uses other->this only)",
)

C(
    "sf_zero_copy_clone",
    "snowflake",
    """
    CREATE OR REPLACE TABLE dev_db.analytics.orders CLONE prod_db.analytics.orders;
""",
    ["prod_db.analytics.orders"],
    ["dev_db.analytics.orders"],
    None,
    "CREATE TABLE ... CLONE copies the data: clone source is a source",
)

C(
    "sf_procedure_temp_table",
    "snowflake",
    """
    CREATE OR REPLACE PROCEDURE ANALYTICS.PUBLIC.LOAD_DAILY_SALES()
    RETURNS VARCHAR
    LANGUAGE SQL
    AS
    $$
    BEGIN
      CREATE OR REPLACE TEMPORARY TABLE tmp_sales AS
        SELECT store_id, sale_date, SUM(amount) AS total_amount
        FROM RAW.POS.SALES
        WHERE sale_date = CURRENT_DATE() - 1
        GROUP BY store_id, sale_date;
      DELETE FROM ANALYTICS.PUBLIC.DAILY_SALES WHERE sale_date = CURRENT_DATE() - 1;
      INSERT INTO ANALYTICS.PUBLIC.DAILY_SALES (store_id, sale_date, total_amount)
        SELECT store_id, sale_date, total_amount FROM tmp_sales;
      RETURN 'ok';
    END;
    $$;
""",
    ["raw.pos.sales"],
    ["analytics.public.daily_sales"],
    [
        "raw.pos.sales.store_id > analytics.public.daily_sales.store_id",
        "raw.pos.sales.sale_date > analytics.public.daily_sales.sale_date",
        "raw.pos.sales.amount > analytics.public.daily_sales.total_amount",
    ],
    "Snowflake Scripting procedure body in $$: temporary table collapsed, column lineage stitched",
)

C(
    "sf_execute_immediate_block",
    "snowflake",
    """
    EXECUTE IMMEDIATE $$
    DECLARE
      run_date DATE DEFAULT CURRENT_DATE();
    BEGIN
      INSERT INTO mart.kpi_daily (kpi_date, active_users)
      SELECT :run_date, COUNT(DISTINCT user_id) FROM raw.events WHERE event_date = :run_date;
    END;
    $$;
""",
    ["raw.events"],
    ["mart.kpi_daily"],
    ["raw.events.user_id > mart.kpi_daily.active_users"],
    "Snowflake Scripting anonymous block via EXECUTE IMMEDIATE $$...$$ with DECLARE and bind variables",
)

C(
    "sf_use_database_schema",
    "snowflake",
    """
    USE DATABASE SALES_DB;
    USE SCHEMA REPORTING;
    CREATE OR REPLACE TABLE REGION_TOTALS AS
    SELECT region, SUM(revenue) AS revenue FROM STAGING.ORDERS GROUP BY region;
""",
    ["sales_db.staging.orders"],
    ["sales_db.reporting.region_totals"],
    [
        "sales_db.staging.orders.region > sales_db.reporting.region_totals.region",
        "sales_db.staging.orders.revenue > sales_db.reporting.region_totals.revenue",
    ],
    "USE DATABASE / USE SCHEMA override the row's default db/schema for later statements",
    default_db="OTHER_DB",
    default_schema="PUBLIC",
)

C(
    "sf_select_star_exclude",
    "snowflake",
    """
    SELECT * EXCLUDE (ssn, dob) FROM hr.employees
""",
    ["hr.employees"],
    [],
    [],
    "SELECT * EXCLUDE with a schema: excluded columns get no lineage",
    result=[
        "hr.employees.emp_id > emp_id",
        "hr.employees.name > name",
        "hr.employees.dept_id > dept_id",
    ],
    schemas={
        "hr.employees": {"emp_id": None, "name": None, "ssn": None, "dob": None, "dept_id": None}
    },
)

C(
    "sf_insert_overwrite_positional",
    "snowflake",
    """
    INSERT OVERWRITE INTO mart.daily_active
    SELECT event_date, COUNT(DISTINCT user_id)
    FROM raw.events
    GROUP BY 1
""",
    ["raw.events"],
    ["mart.daily_active"],
    [
        "raw.events.event_date > mart.daily_active.activity_date",
        "raw.events.user_id > mart.daily_active.dau",
    ],
    "Snowflake INSERT OVERWRITE INTO without column list: positional mapping onto the target schema",
    schemas={
        "mart.daily_active": {"activity_date": "DATE", "dau": "NUMBER"},
        "raw.events": {"event_date": "DATE", "user_id": "VARCHAR"},
    },
)

C(
    "sf_insert_all_conditional",
    "snowflake",
    """
    INSERT ALL
      WHEN amount >= 1000 THEN INTO sales.big_orders (order_id, amount) VALUES (order_id, amount)
      ELSE INTO sales.small_orders (order_id, amount) VALUES (order_id, amount)
    SELECT order_id, amount FROM raw.orders;
""",
    ["raw.orders"],
    ["sales.big_orders", "sales.small_orders"],
    [
        "raw.orders.order_id > sales.big_orders.order_id",
        "raw.orders.amount > sales.big_orders.amount",
        "raw.orders.order_id > sales.small_orders.order_id",
        "raw.orders.amount > sales.small_orders.amount",
    ],
    "Snowflake conditional multi-table INSERT ALL: every INTO is a target",
)

C(
    "sf_update_from",
    "snowflake",
    """
    UPDATE analytics.accounts a
    SET tier = t.tier_name
    FROM analytics.tiers t
    WHERE a.balance BETWEEN t.min_balance AND t.max_balance;
""",
    ["analytics.tiers"],
    ["analytics.accounts"],
    ["analytics.tiers.tier_name > analytics.accounts.tier"],
    "UPDATE ... FROM with aliases: FROM table is the source, target is not a source",
)

C(
    "sf_show_tables",
    "snowflake",
    "SHOW TABLES IN SCHEMA analytics.public;",
    [],
    [],
    [],
    "SHOW: no lineage, no error",
)

C(
    "sf_alter_session_use_warehouse",
    "snowflake",
    """
    ALTER SESSION SET QUERY_TAG = 'dbt_run';
    USE WAREHOUSE TRANSFORMING_WH;
    USE ROLE TRANSFORMER;
""",
    [],
    [],
    [],
    "ALTER SESSION / USE WAREHOUSE / USE ROLE: session statements, no lineage (ALTER SESSION is not a table DDL)",
)

C(
    "sf_quoted_mixed_case_insert",
    "snowflake",
    """
    INSERT INTO "Analytics"."Public"."OrderFacts" ("OrderId", "Total")
    SELECT "id", "total" FROM "Raw"."Orders" WHERE "status" = 'paid';
""",
    ["raw.orders"],
    ["analytics.public.orderfacts"],
    [
        "raw.orders.id > analytics.public.orderfacts.orderid",
        "raw.orders.total > analytics.public.orderfacts.total",
    ],
    "quoted mixed-case identifiers keep their case (compared lowercased by the scorer)",
)

C(
    "sf_dynamic_table",
    "snowflake",
    """
    CREATE OR REPLACE DYNAMIC TABLE mart.customer_orders
      TARGET_LAG = '1 hour'
      WAREHOUSE = transform_wh
    AS
    SELECT c.customer_id, c.name, COUNT(o.order_id) AS order_count
    FROM raw.customers c
    LEFT JOIN raw.orders o ON o.customer_id = c.customer_id
    GROUP BY c.customer_id, c.name;
""",
    ["raw.customers", "raw.orders"],
    ["mart.customer_orders"],
    [
        "raw.customers.customer_id > mart.customer_orders.customer_id",
        "raw.customers.name > mart.customer_orders.name",
        "raw.orders.order_id > mart.customer_orders.order_count",
    ],
    "CREATE DYNAMIC TABLE ... AS SELECT behaves like CTAS; COUNT(col) is a DIRECT aggregation of col",
)

C(
    "sf_grant",
    "snowflake",
    "GRANT SELECT ON ALL TABLES IN SCHEMA analytics.marts TO ROLE reporter;",
    [],
    [],
    [],
    "GRANT: access control, no data flow, no error",
)

C(
    "sf_create_temp_view_then_ctas",
    "snowflake",
    """
    CREATE OR REPLACE TEMPORARY VIEW recent_signups AS
      SELECT user_id, signup_ts, plan FROM raw.app.users WHERE signup_ts >= DATEADD(day, -30, CURRENT_DATE);
    CREATE OR REPLACE TABLE mart.app.signups_by_plan AS
      SELECT plan, COUNT(user_id) AS signups FROM recent_signups GROUP BY plan;
""",
    ["raw.app.users"],
    ["mart.app.signups_by_plan"],
    [
        "raw.app.users.plan > mart.app.signups_by_plan.plan",
        "raw.app.users.user_id > mart.app.signups_by_plan.signups",
    ],
    "temporary view traced through and removed; column lineage stitched",
)

# =====================================================================================
# T-SQL
# =====================================================================================
C(
    "tsql_proc_select_into_temp_no_semicolons",
    "tsql",
    """
    CREATE PROCEDURE dbo.usp_LoadCustomerSummary
    AS
    BEGIN
        SET NOCOUNT ON

        SELECT c.CustomerID, c.Region, SUM(o.TotalDue) AS TotalDue
        INTO #cust
        FROM Sales.Customer c
        JOIN Sales.SalesOrderHeader o ON o.CustomerID = c.CustomerID
        GROUP BY c.CustomerID, c.Region

        TRUNCATE TABLE dbo.CustomerSummary

        INSERT INTO dbo.CustomerSummary (CustomerID, Region, TotalDue)
        SELECT CustomerID, Region, TotalDue FROM #cust

        DROP TABLE #cust
    END
""",
    ["sales.customer", "sales.salesorderheader"],
    ["dbo.customersummary"],
    [
        "sales.customer.customerid > dbo.customersummary.customerid",
        "sales.customer.region > dbo.customersummary.region",
        "sales.salesorderheader.totaldue > dbo.customersummary.totaldue",
    ],
    "T-SQL procedure, statements without semicolons: SELECT INTO #temp collapsed, lineage stitched, "
    "TRUNCATE target is a target",
)

C(
    "tsql_use_go_batch",
    "tsql",
    """
    USE [Warehouse]
    GO
    INSERT INTO [dbo].[FactSales] ([DateKey], [ProductKey], [SalesAmount])
    SELECT d.DateKey, p.ProductKey, s.Amount
    FROM [staging].[Sales] s
    INNER JOIN [dbo].[DimDate] d ON d.FullDate = s.SaleDate
    INNER JOIN [dbo].[DimProduct] p ON p.ProductCode = s.ProductCode
    GO
""",
    ["warehouse.staging.sales", "warehouse.dbo.dimdate", "warehouse.dbo.dimproduct"],
    ["warehouse.dbo.factsales"],
    [
        "warehouse.dbo.dimdate.datekey > warehouse.dbo.factsales.datekey",
        "warehouse.dbo.dimproduct.productkey > warehouse.dbo.factsales.productkey",
        "warehouse.staging.sales.amount > warehouse.dbo.factsales.salesamount",
    ],
    "USE [db] + GO batches: USE changes the default database; brackets removed",
    default_db="master",
    default_schema="dbo",
)

C(
    "tsql_update_join_alias",
    "tsql",
    """
    UPDATE t
    SET t.Status = s.Status,
        t.ModifiedDate = GETDATE()
    FROM dbo.Orders AS t
    INNER JOIN staging.OrderStatus AS s ON s.OrderID = t.OrderID
    WHERE s.BatchID = 42;
""",
    ["staging.orderstatus"],
    ["dbo.orders"],
    ["staging.orderstatus.status > dbo.orders.status"],
    "T-SQL UPDATE alias FROM ... JOIN: alias resolves to dbo.Orders (target, not a source)",
)

C(
    "tsql_merge_full",
    "tsql",
    """
    MERGE dbo.DimCustomer AS target
    USING (SELECT CustomerID, FirstName, LastName, Email FROM staging.Customer) AS source
    ON target.CustomerID = source.CustomerID
    WHEN MATCHED THEN
        UPDATE SET target.FirstName = source.FirstName,
                   target.LastName = source.LastName,
                   target.Email = source.Email
    WHEN NOT MATCHED BY TARGET THEN
        INSERT (CustomerID, FirstName, LastName, Email)
        VALUES (source.CustomerID, source.FirstName, source.LastName, source.Email)
    WHEN NOT MATCHED BY SOURCE THEN
        DELETE;
""",
    ["staging.customer"],
    ["dbo.dimcustomer"],
    [
        "staging.customer.customerid > dbo.dimcustomer.customerid",
        "staging.customer.firstname > dbo.dimcustomer.firstname",
        "staging.customer.lastname > dbo.dimcustomer.lastname",
        "staging.customer.email > dbo.dimcustomer.email",
    ],
    "T-SQL MERGE without INTO, with BY TARGET / BY SOURCE clauses",
)

C(
    "tsql_select_into_permanent",
    "tsql",
    """
    SELECT ProductID, Name, ListPrice * 0.9 AS SalePrice
    INTO dbo.ProductSale
    FROM Production.Product
    WHERE ListPrice > 100
""",
    ["production.product"],
    ["dbo.productsale"],
    [
        "production.product.productid > dbo.productsale.productid",
        "production.product.name > dbo.productsale.name",
        "production.product.listprice > dbo.productsale.saleprice",
    ],
    "SELECT ... INTO a permanent table is a CTAS",
)

C(
    "tsql_delete_join",
    "tsql",
    """
    DELETE o
    FROM dbo.Orders o
    INNER JOIN dbo.Customers c ON c.CustomerID = o.CustomerID
    WHERE c.IsDeleted = 1
""",
    ["dbo.customers"],
    ["dbo.orders"],
    [],
    "T-SQL DELETE alias FROM ... JOIN: alias resolves to the target; joined table is a source",
)

C(
    "tsql_global_temp_star",
    "tsql",
    """
    SELECT * INTO ##staging FROM dbo.Src WHERE Active = 1;
    INSERT INTO dbo.Dst SELECT * FROM ##staging;
    DROP TABLE ##staging;
""",
    ["dbo.src"],
    ["dbo.dst"],
    ["dbo.src.id > dbo.dst.id", "dbo.src.val > dbo.dst.val", "dbo.src.active > dbo.dst.active"],
    "global ##temp table collapsed; star expanded from the schema and stitched",
    schemas={
        "dbo.Src": {"Id": "INT", "Val": "NVARCHAR", "Active": "BIT"},
        "dbo.Dst": {"Id": "INT", "Val": "NVARCHAR", "Active": "BIT"},
    },
)

C(
    "tsql_table_variable",
    "tsql",
    """
    DECLARE @ids TABLE (id INT)
    INSERT INTO @ids SELECT CustomerID FROM dbo.Customers WHERE Active = 1
    UPDATE dbo.Accounts SET Flag = 1 WHERE CustomerID IN (SELECT id FROM @ids)
""",
    ["dbo.customers"],
    ["dbo.accounts"],
    [],
    "table variable @ids is a temporary object: collapsed; constant SET gives no column lineage",
)

C(
    "tsql_cte_insert_rownumber",
    "tsql",
    """
    WITH ranked AS (
      SELECT EmployeeID, DepartmentID, Salary,
             ROW_NUMBER() OVER (PARTITION BY DepartmentID ORDER BY Salary DESC) AS rn
      FROM HR.Employee
    )
    INSERT INTO HR.TopEarners (EmployeeID, DepartmentID, Salary)
    SELECT EmployeeID, DepartmentID, Salary FROM ranked WHERE rn = 1;
""",
    ["hr.employee"],
    ["hr.topearners"],
    [
        "hr.employee.employeeid > hr.topearners.employeeid",
        "hr.employee.departmentid > hr.topearners.departmentid",
        "hr.employee.salary > hr.topearners.salary",
    ],
    "T-SQL WITH ... INSERT; ROW_NUMBER only filters (indirect)",
)

C(
    "tsql_view_schemabinding",
    "tsql",
    """
    CREATE VIEW dbo.vActiveProducts
    WITH SCHEMABINDING
    AS
    SELECT p.ProductID, p.Name, c.Name AS Category
    FROM dbo.Product p
    JOIN dbo.Category c ON c.CategoryID = p.CategoryID
    WHERE p.Discontinued = 0
""",
    ["dbo.product", "dbo.category"],
    ["dbo.vactiveproducts"],
    [
        "dbo.product.productid > dbo.vactiveproducts.productid",
        "dbo.product.name > dbo.vactiveproducts.name",
        "dbo.category.name > dbo.vactiveproducts.category",
    ],
    "CREATE VIEW WITH SCHEMABINDING; same column name from two aliases",
)

C(
    "tsql_proc_create_temp_transaction",
    "tsql",
    """
    CREATE PROCEDURE etl.LoadInventory @SnapshotDate DATE
    AS
    BEGIN
      CREATE TABLE #inv (ProductID INT, WarehouseID INT, Qty INT);
      INSERT INTO #inv (ProductID, WarehouseID, Qty)
      SELECT ProductID, WarehouseID, SUM(Quantity)
      FROM stg.InventoryMovements
      WHERE MovementDate <= @SnapshotDate
      GROUP BY ProductID, WarehouseID;
      BEGIN TRANSACTION;
      DELETE FROM dw.InventorySnapshot WHERE SnapshotDate = @SnapshotDate;
      INSERT INTO dw.InventorySnapshot (SnapshotDate, ProductID, WarehouseID, Qty)
      SELECT @SnapshotDate, ProductID, WarehouseID, Qty FROM #inv;
      COMMIT TRANSACTION;
    END
""",
    ["stg.inventorymovements"],
    ["dw.inventorysnapshot"],
    [
        "stg.inventorymovements.productid > dw.inventorysnapshot.productid",
        "stg.inventorymovements.warehouseid > dw.inventorysnapshot.warehouseid",
        "stg.inventorymovements.quantity > dw.inventorysnapshot.qty",
    ],
    "T-SQL proc: CREATE TABLE #tmp + INSERT #tmp, transaction statements; #tmp collapsed with stitching",
)

C(
    "tsql_exec_proc",
    "tsql",
    "EXEC dbo.usp_RefreshAll @RunDate = '2024-06-01';",
    [],
    [],
    [],
    "EXEC of a procedure: no visible lineage, no error",
)

C(
    "tsql_drop_if_exists_temp_pattern",
    "tsql",
    """
    IF OBJECT_ID('tempdb..#stage') IS NOT NULL DROP TABLE #stage;
    SELECT OrderID, CustomerID, OrderDate
    INTO #stage
    FROM Sales.Orders
    WHERE OrderDate >= DATEADD(day, -7, GETDATE());
    INSERT INTO Reporting.RecentOrders (OrderID, CustomerID, OrderDate)
    SELECT OrderID, CustomerID, OrderDate FROM #stage;
""",
    ["sales.orders"],
    ["reporting.recentorders"],
    [
        "sales.orders.orderid > reporting.recentorders.orderid",
        "sales.orders.customerid > reporting.recentorders.customerid",
        "sales.orders.orderdate > reporting.recentorders.orderdate",
    ],
    "IF OBJECT_ID(...) DROP TABLE #t guard, then SELECT INTO #t: #t collapsed",
)

C(
    "tsql_three_part_names",
    "tsql",
    """
    INSERT INTO Archive.dbo.Orders2019 (OrderID, Total)
    SELECT OrderID, Total FROM Sales.dbo.Orders WHERE YEAR(OrderDate) = 2019
""",
    ["sales.dbo.orders"],
    ["archive.dbo.orders2019"],
    [
        "sales.dbo.orders.orderid > archive.dbo.orders2019.orderid",
        "sales.dbo.orders.total > archive.dbo.orders2019.total",
    ],
    "cross-database three-part names",
)

C(
    "tsql_set_options_go",
    "tsql",
    """
    SET ANSI_NULLS ON
    GO
    SET QUOTED_IDENTIFIER ON
    GO
""",
    [],
    [],
    [],
    "SET options in GO batches: no lineage, no error",
)

C(
    "tsql_cte_update_join",
    "tsql",
    """
    WITH latest AS (
      SELECT AccountID, MAX(TxnDate) AS LastTxn FROM dbo.Transactions GROUP BY AccountID
    )
    UPDATE a
    SET a.LastActivity = l.LastTxn
    FROM dbo.Accounts a
    JOIN latest l ON l.AccountID = a.AccountID;
""",
    ["dbo.transactions"],
    ["dbo.accounts"],
    ["dbo.transactions.txndate > dbo.accounts.lastactivity"],
    "T-SQL CTE feeding UPDATE ... FROM JOIN; CTE name is not a table",
)

C(
    "tsql_select_top_result",
    "tsql",
    """
    SELECT TOP 100 p.Name AS ProductName, SUM(d.LineTotal) AS Revenue
    FROM Sales.SalesOrderDetail d
    JOIN Production.Product p ON p.ProductID = d.ProductID
    GROUP BY p.Name
    ORDER BY Revenue DESC
""",
    ["sales.salesorderdetail", "production.product"],
    [],
    [],
    "plain SELECT TOP: result-column lineage only",
    result=["production.product.name > productname", "sales.salesorderdetail.linetotal > revenue"],
)

C(
    "tsql_insert_exec_values_identity",
    "tsql",
    """
    SET IDENTITY_INSERT dbo.Lookup ON;
    INSERT INTO dbo.Lookup (Id, Code) VALUES (1, 'A'), (2, 'B');
    SET IDENTITY_INSERT dbo.Lookup OFF;
""",
    [],
    ["dbo.lookup"],
    [],
    "INSERT VALUES: target only, no sources, no column lineage",
)

# =====================================================================================
# BigQuery
# =====================================================================================
C(
    "bq_ctas_partitioned_backticks",
    "bigquery",
    """
    CREATE OR REPLACE TABLE `acme-prod.analytics.daily_revenue`
    PARTITION BY order_date
    AS
    SELECT DATE(created_at) AS order_date,
           SUM(amount_usd) AS revenue,
           COUNT(DISTINCT customer_id) AS customers
    FROM `acme-prod.raw.orders`
    WHERE status != 'cancelled'
    GROUP BY 1
""",
    ["acme-prod.raw.orders"],
    ["acme-prod.analytics.daily_revenue"],
    [
        "acme-prod.raw.orders.created_at > acme-prod.analytics.daily_revenue.order_date",
        "acme-prod.raw.orders.amount_usd > acme-prod.analytics.daily_revenue.revenue",
        "acme-prod.raw.orders.customer_id > acme-prod.analytics.daily_revenue.customers",
    ],
    "BigQuery CTAS with PARTITION BY, whole-path backticks with a hyphenated project",
)

C(
    "bq_insert_default_project",
    "bigquery",
    """
    INSERT INTO analytics.user_events (user_id, event_name, event_ts)
    SELECT user_id, event_name, TIMESTAMP_MICROS(event_timestamp)
    FROM `acme-prod.raw_ga4.events_20240601`
""",
    ["acme-prod.raw_ga4.events_20240601"],
    ["acme-prod.analytics.user_events"],
    [
        "acme-prod.raw_ga4.events_20240601.user_id > acme-prod.analytics.user_events.user_id",
        "acme-prod.raw_ga4.events_20240601.event_name > acme-prod.analytics.user_events.event_name",
        "acme-prod.raw_ga4.events_20240601.event_timestamp > acme-prod.analytics.user_events.event_ts",
    ],
    "dataset.table qualified with default_db as the project",
    default_db="acme-prod",
)

C(
    "bq_select_unnest_struct",
    "bigquery",
    """
    SELECT o.order_id, item.sku, item.quantity
    FROM `acme-prod.raw.orders` AS o, UNNEST(o.items) AS item
""",
    ["acme-prod.raw.orders"],
    [],
    [],
    "UNNEST of an array of structs: item.field traces to the array column",
    result=[
        "acme-prod.raw.orders.order_id > order_id",
        "acme-prod.raw.orders.items > sku",
        "acme-prod.raw.orders.items > quantity",
    ],
)

C(
    "bq_script_temp_table_merge",
    "bigquery",
    """
    DECLARE run_date DATE DEFAULT DATE_SUB(CURRENT_DATE(), INTERVAL 1 DAY);
    CREATE TEMP TABLE new_users AS
    SELECT user_id, MIN(event_date) AS first_seen
    FROM `acme-prod.analytics.events`
    WHERE event_date = run_date
    GROUP BY user_id;
    MERGE `acme-prod.analytics.users` u
    USING new_users n
    ON u.user_id = n.user_id
    WHEN NOT MATCHED THEN
      INSERT (user_id, first_seen) VALUES (n.user_id, n.first_seen);
""",
    ["acme-prod.analytics.events"],
    ["acme-prod.analytics.users"],
    [
        "acme-prod.analytics.events.user_id > acme-prod.analytics.users.user_id",
        "acme-prod.analytics.events.event_date > acme-prod.analytics.users.first_seen",
    ],
    "BigQuery script: DECLARE, CREATE TEMP TABLE collapsed into MERGE with stitching",
)

C(
    "bq_begin_if_block",
    "bigquery",
    """
    BEGIN
      DECLARE cnt INT64;
      SET cnt = (SELECT COUNT(*) FROM `p.staging.orders`);
      IF cnt > 0 THEN
        INSERT INTO `p.warehouse.orders` SELECT * FROM `p.staging.orders`;
        TRUNCATE TABLE `p.staging.orders`;
      END IF;
    END;
""",
    ["p.staging.orders"],
    ["p.warehouse.orders", "p.staging.orders"],
    None,
    "BigQuery scripting BEGIN/IF block; TRUNCATE target is a target",
)

C(
    "bq_ctas_select_except",
    "bigquery",
    """
    CREATE TABLE `p.mart.customers_public` AS
    SELECT * EXCEPT (email, phone) FROM `p.crm.customers`
""",
    ["p.crm.customers"],
    ["p.mart.customers_public"],
    [
        "p.crm.customers.customer_id > p.mart.customers_public.customer_id",
        "p.crm.customers.name > p.mart.customers_public.name",
        "p.crm.customers.country > p.mart.customers_public.country",
    ],
    "SELECT * EXCEPT expanded from the schema",
    schemas={
        "p.crm.customers": {
            "customer_id": "INT64",
            "name": "STRING",
            "email": "STRING",
            "phone": "STRING",
            "country": "STRING",
        }
    },
)

C(
    "bq_view_struct_fields",
    "bigquery",
    """
    CREATE OR REPLACE VIEW `p.mart.sessions_flat` AS
    SELECT session_id, device.category AS device_category, geo.country AS country
    FROM `p.raw.sessions`
""",
    ["p.raw.sessions"],
    ["p.mart.sessions_flat"],
    [
        "p.raw.sessions.session_id > p.mart.sessions_flat.session_id",
        "p.raw.sessions.device > p.mart.sessions_flat.device_category",
        "p.raw.sessions.geo > p.mart.sessions_flat.country",
    ],
    "struct field access col.field: lineage to the top-level column (struct path is not a table alias)",
    schemas={
        "p.raw.sessions": {
            "session_id": "STRING",
            "device": "STRUCT<category STRING, os STRING>",
            "geo": "STRUCT<country STRING>",
        }
    },
)

C(
    "bq_load_data_files",
    "bigquery",
    """
    LOAD DATA INTO `p.raw.transactions`
    FROM FILES (
      format = 'PARQUET',
      uris = ['gs://acme-landing/transactions/dt=2024-06-01/*.parquet']
    )
""",
    ["gs://acme-landing/transactions"],
    ["p.raw.transactions"],
    None,
    "BigQuery LOAD DATA FROM FILES: the URI (cut at the key=value partition segment) is the source",
)

C(
    "bq_export_data",
    "bigquery",
    """
    EXPORT DATA OPTIONS (
      uri = 'gs://acme-exports/churn/*.csv',
      format = 'CSV',
      overwrite = true,
      header = true
    ) AS
    SELECT customer_id, churn_score FROM `p.ml.churn_scores` WHERE score_date = CURRENT_DATE()
""",
    ["p.ml.churn_scores"],
    ["gs://acme-exports/churn"],
    None,
    "BigQuery EXPORT DATA: the URI (cut at the glob) is the target dataset",
)

C(
    "bq_dbt_merge_backticked_parts",
    "bigquery",
    """
    merge into `p`.`mart`.`fct_sessions` as DBT_INTERNAL_DEST
    using (
      select session_id, user_id, started_at, pageviews
      from `p`.`mart`.`fct_sessions__dbt_tmp`
    ) as DBT_INTERNAL_SOURCE
    on DBT_INTERNAL_SOURCE.session_id = DBT_INTERNAL_DEST.session_id
    when matched then update set
      `user_id` = DBT_INTERNAL_SOURCE.`user_id`,
      `started_at` = DBT_INTERNAL_SOURCE.`started_at`,
      `pageviews` = DBT_INTERNAL_SOURCE.`pageviews`
    when not matched then insert
      (`session_id`, `user_id`, `started_at`, `pageviews`)
    values
      (`session_id`, `user_id`, `started_at`, `pageviews`)
""",
    ["p.mart.fct_sessions__dbt_tmp"],
    ["p.mart.fct_sessions"],
    [
        "p.mart.fct_sessions__dbt_tmp.session_id > p.mart.fct_sessions.session_id",
        "p.mart.fct_sessions__dbt_tmp.user_id > p.mart.fct_sessions.user_id",
        "p.mart.fct_sessions__dbt_tmp.started_at > p.mart.fct_sessions.started_at",
        "p.mart.fct_sessions__dbt_tmp.pageviews > p.mart.fct_sessions.pageviews",
    ],
    "dbt BigQuery MERGE: per-part backticks; unqualified INSERT VALUES columns refer to the USING source",
)

C(
    "bq_view_qualify",
    "bigquery",
    """
    CREATE VIEW `p.mart.latest_address` AS
    SELECT customer_id, address, city
    FROM `p.crm.addresses`
    QUALIFY ROW_NUMBER() OVER (PARTITION BY customer_id ORDER BY updated_at DESC) = 1
""",
    ["p.crm.addresses"],
    ["p.mart.latest_address"],
    [
        "p.crm.addresses.customer_id > p.mart.latest_address.customer_id",
        "p.crm.addresses.address > p.mart.latest_address.address",
        "p.crm.addresses.city > p.mart.latest_address.city",
    ],
    "QUALIFY columns are filters only (indirect)",
)

C(
    "bq_insert_cte_twice_union",
    "bigquery",
    """
    INSERT INTO `p.mart.channel_daily` (day, channel, sessions)
    WITH s AS (
      SELECT DATE(ts) AS day, source, medium FROM `p.raw.web_sessions`
    )
    SELECT day, 'organic', COUNT(*) FROM s WHERE medium = 'organic' GROUP BY day
    UNION ALL
    SELECT day, source, COUNT(*) FROM s WHERE medium = 'cpc' GROUP BY day, source
""",
    ["p.raw.web_sessions"],
    ["p.mart.channel_daily"],
    [
        "p.raw.web_sessions.ts > p.mart.channel_daily.day",
        "p.raw.web_sessions.source > p.mart.channel_daily.channel",
    ],
    "CTE referenced twice across UNION ALL branches; constants and COUNT(*) give no lineage",
)

C(
    "bq_delete_in_subquery",
    "bigquery",
    """
    DELETE FROM `p.mart.users`
    WHERE user_id IN (SELECT user_id FROM `p.gdpr.deletion_requests`)
""",
    ["p.gdpr.deletion_requests"],
    ["p.mart.users"],
    [],
    "DELETE with IN (subquery): target is a target, subquery table a source",
)

C(
    "bq_procedure",
    "bigquery",
    """
    CREATE OR REPLACE PROCEDURE `p.ops.refresh_kpis`(run_date DATE)
    BEGIN
      DELETE FROM `p.mart.kpis` WHERE kpi_date = run_date;
      INSERT INTO `p.mart.kpis` (kpi_date, orders, revenue)
      SELECT run_date, COUNT(*), SUM(total)
      FROM `p.raw.orders`
      WHERE DATE(created_at) = run_date;
    END;
""",
    ["p.raw.orders"],
    ["p.mart.kpis"],
    ["p.raw.orders.total > p.mart.kpis.revenue"],
    "BigQuery CREATE PROCEDURE body: statements inside are the lineage",
)

C(
    "bq_view_dbt_options",
    "bigquery",
    """
    create or replace view `acme-prod`.`dbt_marts`.`customer_ltv`
    OPTIONS()
    as (
      with orders as (select customer_id, amount from `acme-prod`.`dbt_staging`.`stg_orders`),
      ltv as (select customer_id, sum(amount) as lifetime_value from orders group by 1)
      select c.customer_id, c.full_name, coalesce(l.lifetime_value, 0) as lifetime_value
      from `acme-prod`.`dbt_staging`.`stg_customers` c
      left join ltv l using (customer_id)
    );
""",
    ["acme-prod.dbt_staging.stg_orders", "acme-prod.dbt_staging.stg_customers"],
    ["acme-prod.dbt_marts.customer_ltv"],
    [
        "acme-prod.dbt_staging.stg_customers.customer_id > acme-prod.dbt_marts.customer_ltv.customer_id",
        "acme-prod.dbt_staging.stg_customers.full_name > acme-prod.dbt_marts.customer_ltv.full_name",
        "acme-prod.dbt_staging.stg_orders.amount > acme-prod.dbt_marts.customer_ltv.lifetime_value",
    ],
    "dbt BigQuery view with OPTIONS() and a parenthesized CTE query",
)

# =====================================================================================
# Databricks
# =====================================================================================
_cust = {"customer_id": "BIGINT", "name": "STRING", "email": "STRING"}
C(
    "dbx_merge_update_set_star_insert_star",
    "databricks",
    """
    MERGE INTO main.silver.customers AS t
    USING main.bronze.customers_updates AS s
    ON t.customer_id = s.customer_id
    WHEN MATCHED THEN UPDATE SET *
    WHEN NOT MATCHED THEN INSERT *
""",
    ["main.bronze.customers_updates"],
    ["main.silver.customers"],
    [
        "main.bronze.customers_updates.customer_id > main.silver.customers.customer_id",
        "main.bronze.customers_updates.name > main.silver.customers.name",
        "main.bronze.customers_updates.email > main.silver.customers.email",
    ],
    "Databricks MERGE UPDATE SET * / INSERT *: columns matched by name using the schemas",
    schemas={"main.silver.customers": _cust, "main.bronze.customers_updates": _cust},
)

C(
    "dbx_insert_overwrite_static_partition",
    "databricks",
    """
    INSERT OVERWRITE TABLE main.gold.sales_by_day PARTITION (ds = '2024-06-01')
    SELECT store_id, SUM(amount) AS total
    FROM main.silver.sales
    WHERE ds = '2024-06-01'
    GROUP BY store_id
""",
    ["main.silver.sales"],
    ["main.gold.sales_by_day"],
    [
        "main.silver.sales.store_id > main.gold.sales_by_day.store_id",
        "main.silver.sales.amount > main.gold.sales_by_day.total",
    ],
    "INSERT OVERWRITE with a static partition: SELECT maps positionally onto the non-partition columns",
    schemas={"main.gold.sales_by_day": {"store_id": "INT", "total": "DECIMAL", "ds": "STRING"}},
)

C(
    "dbx_insert_overwrite_dynamic_partition",
    "databricks",
    """
    INSERT OVERWRITE TABLE main.gold.events_daily PARTITION (event_date)
    SELECT user_id, COUNT(*) AS n_events, event_date
    FROM main.silver.events
    GROUP BY user_id, event_date
""",
    ["main.silver.events"],
    ["main.gold.events_daily"],
    [
        "main.silver.events.user_id > main.gold.events_daily.user_id",
        "main.silver.events.event_date > main.gold.events_daily.event_date",
    ],
    "INSERT OVERWRITE with a dynamic partition column taken from the last SELECT column",
    schemas={
        "main.gold.events_daily": {"user_id": "BIGINT", "n_events": "BIGINT", "event_date": "DATE"}
    },
)

C(
    "dbx_copy_into_s3",
    "databricks",
    """
    COPY INTO main.bronze.raw_clicks
    FROM 's3://acme-lake/clicks/'
    FILEFORMAT = JSON
    COPY_OPTIONS ('mergeSchema' = 'true')
""",
    ["s3://acme-lake/clicks"],
    ["main.bronze.raw_clicks"],
    None,
    "Databricks COPY INTO from a cloud path: the path is the source dataset",
)

C(
    "dbx_materialized_view",
    "databricks",
    """
    CREATE MATERIALIZED VIEW main.gold.revenue_mv AS
    SELECT region, SUM(amount) AS revenue
    FROM main.silver.orders
    GROUP BY region
""",
    ["main.silver.orders"],
    ["main.gold.revenue_mv"],
    [
        "main.silver.orders.region > main.gold.revenue_mv.region",
        "main.silver.orders.amount > main.gold.revenue_mv.revenue",
    ],
    "CREATE MATERIALIZED VIEW",
)

C(
    "dbx_ctas_lateral_view_explode",
    "databricks",
    """
    CREATE OR REPLACE TABLE main.silver.order_tags AS
    SELECT order_id, tag
    FROM main.bronze.orders
    LATERAL VIEW explode(tags) t AS tag
""",
    ["main.bronze.orders"],
    ["main.silver.order_tags"],
    [
        "main.bronze.orders.order_id > main.silver.order_tags.order_id",
        "main.bronze.orders.tags > main.silver.order_tags.tag",
    ],
    "LATERAL VIEW explode: the generated column traces to the exploded column",
)

C(
    "dbx_temp_view_then_insert",
    "databricks",
    """
    CREATE OR REPLACE TEMP VIEW recent AS
    SELECT * FROM main.bronze.events WHERE event_ts > current_date() - INTERVAL 7 DAYS;
    INSERT INTO main.silver.recent_events
    SELECT event_id, user_id, event_ts FROM recent;
""",
    ["main.bronze.events"],
    ["main.silver.recent_events"],
    [
        "main.bronze.events.event_id > main.silver.recent_events.event_id",
        "main.bronze.events.user_id > main.silver.recent_events.user_id",
        "main.bronze.events.event_ts > main.silver.recent_events.event_ts",
    ],
    "temp view with `*` (no schema) collapsed; named columns stitched to the base table",
)

C(
    "dbx_deep_clone",
    "databricks",
    """
    CREATE OR REPLACE TABLE main.dev.orders DEEP CLONE main.prod.orders
""",
    ["main.prod.orders"],
    ["main.dev.orders"],
    None,
    "DEEP CLONE copies data: source -> target",
)

C(
    "dbx_use_catalog_schema",
    "databricks",
    """
    USE CATALOG main;
    USE SCHEMA finance;
    INSERT INTO ledger_summary
    SELECT account_id, SUM(amount) AS balance FROM ledger GROUP BY account_id;
""",
    ["main.finance.ledger"],
    ["main.finance.ledger_summary"],
    [
        "main.finance.ledger.account_id > main.finance.ledger_summary.account_id",
        "main.finance.ledger.amount > main.finance.ledger_summary.balance",
    ],
    "USE CATALOG + USE SCHEMA qualify later unqualified names (three-level Unity Catalog)",
    default_db="hive_metastore",
    default_schema="default",
)

C(
    "dbx_ctas_from_parquet_path",
    "databricks",
    """
    CREATE TABLE main.bronze.landing AS
    SELECT * FROM parquet.`s3://acme-lake/landing/2024/`
""",
    ["s3://acme-lake/landing/2024"],
    ["main.bronze.landing"],
    None,
    "format.`path` file source in FROM",
)

C(
    "dbx_select_struct_explode",
    "databricks",
    """
    SELECT id, payload.user.name AS user_name, explode(payload.items) AS item
    FROM main.bronze.raw_events
""",
    ["main.bronze.raw_events"],
    [],
    [],
    "nested struct access and explode() in the select list trace to the top-level column",
    result=[
        "main.bronze.raw_events.id > id",
        "main.bronze.raw_events.payload > user_name",
        "main.bronze.raw_events.payload > item",
    ],
    schemas={
        "main.bronze.raw_events": {
            "id": "BIGINT",
            "payload": "STRUCT<user: STRUCT<name: STRING>, items: ARRAY<STRING>>",
        }
    },
)

C(
    "dbx_insert_replace_where",
    "databricks",
    """
    INSERT INTO main.gold.daily_metrics REPLACE WHERE ds = '2024-06-01'
    SELECT ds, metric, value FROM main.silver.daily_metrics_stage WHERE ds = '2024-06-01'
""",
    ["main.silver.daily_metrics_stage"],
    ["main.gold.daily_metrics"],
    [
        "main.silver.daily_metrics_stage.ds > main.gold.daily_metrics.ds",
        "main.silver.daily_metrics_stage.metric > main.gold.daily_metrics.metric",
        "main.silver.daily_metrics_stage.value > main.gold.daily_metrics.value",
    ],
    "Databricks INSERT INTO ... REPLACE WHERE (selective overwrite)",
)

C(
    "dbx_update_constant",
    "databricks",
    """
    UPDATE main.silver.orders SET status = 'closed' WHERE order_date < '2020-01-01'
""",
    [],
    ["main.silver.orders"],
    [],
    "UPDATE without FROM: target only (not a source); constant SET has no column lineage",
)

C(
    "dbx_dbt_incremental_insert_overwrite",
    "databricks",
    """
    create or replace temporary view fct_orders__dbt_tmp as
    select order_id, customer_id, amount, order_date
    from main.staging.stg_orders
    where order_date >= date_sub(current_date(), 3);
    insert overwrite table main.marts.fct_orders
    partition (order_date)
    select order_id, customer_id, amount, order_date from fct_orders__dbt_tmp;
""",
    ["main.staging.stg_orders"],
    ["main.marts.fct_orders"],
    [
        "main.staging.stg_orders.order_id > main.marts.fct_orders.order_id",
        "main.staging.stg_orders.customer_id > main.marts.fct_orders.customer_id",
        "main.staging.stg_orders.amount > main.marts.fct_orders.amount",
        "main.staging.stg_orders.order_date > main.marts.fct_orders.order_date",
    ],
    "dbt-spark insert_overwrite incremental: temporary view collapsed, dynamic partition",
)

C(
    "dbx_show_describe",
    "databricks",
    """
    SHOW PARTITIONS main.silver.events;
    DESCRIBE HISTORY main.silver.events;
""",
    [],
    [],
    [],
    "SHOW PARTITIONS / DESCRIBE HISTORY: no lineage, no error",
)

# =====================================================================================
# Spark
# =====================================================================================
C(
    "spark_cte_self_join_positional",
    "spark",
    """
    WITH daily AS (
      SELECT user_id, to_date(ts) AS d, count(*) AS n
      FROM logs.page_views
      GROUP BY user_id, to_date(ts)
    )
    INSERT INTO TABLE analytics.retention
    SELECT a.user_id, a.d, b.d
    FROM daily a
    JOIN daily b ON a.user_id = b.user_id AND b.d = date_add(a.d, 7)
""",
    ["logs.page_views"],
    ["analytics.retention"],
    [
        "logs.page_views.user_id > analytics.retention.user_id",
        "logs.page_views.ts > analytics.retention.first_day",
        "logs.page_views.ts > analytics.retention.return_day",
    ],
    "CTE referenced twice (self-join), positional INSERT onto the target schema",
    schemas={
        "analytics.retention": {"user_id": "BIGINT", "first_day": "DATE", "return_day": "DATE"}
    },
)

C(
    "spark_cache_table_as_select",
    "spark",
    """
    CACHE TABLE hot_orders AS SELECT order_id, amount FROM sales.orders WHERE dt = '2024-06-01';
    INSERT OVERWRITE TABLE sales.hot_orders_snapshot SELECT order_id, amount FROM hot_orders;
""",
    ["sales.orders"],
    ["sales.hot_orders_snapshot"],
    [
        "sales.orders.order_id > sales.hot_orders_snapshot.order_id",
        "sales.orders.amount > sales.hot_orders_snapshot.amount",
    ],
    "CACHE TABLE x AS SELECT creates a temporary view: traced through and removed",
)

C(
    "spark_insert_overwrite_directory",
    "spark",
    """
    INSERT OVERWRITE DIRECTORY 's3://acme-exports/orders/'
    USING parquet
    SELECT * FROM sales.orders
""",
    ["sales.orders"],
    ["s3://acme-exports/orders"],
    None,
    "INSERT OVERWRITE DIRECTORY: the location is the target dataset",
)

C(
    "spark_ctas_window_functions",
    "spark",
    """
    CREATE TABLE analytics.sessions_ranked USING delta AS
    SELECT session_id,
           user_id,
           lag(session_start) OVER (PARTITION BY user_id ORDER BY session_start) AS prev_start,
           sum(duration) OVER (PARTITION BY user_id) AS user_total,
           row_number() OVER (PARTITION BY user_id ORDER BY session_start) AS rn
    FROM analytics.sessions
""",
    ["analytics.sessions"],
    ["analytics.sessions_ranked"],
    [
        "analytics.sessions.session_id > analytics.sessions_ranked.session_id",
        "analytics.sessions.user_id > analytics.sessions_ranked.user_id",
        "analytics.sessions.session_start > analytics.sessions_ranked.prev_start",
        "analytics.sessions.duration > analytics.sessions_ranked.user_total",
    ],
    "window functions: argument columns DIRECT, PARTITION BY / ORDER BY INDIRECT; row_number has none",
)

C(
    "spark_insert_except",
    "spark",
    """
    INSERT INTO crm.churned_customers
    SELECT customer_id FROM crm.customers_2023
    EXCEPT
    SELECT customer_id FROM crm.customers_2024
""",
    ["crm.customers_2023", "crm.customers_2024"],
    ["crm.churned_customers"],
    ["crm.customers_2023.customer_id > crm.churned_customers.customer_id"],
    "EXCEPT: output values come from the left branch; the right branch only filters (INDIRECT)",
)

C(
    "spark_insert_intersect",
    "spark",
    """
    INSERT INTO crm.loyal_customers
    SELECT customer_id FROM crm.customers_2023
    INTERSECT
    SELECT customer_id FROM crm.customers_2024
""",
    ["crm.customers_2023", "crm.customers_2024"],
    ["crm.loyal_customers"],
    [
        "crm.customers_2023.customer_id > crm.loyal_customers.customer_id",
        "crm.customers_2024.customer_id > crm.loyal_customers.customer_id",
    ],
    "INTERSECT: both branches carry the output value",
)

C(
    "spark_scalar_subquery_select_list",
    "spark",
    """
    INSERT OVERWRITE TABLE mart.customer_last_order
    SELECT c.customer_id,
           (SELECT max(o.order_ts) FROM sales.orders o WHERE o.customer_id = c.customer_id) AS last_order_ts
    FROM crm.customers c
""",
    ["crm.customers", "sales.orders"],
    ["mart.customer_last_order"],
    [
        "crm.customers.customer_id > mart.customer_last_order.customer_id",
        "sales.orders.order_ts > mart.customer_last_order.last_order_ts",
    ],
    "correlated scalar subquery in the select list",
)

C(
    "spark_set_config",
    "spark",
    "SET spark.sql.shuffle.partitions = 200",
    [],
    [],
    [],
    "SET: no lineage, no error",
)

C(
    "spark_insert_column_list_reordered",
    "spark",
    """
    INSERT INTO sales.order_totals (total, order_id)
    SELECT sum(amount), order_id FROM sales.order_lines GROUP BY order_id
""",
    ["sales.order_lines"],
    ["sales.order_totals"],
    [
        "sales.order_lines.amount > sales.order_totals.total",
        "sales.order_lines.order_id > sales.order_totals.order_id",
    ],
    "explicit INSERT column list in a different order than the table",
)

C(
    "spark_select_from_json_path",
    "spark",
    """
    SELECT get_json_object(value, '$.user') AS user_id FROM text.`/mnt/raw/events/2024/06/`
""",
    ["/mnt/raw/events/2024/06"],
    [],
    None,
    "format.`path` in FROM of a plain SELECT: the path is a source dataset",
)

C(
    "spark_temp_view_union_insert",
    "spark",
    """
    CREATE TEMPORARY VIEW all_clicks AS
    SELECT click_id, ts FROM web.clicks_desktop
    UNION ALL
    SELECT click_id, ts FROM web.clicks_mobile;
    INSERT INTO TABLE web.clicks_hourly
    SELECT date_trunc('hour', ts) AS hour, count(click_id) AS clicks FROM all_clicks GROUP BY 1;
""",
    ["web.clicks_desktop", "web.clicks_mobile"],
    ["web.clicks_hourly"],
    [
        "web.clicks_desktop.ts > web.clicks_hourly.hour",
        "web.clicks_mobile.ts > web.clicks_hourly.hour",
        "web.clicks_desktop.click_id > web.clicks_hourly.clicks",
        "web.clicks_mobile.click_id > web.clicks_hourly.clicks",
    ],
    "temporary view over UNION ALL collapsed; stitched lineage fans in from both branches",
)

C(
    "spark_drop_table_if_exists",
    "spark",
    "DROP TABLE IF EXISTS tmp.old_snapshot",
    [],
    ["tmp.old_snapshot"],
    [],
    "DROP: the dropped table is a target",
)

# =====================================================================================
# Hive
# =====================================================================================
C(
    "hive_multi_insert",
    "hive",
    """
    FROM raw.web_logs l
    INSERT OVERWRITE TABLE mart.page_hits PARTITION (dt = '2024-06-01')
      SELECT l.page, count(*) WHERE l.dt = '2024-06-01' GROUP BY l.page
    INSERT OVERWRITE TABLE mart.user_hits PARTITION (dt = '2024-06-01')
      SELECT l.user_id, count(*) WHERE l.dt = '2024-06-01' GROUP BY l.user_id
""",
    ["raw.web_logs"],
    ["mart.page_hits", "mart.user_hits"],
    ["raw.web_logs.page > mart.page_hits.page", "raw.web_logs.user_id > mart.user_hits.user_id"],
    "Hive multi-insert FROM src INSERT ... INSERT ...: two targets, positional per target",
    schemas={
        "mart.page_hits": {"page": "string", "hits": "bigint", "dt": "string"},
        "mart.user_hits": {"user_id": "string", "hits": "bigint", "dt": "string"},
    },
)

C(
    "hive_load_data_inpath",
    "hive",
    """
    LOAD DATA INPATH '/data/landing/orders/2024-06-01' OVERWRITE INTO TABLE raw.orders PARTITION (dt = '2024-06-01')
""",
    ["/data/landing/orders/2024-06-01"],
    ["raw.orders"],
    None,
    "LOAD DATA INPATH: the file location is the source dataset",
)

C(
    "hive_lateral_view_outer_struct",
    "hive",
    """
    INSERT OVERWRITE TABLE mart.order_items
    SELECT o.order_id, item.sku, item.qty
    FROM raw.orders o
    LATERAL VIEW OUTER explode(o.items) it AS item
""",
    ["raw.orders"],
    ["mart.order_items"],
    [
        "raw.orders.order_id > mart.order_items.order_id",
        "raw.orders.items > mart.order_items.sku",
        "raw.orders.items > mart.order_items.qty",
    ],
    "LATERAL VIEW OUTER explode of an array of structs; struct fields of the generated column",
    schemas={"mart.order_items": {"order_id": "string", "sku": "string", "qty": "int"}},
)

C(
    "hive_ctas_case",
    "hive",
    """
    CREATE TABLE mart.customer_segments STORED AS ORC AS
    SELECT customer_id,
           CASE WHEN lifetime_value > 1000 THEN 'gold'
                WHEN lifetime_value > 100 THEN 'silver'
                ELSE 'bronze' END AS segment,
           CASE WHEN region IS NULL THEN country ELSE region END AS geo
    FROM crm.customer_stats
""",
    ["crm.customer_stats"],
    ["mart.customer_segments"],
    [
        "crm.customer_stats.customer_id > mart.customer_segments.customer_id",
        "crm.customer_stats.lifetime_value > mart.customer_segments.segment",
        "crm.customer_stats.country > mart.customer_segments.geo",
        "crm.customer_stats.region > mart.customer_segments.geo",
    ],
    "CASE: where a branch carries a column, WHEN conditions are INDIRECT and THEN/ELSE columns "
    "DIRECT (geo); with constant branches only, the CASE is a value mapping of its conditions, "
    "DIRECT (segment; value-mapping rule, revised after PARSER_REVISION 5)",
)

C(
    "hive_alter_rename",
    "hive",
    "ALTER TABLE staging.orders_new RENAME TO staging.orders",
    ["staging.orders_new"],
    ["staging.orders"],
    None,
    "RENAME: old name -> new name lineage",
)

C(
    "hive_create_external_table",
    "hive",
    """
    CREATE EXTERNAL TABLE IF NOT EXISTS raw.clicks (click_id STRING, ts BIGINT)
    PARTITIONED BY (dt STRING)
    STORED AS PARQUET
    LOCATION 's3://acme/raw/clicks'
""",
    [],
    ["raw.clicks"],
    [],
    "DDL without data flow: CREATE TABLE names its table as a target; LOCATION is storage, not a data source",
)

C(
    "hive_describe_formatted",
    "hive",
    "DESCRIBE FORMATTED raw.clicks",
    [],
    [],
    [],
    "DESCRIBE: no lineage, no error",
)

C(
    "hive_union_subquery_insert",
    "hive",
    """
    INSERT INTO TABLE mart.all_events
    SELECT * FROM (
      SELECT event_id, 'web' AS channel, ts FROM raw.web_events
      UNION ALL
      SELECT event_id, 'app' AS channel, ts FROM raw.app_events
    ) u
""",
    ["raw.web_events", "raw.app_events"],
    ["mart.all_events"],
    [
        "raw.web_events.event_id > mart.all_events.event_id",
        "raw.app_events.event_id > mart.all_events.event_id",
        "raw.web_events.ts > mart.all_events.ts",
        "raw.app_events.ts > mart.all_events.ts",
    ],
    "star over a UNION ALL derived table: expands to the derived table's columns",
    schemas={"mart.all_events": {"event_id": "string", "channel": "string", "ts": "bigint"}},
)

C(
    "hive_msck_repair",
    "hive",
    "MSCK REPAIR TABLE raw.clicks",
    [],
    ["raw.clicks"],
    [],
    "MSCK REPAIR TABLE changes partition metadata: DDL on the table (target), no sources",
)

# =====================================================================================
# Postgres
# =====================================================================================
C(
    "pg_insert_on_conflict",
    "postgres",
    """
    INSERT INTO public.product_inventory (product_id, warehouse_id, qty)
    SELECT product_id, warehouse_id, sum(delta)
    FROM staging.inventory_events
    GROUP BY product_id, warehouse_id
    ON CONFLICT (product_id, warehouse_id) DO UPDATE SET qty = EXCLUDED.qty
""",
    ["staging.inventory_events"],
    ["public.product_inventory"],
    [
        "staging.inventory_events.product_id > public.product_inventory.product_id",
        "staging.inventory_events.warehouse_id > public.product_inventory.warehouse_id",
        "staging.inventory_events.delta > public.product_inventory.qty",
    ],
    "INSERT ... SELECT ... ON CONFLICT DO UPDATE: EXCLUDED is the proposed row, not a table",
)

C(
    "pg_update_from_default_schema",
    "postgres",
    """
    UPDATE orders o
    SET customer_name = c.full_name
    FROM customers c
    WHERE o.customer_id = c.id
      AND o.customer_name IS DISTINCT FROM c.full_name
""",
    ["shop.public.customers"],
    ["shop.public.orders"],
    ["shop.public.customers.full_name > shop.public.orders.customer_name"],
    "UPDATE ... FROM with default db/schema qualification",
    default_db="shop",
    default_schema="public",
)

C(
    "pg_delete_using",
    "postgres",
    """
    DELETE FROM events e USING bot_users b WHERE e.user_id = b.user_id
""",
    ["bot_users"],
    ["events"],
    [],
    "DELETE ... USING: USING table is a source",
)

C(
    "pg_materialized_view",
    "postgres",
    """
    CREATE MATERIALIZED VIEW reporting.monthly_revenue AS
    SELECT date_trunc('month', paid_at) AS month, sum(amount) AS revenue
    FROM billing.payments
    WHERE status = 'succeeded'
    GROUP BY 1
    WITH DATA
""",
    ["billing.payments"],
    ["reporting.monthly_revenue"],
    [
        "billing.payments.paid_at > reporting.monthly_revenue.month",
        "billing.payments.amount > reporting.monthly_revenue.revenue",
    ],
    "CREATE MATERIALIZED VIEW ... WITH DATA",
)

C(
    "pg_plpgsql_function_temp",
    "postgres",
    """
    CREATE OR REPLACE FUNCTION etl.refresh_daily_signups() RETURNS void AS $$
    BEGIN
      CREATE TEMP TABLE tmp_signups ON COMMIT DROP AS
        SELECT created_at::date AS signup_date,
               count(*) AS signups,
               count(*) FILTER (WHERE plan = 'pro') AS pro_signups
        FROM app.users
        GROUP BY 1;
      DELETE FROM reporting.daily_signups d USING tmp_signups t WHERE d.signup_date = t.signup_date;
      INSERT INTO reporting.daily_signups (signup_date, signups, pro_signups)
      SELECT signup_date, signups, pro_signups FROM tmp_signups;
    END;
    $$ LANGUAGE plpgsql;
""",
    ["app.users"],
    ["reporting.daily_signups"],
    ["app.users.created_at > reporting.daily_signups.signup_date"],
    "PL/pgSQL function body: TEMP table collapsed; count(*) FILTER (WHERE ...) has no direct column",
)

C(
    "pg_do_block",
    "postgres",
    """
    DO $$
    BEGIN
      INSERT INTO audit.table_counts (table_name, row_count, counted_at)
      SELECT 'orders', count(*), now() FROM public.orders;
    END $$;
""",
    ["public.orders"],
    ["audit.table_counts"],
    [],
    "PL/pgSQL DO block; count(*) and constants give no column lineage",
)

C(
    "pg_copy_from_file",
    "postgres",
    """
    COPY staging.customers (id, name, email)
    FROM '/var/lib/postgresql/import/customers.csv'
    WITH (FORMAT csv, HEADER true)
""",
    ["/var/lib/postgresql/import/customers.csv"],
    ["staging.customers"],
    None,
    "COPY table FROM file: the file is the source dataset",
)

C(
    "pg_copy_query_to_file",
    "postgres",
    """
    COPY (SELECT id, email FROM public.users WHERE active) TO '/exports/active_users.csv' WITH CSV HEADER
""",
    ["public.users"],
    ["/exports/active_users.csv"],
    None,
    "COPY (query) TO file: the file is the target dataset",
)

C(
    "pg_writable_cte_delete_returning",
    "postgres",
    """
    WITH moved AS (
      DELETE FROM queue.jobs
      WHERE finished_at < now() - interval '30 days'
      RETURNING id, payload, finished_at
    )
    INSERT INTO archive.jobs (id, payload, finished_at)
    SELECT id, payload, finished_at FROM moved
""",
    ["queue.jobs"],
    ["queue.jobs", "archive.jobs"],
    [
        "queue.jobs.id > archive.jobs.id",
        "queue.jobs.payload > archive.jobs.payload",
        "queue.jobs.finished_at > archive.jobs.finished_at",
    ],
    "data-modifying CTE: DELETE target is a target, and its RETURNING rows are read (source) by the INSERT",
)

C(
    "pg_view_quoted_nested_subqueries",
    "postgres",
    """
    CREATE OR REPLACE VIEW "Reporting"."TopCustomers" AS
    SELECT t."CustomerId", t.total
    FROM (
      SELECT "CustomerId", sum("Amount") AS total FROM "Sales"."Orders" GROUP BY "CustomerId"
    ) t
    WHERE t.total > (
      SELECT avg(x.s) FROM (SELECT sum("Amount") AS s FROM "Sales"."Orders" GROUP BY "CustomerId") x
    )
""",
    ["sales.orders"],
    ["reporting.topcustomers"],
    [
        "sales.orders.customerid > reporting.topcustomers.customerid",
        "sales.orders.amount > reporting.topcustomers.total",
    ],
    "quoted identifiers, nested derived tables; subquery in WHERE is a filter only",
)

C(
    "pg_select_into",
    "postgres",
    """
    SELECT order_id, total INTO orders_2023 FROM orders WHERE extract(year FROM created_at) = 2023
""",
    ["orders"],
    ["orders_2023"],
    ["orders.order_id > orders_2023.order_id", "orders.total > orders_2023.total"],
    "Postgres SELECT ... INTO new_table is a CTAS",
)

C(
    "pg_rename_keeps_schema",
    "postgres",
    "ALTER TABLE reporting.kpis_new RENAME TO kpis",
    ["reporting.kpis_new"],
    ["reporting.kpis"],
    None,
    "ALTER TABLE s.a RENAME TO b: the new name stays in schema s",
)

C(
    "pg_insert_values",
    "postgres",
    """
    INSERT INTO config.feature_flags (name, enabled) VALUES ('new_checkout', true), ('dark_mode', false)
    RETURNING id
""",
    [],
    ["config.feature_flags"],
    [],
    "INSERT VALUES ... RETURNING: target only",
)

C(
    "pg_ctas_if_not_exists_join_agg",
    "postgres",
    """
    CREATE TABLE IF NOT EXISTS analytics.customer_stats AS
    SELECT c.id AS customer_id,
           count(o.id) AS order_count,
           coalesce(sum(o.total), 0) AS lifetime_value,
           max(o.created_at) AS last_order_at
    FROM crm.customers c
    LEFT JOIN shop.orders o ON o.customer_id = c.id
    GROUP BY c.id
""",
    ["crm.customers", "shop.orders"],
    ["analytics.customer_stats"],
    [
        "crm.customers.id > analytics.customer_stats.customer_id",
        "shop.orders.id > analytics.customer_stats.order_count",
        "shop.orders.total > analytics.customer_stats.lifetime_value",
        "shop.orders.created_at > analytics.customer_stats.last_order_at",
    ],
    "CTAS IF NOT EXISTS with LEFT JOIN and aggregates",
)

C(
    "pg_truncate_multiple",
    "postgres",
    "TRUNCATE TABLE staging.a, staging.b RESTART IDENTITY",
    [],
    ["staging.a", "staging.b"],
    [],
    "TRUNCATE of several tables: each is a target",
)

C(
    "pg_select_lateral_join",
    "postgres",
    """
    SELECT u.id, last.created_at AS last_login
    FROM app.users u
    CROSS JOIN LATERAL (
      SELECT l.created_at FROM app.logins l WHERE l.user_id = u.id ORDER BY l.created_at DESC LIMIT 1
    ) last
""",
    ["app.users", "app.logins"],
    [],
    [],
    "LATERAL subquery join in a plain SELECT",
    result=["app.users.id > id", "app.logins.created_at > last_login"],
)

# =====================================================================================
# Redshift
# =====================================================================================
C(
    "rs_unload",
    "redshift",
    """
    UNLOAD ('SELECT order_id, amount FROM sales.orders WHERE order_date >= ''2024-01-01''')
    TO 's3://acme-exports/orders/part_'
    IAM_ROLE 'arn:aws:iam::123456789012:role/RedshiftUnload'
    FORMAT AS PARQUET
""",
    ["sales.orders"],
    ["s3://acme-exports/orders/part_"],
    None,
    "UNLOAD: tables of the quoted query are sources, the S3 prefix is the target",
)

C(
    "rs_copy_from_s3",
    "redshift",
    """
    COPY staging.events
    FROM 's3://acme-landing/events/2024/06/01/'
    IAM_ROLE 'arn:aws:iam::123456789012:role/RedshiftCopy'
    FORMAT AS JSON 'auto'
    GZIP
""",
    ["s3://acme-landing/events/2024/06/01"],
    ["staging.events"],
    None,
    "Redshift COPY FROM s3: the S3 prefix is the source dataset",
)

C(
    "rs_ctas_distkey",
    "redshift",
    """
    CREATE TABLE mart.user_ltv
    DISTKEY(user_id)
    SORTKEY(user_id)
    AS
    SELECT user_id, SUM(amount) AS ltv, MIN(created_at) AS first_order
    FROM sales.orders
    GROUP BY user_id
""",
    ["sales.orders"],
    ["mart.user_ltv"],
    [
        "sales.orders.user_id > mart.user_ltv.user_id",
        "sales.orders.amount > mart.user_ltv.ltv",
        "sales.orders.created_at > mart.user_ltv.first_order",
    ],
    "Redshift CTAS with DISTKEY/SORTKEY",
)

C(
    "rs_staging_merge_temp_like",
    "redshift",
    """
    BEGIN;
    CREATE TEMP TABLE stage_users (LIKE public.users);
    INSERT INTO stage_users SELECT id, email, updated_at FROM staging.users_delta;
    DELETE FROM public.users USING stage_users WHERE public.users.id = stage_users.id;
    INSERT INTO public.users SELECT * FROM stage_users;
    END;
""",
    ["staging.users_delta", "public.users"],
    ["public.users"],
    None,
    "classic Redshift staged upsert: TEMP table collapsed; DELETE USING temp -> its upstream. "
    "CREATE TABLE (LIKE x) counts x as a source (OpenLineage convention, corpus "
    "openlineage:table_lineage::test_create_table_like), so public.users reaches the sources via the temp",
)

C(
    "rs_select_into_temp",
    "redshift",
    """
    SELECT venueid, venuename, venuecity INTO TEMP TABLE tmp_venues FROM tickit.venue WHERE venuestate = 'NY';
    INSERT INTO tickit.ny_venues (venue_id, name, city) SELECT venueid, venuename, venuecity FROM tmp_venues;
""",
    ["tickit.venue"],
    ["tickit.ny_venues"],
    [
        "tickit.venue.venueid > tickit.ny_venues.venue_id",
        "tickit.venue.venuename > tickit.ny_venues.name",
        "tickit.venue.venuecity > tickit.ny_venues.city",
    ],
    "SELECT ... INTO TEMP TABLE collapsed; column lineage stitched",
)

C(
    "rs_merge_insert_values_positional",
    "redshift",
    """
    MERGE INTO sales.target_orders
    USING sales.staged_orders s
    ON target_orders.order_id = s.order_id
    WHEN MATCHED THEN UPDATE SET status = s.status
    WHEN NOT MATCHED THEN INSERT VALUES (s.order_id, s.status)
""",
    ["sales.staged_orders"],
    ["sales.target_orders"],
    [
        "sales.staged_orders.status > sales.target_orders.status",
        "sales.staged_orders.order_id > sales.target_orders.order_id",
    ],
    "MERGE INSERT VALUES without column list: positional onto the target schema",
    schemas={"sales.target_orders": {"order_id": "INT", "status": "VARCHAR"}},
)

C(
    "rs_alter_table_append",
    "redshift",
    "ALTER TABLE sales.orders APPEND FROM staging.orders_batch",
    ["staging.orders_batch"],
    ["sales.orders"],
    None,
    "ALTER TABLE ... APPEND FROM moves rows from the source table into the target",
)

C(
    "rs_view_no_schema_binding",
    "redshift",
    """
    CREATE OR REPLACE VIEW reporting.v_sales AS
    SELECT s.sale_id, s.qty * s.price AS revenue, e.name AS event_name
    FROM spectrum.sales s
    JOIN public.event e ON e.event_id = s.event_id
    WITH NO SCHEMA BINDING
""",
    ["spectrum.sales", "public.event"],
    ["reporting.v_sales"],
    [
        "spectrum.sales.sale_id > reporting.v_sales.sale_id",
        "spectrum.sales.qty > reporting.v_sales.revenue",
        "spectrum.sales.price > reporting.v_sales.revenue",
        "public.event.name > reporting.v_sales.event_name",
    ],
    "late-binding view WITH NO SCHEMA BINDING; arithmetic expression fans in",
)

C(
    "rs_insert_parenthesized_select",
    "redshift",
    """
    INSERT INTO mart.daily_sessions (session_date, sessions)
    (SELECT trunc(start_ts), count(distinct session_id) FROM web.sessions GROUP BY 1)
""",
    ["web.sessions"],
    ["mart.daily_sessions"],
    [
        "web.sessions.start_ts > mart.daily_sessions.session_date",
        "web.sessions.session_id > mart.daily_sessions.sessions",
    ],
    "INSERT with a parenthesized SELECT",
)

C(
    "rs_analyze_vacuum",
    "redshift",
    """
    VACUUM DELETE ONLY sales.orders;
    ANALYZE sales.orders;
""",
    [],
    [],
    [],
    "VACUUM / ANALYZE maintenance: no lineage, no error",
)

# =====================================================================================
# MySQL
# =====================================================================================
C(
    "mysql_insert_on_duplicate_key",
    "mysql",
    """
    INSERT INTO shop.daily_stock (sku, stock_date, qty)
    SELECT sku, CURDATE(), SUM(qty) FROM shop.stock_movements GROUP BY sku
    ON DUPLICATE KEY UPDATE qty = VALUES(qty)
""",
    ["shop.stock_movements"],
    ["shop.daily_stock"],
    [
        "shop.stock_movements.sku > shop.daily_stock.sku",
        "shop.stock_movements.qty > shop.daily_stock.qty",
    ],
    "INSERT ... SELECT ... ON DUPLICATE KEY UPDATE",
)

C(
    "mysql_replace_into_select",
    "mysql",
    """
    REPLACE INTO shop.product_cache (id, name, price)
    SELECT id, name, price FROM shop.products WHERE updated_at > NOW() - INTERVAL 1 HOUR
""",
    ["shop.products"],
    ["shop.product_cache"],
    [
        "shop.products.id > shop.product_cache.id",
        "shop.products.name > shop.product_cache.name",
        "shop.products.price > shop.product_cache.price",
    ],
    "REPLACE INTO ... SELECT behaves like INSERT",
)

C(
    "mysql_update_join",
    "mysql",
    """
    UPDATE shop.orders o
    JOIN shop.customers c ON c.id = o.customer_id
    SET o.customer_email = c.email
    WHERE o.customer_email IS NULL
""",
    ["shop.customers"],
    ["shop.orders"],
    ["shop.customers.email > shop.orders.customer_email"],
    "MySQL multi-table UPDATE ... JOIN ... SET: only the SET table is the target",
)

C(
    "mysql_delete_join",
    "mysql",
    """
    DELETE s FROM shop.sessions s JOIN shop.users u ON u.id = s.user_id WHERE u.banned = 1
""",
    ["shop.users"],
    ["shop.sessions"],
    [],
    "MySQL multi-table DELETE alias FROM ... JOIN",
)

C(
    "mysql_load_data_infile",
    "mysql",
    """
    LOAD DATA LOCAL INFILE '/data/exports/products.csv'
    INTO TABLE shop.products_import
    FIELDS TERMINATED BY ','
    IGNORE 1 LINES
""",
    ["/data/exports/products.csv"],
    ["shop.products_import"],
    None,
    "LOAD DATA INFILE: the file is the source dataset",
)

C(
    "mysql_rename_table_swap",
    "mysql",
    """
    RENAME TABLE shop.products TO shop.products_old, shop.products_new TO shop.products
""",
    ["shop.products", "shop.products_new"],
    ["shop.products_old", "shop.products"],
    None,
    "RENAME TABLE with two pairs (atomic swap): each pair is old -> new",
)

C(
    "mysql_ctas_backticks",
    "mysql",
    """
    CREATE TABLE `analytics`.`user_first_order` AS
    SELECT `user_id`, MIN(`created_at`) AS `first_order_at`
    FROM `shop`.`orders`
    GROUP BY `user_id`
""",
    ["shop.orders"],
    ["analytics.user_first_order"],
    [
        "shop.orders.user_id > analytics.user_first_order.user_id",
        "shop.orders.created_at > analytics.user_first_order.first_order_at",
    ],
    "MySQL backticked CTAS",
)

C(
    "mysql_use_then_insert",
    "mysql",
    """
    USE shop;
    INSERT INTO order_archive (id, total) SELECT id, total FROM orders WHERE created_at < '2020-01-01';
""",
    ["shop.orders"],
    ["shop.order_archive"],
    ["shop.orders.id > shop.order_archive.id", "shop.orders.total > shop.order_archive.total"],
    "USE db qualifies later unqualified names",
    default_db="mysql",
)

# =====================================================================================
# Oracle
# =====================================================================================
C(
    "ora_merge",
    "oracle",
    """
    MERGE INTO dw.dim_product d
    USING (SELECT product_id, product_name, list_price FROM stg.products WHERE load_date = TRUNC(SYSDATE)) s
    ON (d.product_id = s.product_id)
    WHEN MATCHED THEN UPDATE SET d.product_name = s.product_name, d.list_price = s.list_price
    WHEN NOT MATCHED THEN INSERT (product_id, product_name, list_price)
      VALUES (s.product_id, s.product_name, s.list_price)
""",
    ["stg.products"],
    ["dw.dim_product"],
    [
        "stg.products.product_id > dw.dim_product.product_id",
        "stg.products.product_name > dw.dim_product.product_name",
        "stg.products.list_price > dw.dim_product.list_price",
    ],
    "Oracle MERGE with parenthesized ON",
)

C(
    "ora_insert_append_hint_nvl",
    "oracle",
    """
    INSERT /*+ APPEND */ INTO dw.fact_sales (sale_id, sale_date, amount)
    SELECT s.id, TRUNC(s.sold_at), s.amount * NVL(r.rate, 1)
    FROM stg.sales s
    LEFT JOIN stg.fx_rates r ON r.currency = s.currency
""",
    ["stg.sales", "stg.fx_rates"],
    ["dw.fact_sales"],
    [
        "stg.sales.id > dw.fact_sales.sale_id",
        "stg.sales.sold_at > dw.fact_sales.sale_date",
        "stg.sales.amount > dw.fact_sales.amount",
        "stg.fx_rates.rate > dw.fact_sales.amount",
    ],
    "optimizer hint comment; expression over two tables",
)

C(
    "ora_insert_all",
    "oracle",
    """
    INSERT ALL
      INTO dw.orders_eu (order_id, amount) VALUES (order_id, amount)
      INTO dw.orders_audit (order_id, loaded_at) VALUES (order_id, SYSDATE)
    SELECT order_id, amount FROM stg.orders WHERE region = 'EU'
""",
    ["stg.orders"],
    ["dw.orders_eu", "dw.orders_audit"],
    [
        "stg.orders.order_id > dw.orders_eu.order_id",
        "stg.orders.amount > dw.orders_eu.amount",
        "stg.orders.order_id > dw.orders_audit.order_id",
    ],
    "Oracle unconditional multi-table INSERT ALL",
)

C(
    "ora_ctas_decode_nvl",
    "oracle",
    """
    CREATE TABLE rpt.customer_flags AS
    SELECT customer_id,
           DECODE(status, 'A', 'Active', 'I', 'Inactive', 'Unknown') AS status_desc,
           NVL(phone, mobile) AS contact
    FROM crm.customers
""",
    ["crm.customers"],
    ["rpt.customer_flags"],
    [
        "crm.customers.customer_id > rpt.customer_flags.customer_id",
        "crm.customers.status > rpt.customer_flags.status_desc",
        "crm.customers.phone > rpt.customer_flags.contact",
        "crm.customers.mobile > rpt.customer_flags.contact",
    ],
    "DECODE(x, k1, v1, ...) is a CASE on x; here all results are constants, so it is a value "
    "mapping of x (DIRECT; value-mapping rule, revised after PARSER_REVISION 5)",
)

C(
    "ora_plsql_block",
    "oracle",
    """
    BEGIN
      DELETE FROM dw.daily_balance WHERE balance_date = TRUNC(SYSDATE);
      INSERT INTO dw.daily_balance (account_id, balance_date, balance)
      SELECT account_id, TRUNC(SYSDATE), SUM(amount) FROM dw.transactions GROUP BY account_id;
      COMMIT;
    END;
""",
    ["dw.transactions"],
    ["dw.daily_balance"],
    [
        "dw.transactions.account_id > dw.daily_balance.account_id",
        "dw.transactions.amount > dw.daily_balance.balance",
    ],
    "PL/SQL anonymous block: statements inside are the lineage",
)

C(
    "ora_update_correlated_subquery",
    "oracle",
    """
    UPDATE hr.employees e
    SET e.department_name = (
      SELECT d.department_name FROM hr.departments d WHERE d.department_id = e.department_id
    )
""",
    ["hr.departments"],
    ["hr.employees"],
    ["hr.departments.department_name > hr.employees.department_name"],
    "UPDATE SET col = (correlated scalar subquery)",
)

C(
    "ora_rename_statement",
    "oracle",
    "RENAME orders_tmp TO orders",
    ["orders_tmp"],
    ["orders"],
    None,
    "Oracle RENAME old TO new statement",
)

C(
    "ora_view_old_outer_join",
    "oracle",
    """
    CREATE OR REPLACE FORCE VIEW rpt.v_emp AS
    SELECT e.employee_id,
           e.first_name || ' ' || e.last_name AS full_name,
           d.department_name
    FROM hr.employees e, hr.departments d
    WHERE e.department_id = d.department_id(+)
""",
    ["hr.employees", "hr.departments"],
    ["rpt.v_emp"],
    [
        "hr.employees.employee_id > rpt.v_emp.employee_id",
        "hr.employees.first_name > rpt.v_emp.full_name",
        "hr.employees.last_name > rpt.v_emp.full_name",
        "hr.departments.department_name > rpt.v_emp.department_name",
    ],
    "FORCE view, comma join with (+) outer-join marker, || concatenation",
)

C(
    "ora_simple_case_operand",
    "oracle",
    """
    INSERT INTO rpt.order_status (order_id, status_label, amount_eur)
    SELECT o.order_id,
           CASE o.status WHEN 'S' THEN 'Shipped' WHEN 'C' THEN 'Cancelled' ELSE o.status_text END,
           o.amount * fx.rate
    FROM sales.orders o JOIN ref.fx fx ON fx.ccy = o.ccy
""",
    ["sales.orders", "ref.fx"],
    ["rpt.order_status"],
    [
        "sales.orders.order_id > rpt.order_status.order_id",
        "sales.orders.status_text > rpt.order_status.status_label",
        "sales.orders.amount > rpt.order_status.amount_eur",
        "ref.fx.rate > rpt.order_status.amount_eur",
    ],
    "simple CASE operand (CASE x WHEN ...) is a condition (INDIRECT); ELSE column is DIRECT",
)

# =====================================================================================
# Trino / Presto
# =====================================================================================
C(
    "trino_insert_catalog_positional",
    "trino",
    """
    INSERT INTO hive.analytics.daily_orders
    SELECT CAST(order_ts AS date) AS order_date, count(*) AS orders, sum(total) AS revenue
    FROM iceberg.sales.orders
    GROUP BY 1
""",
    ["iceberg.sales.orders"],
    ["hive.analytics.daily_orders"],
    [
        "iceberg.sales.orders.order_ts > hive.analytics.daily_orders.order_date",
        "iceberg.sales.orders.total > hive.analytics.daily_orders.revenue",
    ],
    "Trino catalog.schema.table INSERT across catalogs",
    schemas={
        "hive.analytics.daily_orders": {
            "order_date": "date",
            "orders": "bigint",
            "revenue": "double",
        }
    },
)

C(
    "trino_ctas_with_unnest",
    "trino",
    """
    CREATE TABLE IF NOT EXISTS iceberg.mart.order_tags
    WITH (format = 'PARQUET', partitioning = ARRAY['day(order_ts)'])
    AS
    SELECT o.order_id, o.order_ts, t.tag
    FROM iceberg.sales.orders o
    CROSS JOIN UNNEST(o.tags) AS t(tag)
""",
    ["iceberg.sales.orders"],
    ["iceberg.mart.order_tags"],
    [
        "iceberg.sales.orders.order_id > iceberg.mart.order_tags.order_id",
        "iceberg.sales.orders.order_ts > iceberg.mart.order_tags.order_ts",
        "iceberg.sales.orders.tags > iceberg.mart.order_tags.tag",
    ],
    "Trino CTAS WITH (...) properties; CROSS JOIN UNNEST AS t(col) alias column list",
)

C(
    "trino_merge_delete_branch",
    "trino",
    """
    MERGE INTO iceberg.mart.accounts a
    USING iceberg.staging.account_changes c
    ON a.account_id = c.account_id
    WHEN MATCHED AND c.op = 'D' THEN DELETE
    WHEN MATCHED THEN UPDATE SET balance = c.balance, updated_at = c.changed_at
    WHEN NOT MATCHED THEN INSERT (account_id, balance, updated_at) VALUES (c.account_id, c.balance, c.changed_at)
""",
    ["iceberg.staging.account_changes"],
    ["iceberg.mart.accounts"],
    [
        "iceberg.staging.account_changes.balance > iceberg.mart.accounts.balance",
        "iceberg.staging.account_changes.changed_at > iceberg.mart.accounts.updated_at",
        "iceberg.staging.account_changes.account_id > iceberg.mart.accounts.account_id",
    ],
    "Trino MERGE with a DELETE branch and unqualified SET targets",
)

C(
    "trino_use_catalog_schema",
    "trino",
    """
    USE iceberg.sales;
    INSERT INTO order_snapshots SELECT order_id, status, current_date AS snapshot_date FROM orders;
""",
    ["iceberg.sales.orders"],
    ["iceberg.sales.order_snapshots"],
    [
        "iceberg.sales.orders.order_id > iceberg.sales.order_snapshots.order_id",
        "iceberg.sales.orders.status > iceberg.sales.order_snapshots.status",
    ],
    "Trino USE catalog.schema qualifies later names",
    default_db="hive",
    default_schema="default",
)

C(
    "trino_show_explain",
    "trino",
    """
    SHOW CATALOGS;
    SHOW CREATE TABLE iceberg.sales.orders;
""",
    [],
    [],
    [],
    "SHOW statements: no lineage, no error",
)

C(
    "trino_view_security_invoker",
    "trino",
    """
    CREATE OR REPLACE VIEW iceberg.mart.v_active_users SECURITY INVOKER AS
    SELECT user_id, max(event_ts) AS last_seen
    FROM iceberg.raw.events
    WHERE event_ts > current_timestamp - INTERVAL '30' DAY
    GROUP BY user_id
""",
    ["iceberg.raw.events"],
    ["iceberg.mart.v_active_users"],
    [
        "iceberg.raw.events.user_id > iceberg.mart.v_active_users.user_id",
        "iceberg.raw.events.event_ts > iceberg.mart.v_active_users.last_seen",
    ],
    "Trino view with SECURITY INVOKER",
)

C(
    "presto_unnest_map",
    "presto",
    """
    INSERT INTO hive.web.pageview_params
    SELECT pv.request_id, k AS param_key, v AS param_value
    FROM hive.web.pageviews pv
    CROSS JOIN UNNEST(pv.query_params) AS x(k, v)
""",
    ["hive.web.pageviews"],
    ["hive.web.pageview_params"],
    [
        "hive.web.pageviews.request_id > hive.web.pageview_params.request_id",
        "hive.web.pageviews.query_params > hive.web.pageview_params.param_key",
        "hive.web.pageviews.query_params > hive.web.pageview_params.param_value",
    ],
    "UNNEST of a map into (k, v): both trace to the map column",
)

C(
    "presto_ctas_order_limit",
    "presto",
    """
    CREATE TABLE hive.tmp.top_users AS
    SELECT user_id, approx_distinct(session_id) AS sessions
    FROM hive.web.sessions
    GROUP BY user_id
    ORDER BY 2 DESC
    LIMIT 100
""",
    ["hive.web.sessions"],
    ["hive.tmp.top_users"],
    [
        "hive.web.sessions.user_id > hive.tmp.top_users.user_id",
        "hive.web.sessions.session_id > hive.tmp.top_users.sessions",
    ],
    "Presto CTAS with ORDER BY ordinal / LIMIT",
)

C(
    "presto_select_cte_window",
    "presto",
    """
    WITH s AS (
      SELECT user_id, ts, lag(ts) OVER (PARTITION BY user_id ORDER BY ts) AS prev_ts
      FROM hive.web.events
    )
    SELECT user_id, date_diff('second', prev_ts, ts) AS gap_s
    FROM s
    WHERE prev_ts IS NOT NULL
""",
    ["hive.web.events"],
    [],
    [],
    "plain SELECT through a CTE with a window function",
    result=["hive.web.events.user_id > user_id", "hive.web.events.ts > gap_s"],
)

C(
    "presto_delete_partition",
    "presto",
    "DELETE FROM hive.web.events WHERE ds < '2023-01-01'",
    [],
    ["hive.web.events"],
    [],
    "DELETE: target is a target, no sources",
)

C(
    "presto_insert_values_select_join",
    "presto",
    """
    INSERT INTO hive.mart.user_country (user_id, country)
    SELECT u.user_id, coalesce(g.country, 'unknown')
    FROM hive.web.users u
    LEFT JOIN hive.ref.geoip g ON g.ip = u.last_ip
""",
    ["hive.web.users", "hive.ref.geoip"],
    ["hive.mart.user_country"],
    [
        "hive.web.users.user_id > hive.mart.user_country.user_id",
        "hive.ref.geoip.country > hive.mart.user_country.country",
    ],
    "LEFT JOIN on non-output columns (JOIN keys INDIRECT)",
)

# =====================================================================================
# DuckDB
# =====================================================================================
C(
    "duckdb_ctas_read_parquet_glob",
    "duckdb",
    """
    CREATE TABLE trips AS SELECT * FROM read_parquet('s3://nyc-tlc/trip_data/yellow_tripdata_2023-*.parquet')
""",
    ["s3://nyc-tlc/trip_data"],
    ["trips"],
    None,
    "read_parquet('glob'): location cut at the glob is the source dataset",
)

C(
    "duckdb_insert_from_csv_literal",
    "duckdb",
    """
    INSERT INTO sales SELECT * FROM 'data/sales_2024.csv'
""",
    ["data/sales_2024.csv"],
    ["sales"],
    None,
    "DuckDB FROM 'file.csv' replacement scan: the file is a source",
)

C(
    "duckdb_copy_query_to_parquet",
    "duckdb",
    """
    COPY (SELECT region, sum(amount) AS total FROM sales GROUP BY region) TO 'out/region_totals.parquet' (FORMAT PARQUET)
""",
    ["sales"],
    ["out/region_totals.parquet"],
    None,
    "COPY (query) TO file: file is the target dataset",
)

C(
    "duckdb_view_read_csv_auto",
    "duckdb",
    """
    CREATE VIEW v_events AS
    WITH raw AS (SELECT * FROM read_csv_auto('/data/events.csv'))
    SELECT event_type, count(*) AS n FROM raw GROUP BY event_type
""",
    ["/data/events.csv"],
    ["v_events"],
    None,
    "read_csv_auto inside a CTE of a view",
)

C(
    "duckdb_copy_from_parquet",
    "duckdb",
    """
    COPY lineitem FROM 'tpch/lineitem.parquet' (FORMAT PARQUET)
""",
    ["tpch/lineitem.parquet"],
    ["lineitem"],
    None,
    "COPY table FROM file",
)

C(
    "duckdb_insert_or_replace_positional",
    "duckdb",
    """
    INSERT OR REPLACE INTO dim_users SELECT id, name, email FROM staging_users
""",
    ["staging_users"],
    ["dim_users"],
    [
        "staging_users.id > dim_users.user_id",
        "staging_users.name > dim_users.user_name",
        "staging_users.email > dim_users.email",
    ],
    "INSERT OR REPLACE without column list: positional onto the target schema",
    schemas={"dim_users": {"user_id": "INTEGER", "user_name": "VARCHAR", "email": "VARCHAR"}},
)

C(
    "duckdb_attached_db_ctas_star",
    "duckdb",
    """
    CREATE TABLE lake.main.orders AS SELECT * FROM pg.public.orders
""",
    ["pg.public.orders"],
    ["lake.main.orders"],
    [
        "pg.public.orders.id > lake.main.orders.id",
        "pg.public.orders.total > lake.main.orders.total",
    ],
    "attached-database three-part names; star expanded from the schema",
    schemas={"pg.public.orders": {"id": "INTEGER", "total": "DECIMAL"}},
)

C(
    "duckdb_unnest_list",
    "duckdb",
    """
    CREATE TABLE tag_counts AS
    SELECT tag, count(*) AS n FROM (SELECT unnest(tags) AS tag FROM posts) GROUP BY tag
""",
    ["posts"],
    ["tag_counts"],
    ["posts.tags > tag_counts.tag"],
    "unnest() in the select list of a derived table",
)

# =====================================================================================
# ClickHouse
# =====================================================================================
C(
    "ch_insert_select",
    "clickhouse",
    """
    INSERT INTO analytics.events_daily
    SELECT toDate(event_time) AS day, event_type, count() AS cnt, uniqExact(user_id) AS users
    FROM analytics.events
    WHERE event_time >= today() - 1
    GROUP BY day, event_type
""",
    ["analytics.events"],
    ["analytics.events_daily"],
    [
        "analytics.events.event_time > analytics.events_daily.day",
        "analytics.events.event_type > analytics.events_daily.event_type",
        "analytics.events.user_id > analytics.events_daily.users",
    ],
    "ClickHouse INSERT ... SELECT; count() has no column",
    schemas={
        "analytics.events_daily": {
            "day": "Date",
            "event_type": "String",
            "cnt": "UInt64",
            "users": "UInt64",
        }
    },
)

C(
    "ch_mv_to_table",
    "clickhouse",
    """
    CREATE MATERIALIZED VIEW analytics.events_daily_mv TO analytics.events_daily AS
    SELECT toDate(event_time) AS day, event_type, count() AS cnt, uniqExact(user_id) AS users
    FROM analytics.events
    GROUP BY day, event_type
""",
    ["analytics.events"],
    ["analytics.events_daily_mv", "analytics.events_daily"],
    None,
    "ClickHouse MATERIALIZED VIEW ... TO t: rows land in t; the MV object is also defined (DataHub convention)",
)

C(
    "ch_insert_from_s3_function",
    "clickhouse",
    """
    INSERT INTO raw.clicks
    SELECT * FROM s3('https://acme-lake.s3.amazonaws.com/clicks/2024-06-01/*.json.gz', 'JSONEachRow')
""",
    ["https://acme-lake.s3.amazonaws.com/clicks/2024-06-01"],
    ["raw.clicks"],
    None,
    "s3() table function: the URL (cut at the glob) is the source dataset",
)

C(
    "ch_select_array_join",
    "clickhouse",
    """
    SELECT user_id, arrayJoin(tags) AS tag FROM analytics.users
""",
    ["analytics.users"],
    [],
    [],
    "arrayJoin in the select list",
    result=["analytics.users.user_id > user_id", "analytics.users.tags > tag"],
)

C(
    "ch_ctas_engine",
    "clickhouse",
    """
    CREATE TABLE analytics.top_pages ENGINE = MergeTree ORDER BY hits AS
    SELECT path, count() AS hits FROM analytics.pageviews GROUP BY path
""",
    ["analytics.pageviews"],
    ["analytics.top_pages"],
    ["analytics.pageviews.path > analytics.top_pages.path"],
    "ClickHouse CTAS with ENGINE clause",
)

C(
    "ch_alter_delete_mutation",
    "clickhouse",
    """
    ALTER TABLE analytics.events DELETE WHERE event_date < '2023-01-01'
""",
    [],
    ["analytics.events"],
    [],
    "ALTER TABLE ... DELETE mutation: the table is a target",
)

C(
    "ch_rename_table",
    "clickhouse",
    "RENAME TABLE analytics.top_pages_new TO analytics.top_pages",
    ["analytics.top_pages_new"],
    ["analytics.top_pages"],
    None,
    "RENAME TABLE a TO b",
)

C(
    "ch_exchange_tables",
    "clickhouse",
    "EXCHANGE TABLES analytics.top_pages_new AND analytics.top_pages",
    ["analytics.top_pages_new", "analytics.top_pages"],
    ["analytics.top_pages_new", "analytics.top_pages"],
    None,
    "EXCHANGE TABLES is a swap: both tables source and target",
)

# =====================================================================================
# ANSI / generic
# =====================================================================================
C(
    "ansi_nested_cte_in_cte",
    "ansi",
    """
    INSERT INTO mart.region_sales (region, total)
    WITH regional AS (
      WITH base AS (
        SELECT r.region_name AS region, s.amount
        FROM sales s JOIN regions r ON r.id = s.region_id
      )
      SELECT region, SUM(amount) AS total FROM base GROUP BY region
    )
    SELECT region, total FROM regional
""",
    ["sales", "regions"],
    ["mart.region_sales"],
    ["regions.region_name > mart.region_sales.region", "sales.amount > mart.region_sales.total"],
    "CTE defined inside a CTE",
)

C(
    "ansi_cte_shadows_table",
    "ansi",
    """
    WITH orders AS (SELECT id, total FROM raw_orders WHERE status <> 'test')
    INSERT INTO clean_orders SELECT id, total FROM orders
""",
    ["raw_orders"],
    ["clean_orders"],
    ["raw_orders.id > clean_orders.id", "raw_orders.total > clean_orders.total"],
    "a CTE named like a table shadows it: `orders` is not a source",
)

C(
    "ansi_unused_cte",
    "ansi",
    """
    CREATE TABLE summary AS
    WITH unused AS (SELECT * FROM legacy_table),
         used AS (SELECT id, val FROM current_table)
    SELECT id, val FROM used
""",
    ["current_table"],
    ["summary"],
    ["current_table.id > summary.id", "current_table.val > summary.val"],
    "tables read only by an unused CTE are NOT sources",
)

C(
    "ansi_select_expressions_case_coalesce",
    "ansi",
    """
    SELECT c.id AS customer_id,
           COALESCE(c.nickname, c.first_name) AS display_name,
           CASE WHEN o.total > 100 THEN o.total * 0.9 ELSE o.total END AS discounted,
           COUNT(*) OVER () AS n
    FROM customers c
    JOIN orders o ON o.customer_id = c.id
""",
    ["customers", "orders"],
    [],
    [],
    "result columns: COALESCE fans in, CASE result column DIRECT, COUNT(*) OVER () none",
    result=[
        "customers.id > customer_id",
        "customers.nickname > display_name",
        "customers.first_name > display_name",
        "orders.total > discounted",
    ],
)

C(
    "ansi_truncate",
    "ansi",
    "TRUNCATE TABLE staging.events",
    [],
    ["staging.events"],
    [],
    "TRUNCATE: target",
)

C(
    "ansi_drop_view",
    "ansi",
    "DROP VIEW IF EXISTS reporting.v_old",
    [],
    ["reporting.v_old"],
    [],
    "DROP VIEW: target",
)

C(
    "ansi_create_table_ddl",
    "ansi",
    "CREATE TABLE audit.log (id INT, msg VARCHAR(200))",
    [],
    ["audit.log"],
    [],
    "CREATE TABLE without AS: DDL, table is a target, no sources",
)

C(
    "ansi_insert_values",
    "ansi",
    "INSERT INTO config (k, v) VALUES ('a', '1'), ('b', '2')",
    [],
    ["config"],
    [],
    "INSERT VALUES: no sources",
)

C(
    "ansi_derived_table_column_aliases",
    "ansi",
    """
    INSERT INTO t2 SELECT x.a2, x.b2 FROM (SELECT a, b FROM t1) AS x(a2, b2)
""",
    ["t1"],
    ["t2"],
    ["t1.a > t2.a2", "t1.b > t2.b2"],
    "derived table with a column alias list renames its columns",
)

C(
    "ansi_exists_filter",
    "ansi",
    """
    INSERT INTO active_customers (id, name)
    SELECT c.id, c.name FROM customers c
    WHERE EXISTS (SELECT 1 FROM orders o WHERE o.customer_id = c.id)
""",
    ["customers", "orders"],
    ["active_customers"],
    ["customers.id > active_customers.id", "customers.name > active_customers.name"],
    "EXISTS subquery table is a source; no column lineage from it",
)

C(
    "ansi_script_persistent_intermediate_stays",
    "ansi",
    """
    CREATE TABLE stage_a AS SELECT id, amount FROM src_a;
    INSERT INTO final_a SELECT id, amount FROM stage_a;
""",
    ["src_a", "stage_a"],
    ["stage_a", "final_a"],
    [
        "src_a.id > stage_a.id",
        "src_a.amount > stage_a.amount",
        "stage_a.id > final_a.id",
        "stage_a.amount > final_a.amount",
    ],
    "a persistent table created in a script and read later stays (not collapsed)",
)

C(
    "ansi_script_created_and_dropped_collapsed",
    "ansi",
    """
    CREATE TABLE tmp_x AS SELECT id, amount FROM src_b;
    INSERT INTO final_b SELECT id, SUM(amount) AS amount FROM tmp_x GROUP BY id;
    DROP TABLE tmp_x;
""",
    ["src_b"],
    ["final_b"],
    ["src_b.id > final_b.id", "src_b.amount > final_b.amount"],
    "a table created and dropped within the script is collapsed, lineage stitched",
)

C(
    "ansi_view_three_way_union",
    "ansi",
    """
    CREATE VIEW all_contacts AS
    SELECT email, name FROM customers
    UNION
    SELECT contact_email, contact_name FROM suppliers
    UNION
    SELECT work_email, full_name FROM employees
""",
    ["customers", "suppliers", "employees"],
    ["all_contacts"],
    [
        "customers.email > all_contacts.email",
        "suppliers.contact_email > all_contacts.email",
        "employees.work_email > all_contacts.email",
        "customers.name > all_contacts.name",
        "suppliers.contact_name > all_contacts.name",
        "employees.full_name > all_contacts.name",
    ],
    "UNION: output names from the first branch, columns mapped by position",
)

C(
    "ansi_select_alias_star_schema",
    "ansi",
    """
    SELECT o.*, c.segment FROM orders o JOIN customers c ON c.id = o.customer_id
""",
    ["orders", "customers"],
    [],
    [],
    "alias.* expanded from the schema",
    result=[
        "orders.id > id",
        "orders.customer_id > customer_id",
        "orders.total > total",
        "customers.segment > segment",
    ],
    schemas={
        "orders": {"id": None, "customer_id": None, "total": None},
        "customers": {"id": None, "segment": None},
    },
)

C(
    "ansi_insert_star_positional_schema",
    "ansi",
    """
    INSERT INTO orders_backup SELECT * FROM orders
""",
    ["orders"],
    ["orders_backup"],
    [
        "orders.id > orders_backup.backup_id",
        "orders.customer_id > orders_backup.backup_customer_id",
        "orders.total > orders_backup.backup_total",
    ],
    "INSERT ... SELECT * with both schemas: positional mapping of the expanded star",
    schemas={
        "orders": {"id": None, "customer_id": None, "total": None},
        "orders_backup": {"backup_id": None, "backup_customer_id": None, "backup_total": None},
    },
)

C(
    "ansi_group_by_having_filters",
    "ansi",
    """
    CREATE TABLE big_spenders AS
    SELECT customer_id, SUM(amount) AS spend
    FROM payments
    WHERE status = 'ok'
    GROUP BY customer_id
    HAVING SUM(amount) > 1000 AND COUNT(DISTINCT currency) = 1
    ORDER BY spend DESC
""",
    ["payments"],
    ["big_spenders"],
    ["payments.customer_id > big_spenders.customer_id", "payments.amount > big_spenders.spend"],
    "WHERE / HAVING / ORDER BY columns are INDIRECT (currency, status have no direct edge)",
)

C(
    "ansi_view_column_list",
    "ansi",
    """
    CREATE VIEW v_orders (order_key, order_total) AS SELECT id, total FROM orders
""",
    ["orders"],
    ["v_orders"],
    ["orders.id > v_orders.order_key", "orders.total > v_orders.order_total"],
    "CREATE VIEW with an explicit column list renames the output columns",
)

C(
    "ansi_delete_where_subquery_join",
    "ansi",
    """
    DELETE FROM order_lines
    WHERE order_id IN (SELECT o.id FROM orders o JOIN customers c ON c.id = o.customer_id WHERE c.test_account)
""",
    ["orders", "customers"],
    ["order_lines"],
    [],
    "DELETE with a join inside the IN subquery: both subquery tables are sources",
)

C(
    "ansi_script_temp_chain_two_hops",
    "ansi",
    """
    CREATE TEMPORARY TABLE t1 AS SELECT user_id, amount FROM payments;
    CREATE TEMPORARY TABLE t2 AS SELECT user_id, SUM(amount) AS total FROM t1 GROUP BY user_id;
    INSERT INTO user_totals (user_id, total) SELECT user_id, total FROM t2;
""",
    ["payments"],
    ["user_totals"],
    ["payments.user_id > user_totals.user_id", "payments.amount > user_totals.total"],
    "two chained TEMPORARY tables collapsed; lineage stitched across both hops",
)


# =====================================================================================
# Second round: realistic shapes found while probing beyond the first draft
# (expectations reasoned from SQL semantics, like the rest)
# =====================================================================================
C(
    "tsql_proc_set_options_no_semicolons_update",
    "tsql",
    """
    CREATE PROCEDURE dbo.usp_SyncPrices
    AS
    SET NOCOUNT ON
    SET XACT_ABORT ON
    UPDATE p
    SET p.ListPrice = s.NewPrice
    FROM dbo.Product p
    JOIN staging.PriceFeed s ON s.SKU = p.SKU
""",
    ["staging.pricefeed"],
    ["dbo.product"],
    ["staging.pricefeed.newprice > dbo.product.listprice"],
    "T-SQL SET <option> ON lines without semicolons must end at the line; the UPDATE after them is lineage",
)

C(
    "tsql_output_into_archive",
    "tsql",
    """
    DELETE FROM dbo.EventQueue
    OUTPUT deleted.EventID, deleted.Payload, deleted.CreatedAt
    INTO archive.EventQueueHistory (EventID, Payload, CreatedAt)
    WHERE CreatedAt < DATEADD(day, -30, SYSUTCDATETIME());
""",
    ["dbo.eventqueue"],
    ["dbo.eventqueue", "archive.eventqueuehistory"],
    [
        "dbo.eventqueue.eventid > archive.eventqueuehistory.eventid",
        "dbo.eventqueue.payload > archive.eventqueuehistory.payload",
        "dbo.eventqueue.createdat > archive.eventqueuehistory.createdat",
    ],
    "T-SQL OUTPUT ... INTO t: t is a target fed by the deleted rows, so the DELETE target is also read "
    "(same reasoning as a Postgres DELETE ... RETURNING CTE)",
)

C(
    "tsql_insert_then_truncate_no_semicolons",
    "tsql",
    """
    INSERT INTO dw.Sales (SaleID, Amount)
    SELECT SaleID, Amount FROM stage.Sales
    TRUNCATE TABLE stage.Sales
""",
    ["stage.sales"],
    ["dw.sales", "stage.sales"],
    ["stage.sales.saleid > dw.sales.saleid", "stage.sales.amount > dw.sales.amount"],
    "T-SQL batch without semicolons: TRUNCATE TABLE starts a new statement (its table is a target)",
)

C(
    "pg_plpgsql_select_into_variable",
    "postgres",
    """
    CREATE OR REPLACE FUNCTION etl.load_orders() RETURNS integer AS $$
    DECLARE
      last_id bigint;
      n integer;
    BEGIN
      SELECT coalesce(max(order_id), 0) INTO last_id FROM dw.orders;
      INSERT INTO dw.orders (order_id, customer_id, total)
      SELECT order_id, customer_id, total FROM staging.orders WHERE order_id > last_id;
      GET DIAGNOSTICS n = ROW_COUNT;
      RETURN n;
    END;
    $$ LANGUAGE plpgsql;
""",
    ["dw.orders", "staging.orders"],
    ["dw.orders"],
    [
        "staging.orders.order_id > dw.orders.order_id",
        "staging.orders.customer_id > dw.orders.customer_id",
        "staging.orders.total > dw.orders.total",
    ],
    "PL/pgSQL SELECT ... INTO variable assigns a variable, it creates no table; dw.orders is read by it",
)

C(
    "pg_plpgsql_function_parameter",
    "postgres",
    """
    CREATE OR REPLACE FUNCTION etl.snapshot_balances(p_date date) RETURNS void AS $$
    BEGIN
      INSERT INTO dw.balance_snapshots (snapshot_date, account_id, balance)
      SELECT p_date, account_id, balance FROM core.accounts;
    END;
    $$ LANGUAGE plpgsql;
""",
    ["core.accounts"],
    ["dw.balance_snapshots"],
    [
        "core.accounts.account_id > dw.balance_snapshots.account_id",
        "core.accounts.balance > dw.balance_snapshots.balance",
    ],
    "function parameters are not columns of the FROM table",
)

C(
    "ora_plsql_select_into_variable",
    "oracle",
    """
    DECLARE
      v_cnt NUMBER;
    BEGIN
      SELECT COUNT(*) INTO v_cnt FROM stg.orders;
      IF v_cnt > 0 THEN
        INSERT INTO dw.orders (order_id, amount) SELECT order_id, amount FROM stg.orders;
      END IF;
    END;
""",
    ["stg.orders"],
    ["dw.orders"],
    ["stg.orders.order_id > dw.orders.order_id", "stg.orders.amount > dw.orders.amount"],
    "PL/SQL SELECT ... INTO variable is an assignment, not a table",
)

C(
    "sf_proc_select_into_variable",
    "snowflake",
    """
    CREATE OR REPLACE PROCEDURE ops.check_and_load()
    RETURNS STRING
    LANGUAGE SQL
    AS
    $$
    DECLARE
      row_count INTEGER;
    BEGIN
      SELECT COUNT(*) INTO row_count FROM raw.orders_landing;
      IF (row_count > 0) THEN
        INSERT INTO core.orders (order_id, amount) SELECT order_id, amount FROM raw.orders_landing;
      END IF;
      RETURN 'loaded ' || row_count;
    END;
    $$;
""",
    ["raw.orders_landing"],
    ["core.orders"],
    [
        "raw.orders_landing.order_id > core.orders.order_id",
        "raw.orders_landing.amount > core.orders.amount",
    ],
    "Snowflake Scripting SELECT ... INTO variable (without colon) is an assignment, not a table",
)

C(
    "sf_use_schema_only",
    "snowflake",
    """
    USE SCHEMA MARTS;
    INSERT INTO DAILY_ORDERS SELECT order_date, COUNT(*) AS n FROM STAGING.ORDERS GROUP BY order_date;
""",
    ["analytics.staging.orders"],
    ["analytics.marts.daily_orders"],
    ["analytics.staging.orders.order_date > analytics.marts.daily_orders.order_date"],
    "USE SCHEMA <schema> changes the schema and keeps the current database",
    default_db="ANALYTICS",
    default_schema="PUBLIC",
)

C(
    "sf_create_pipe",
    "snowflake",
    """
    CREATE OR REPLACE PIPE raw.events_pipe AUTO_INGEST = TRUE AS
    COPY INTO raw.events FROM @raw.events_stage FILE_FORMAT = (TYPE = 'JSON');
""",
    ["@raw.events_stage"],
    ["raw.events"],
    None,
    "CREATE PIPE ... AS COPY INTO: the pipe's COPY is the lineage (like CREATE TASK ... AS <DML>)",
)

C(
    "mysql_select_into_outfile",
    "mysql",
    """
    SELECT order_id, total
    INTO OUTFILE '/var/lib/mysql-files/orders_2024.csv'
    FIELDS TERMINATED BY ','
    FROM shop.orders
    WHERE YEAR(created_at) = 2024
""",
    ["shop.orders"],
    ["/var/lib/mysql-files/orders_2024.csv"],
    None,
    "SELECT ... INTO OUTFILE 'path': the file is the target dataset (not a table named outfile)",
)

C(
    "ch_insert_into_function_s3",
    "clickhouse",
    """
    INSERT INTO FUNCTION s3('https://acme-exports.s3.amazonaws.com/daily/events.parquet', 'Parquet')
    SELECT * FROM analytics.events WHERE event_date = yesterday()
""",
    ["analytics.events"],
    ["https://acme-exports.s3.amazonaws.com/daily/events.parquet"],
    None,
    "INSERT INTO FUNCTION s3(url): export, the URL is the target dataset",
)

C(
    "ch_alter_update_mutation",
    "clickhouse",
    """
    ALTER TABLE analytics.users UPDATE email = '' WHERE is_deleted = 1
""",
    [],
    ["analytics.users"],
    [],
    "ALTER TABLE t UPDATE ... mutation: t is the target (a SET column is not a table)",
)

C(
    "ch_attach_partition_from",
    "clickhouse",
    """
    ALTER TABLE analytics.events ATTACH PARTITION 202406 FROM analytics.events_staging
""",
    ["analytics.events_staging"],
    ["analytics.events"],
    None,
    "ATTACH PARTITION ... FROM t2 copies t2's partition data into the table",
)

C(
    "spark_global_temp_view",
    "spark",
    """
    CREATE OR REPLACE GLOBAL TEMPORARY VIEW daily_orders AS
    SELECT order_id, amount, dt FROM sales.orders WHERE dt = '2024-06-01';
    INSERT INTO TABLE sales.orders_daily_copy
    SELECT order_id, amount, dt FROM global_temp.daily_orders;
""",
    ["sales.orders"],
    ["sales.orders_daily_copy"],
    [
        "sales.orders.order_id > sales.orders_daily_copy.order_id",
        "sales.orders.amount > sales.orders_daily_copy.amount",
        "sales.orders.dt > sales.orders_daily_copy.dt",
    ],
    "GLOBAL TEMPORARY VIEW v is read as global_temp.v: still a temp object, collapsed",
)

C(
    "bq_snapshot_table_clone",
    "bigquery",
    """
    CREATE SNAPSHOT TABLE `p.backups.orders_20240601`
    CLONE `p.sales.orders`
    FOR SYSTEM_TIME AS OF TIMESTAMP '2024-06-01 00:00:00 UTC'
""",
    ["p.sales.orders"],
    ["p.backups.orders_20240601"],
    None,
    "CREATE SNAPSHOT TABLE ... CLONE copies data like CREATE TABLE ... CLONE",
)

C(
    "ora_ctas_nologging_parallel",
    "oracle",
    """
    CREATE TABLE dw.sales_2024 NOLOGGING PARALLEL 8 AS
    SELECT /*+ PARALLEL(s 8) */ s.sale_id, s.amount
    FROM dw.sales s
    WHERE s.sale_date >= DATE '2024-01-01'
""",
    ["dw.sales"],
    ["dw.sales_2024"],
    ["dw.sales.sale_id > dw.sales_2024.sale_id", "dw.sales.amount > dw.sales_2024.amount"],
    "Oracle CTAS with physical attributes (NOLOGGING PARALLEL) and a hint",
)

C(
    "ora_truncate_reuse_storage",
    "oracle",
    "TRUNCATE TABLE dw.stage_sales REUSE STORAGE",
    [],
    ["dw.stage_sales"],
    [],
    "TRUNCATE ... REUSE STORAGE: target",
)

C(
    "ora_exchange_partition",
    "oracle",
    """
    ALTER TABLE dw.sales EXCHANGE PARTITION p202406 WITH TABLE dw.sales_stage INCLUDING INDEXES WITHOUT VALIDATION
""",
    ["dw.sales_stage"],
    ["dw.sales"],
    None,
    "EXCHANGE PARTITION ... WITH TABLE s: s's data moves into the partition (the corpus's Hive convention)",
)

C(
    "ora_mview_refresh_clause",
    "oracle",
    """
    CREATE MATERIALIZED VIEW rpt.mv_sales_by_region
    BUILD IMMEDIATE
    REFRESH FAST ON COMMIT
    AS SELECT region, SUM(amount) AS total FROM dw.sales GROUP BY region
""",
    ["dw.sales"],
    ["rpt.mv_sales_by_region"],
    [
        "dw.sales.region > rpt.mv_sales_by_region.region",
        "dw.sales.amount > rpt.mv_sales_by_region.total",
    ],
    "Oracle materialized view with BUILD / REFRESH clauses",
)

C(
    "ora_pseudo_columns",
    "oracle",
    """
    INSERT INTO rpt.top10 (rank_no, customer_id, created_by)
    SELECT ROWNUM, customer_id, USER
    FROM (SELECT customer_id FROM crm.customers ORDER BY ltv DESC)
    WHERE ROWNUM <= 10
""",
    ["crm.customers"],
    ["rpt.top10"],
    ["crm.customers.customer_id > rpt.top10.customer_id"],
    "Oracle pseudo-columns ROWNUM / USER are not table columns",
)


C(
    "tsql_agent_job_set_nocount_no_semicolons",
    "tsql",
    """
    SET NOCOUNT ON
    INSERT INTO dbo.DailyTotals (SaleDate, Total)
    SELECT CAST(SaleTime AS date), SUM(Amount)
    FROM dbo.Sales
    GROUP BY CAST(SaleTime AS date)
""",
    ["dbo.sales"],
    ["dbo.dailytotals"],
    ["dbo.sales.saletime > dbo.dailytotals.saledate", "dbo.sales.amount > dbo.dailytotals.total"],
    "top-level T-SQL batch (SQL Agent job step): SET NOCOUNT ON without semicolon, then an INSERT",
)


def main() -> int:
    for case in CASES:
        sys.stdout.write(json.dumps(case, ensure_ascii=False) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
