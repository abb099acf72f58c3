-- The dbt project's source table raw.orders in shop.duckdb (run before dbt-ol).
create schema if not exists raw;
create or replace table raw.orders
    (order_id integer, customer_id integer, amount decimal(10, 2), ordered_at timestamp);
insert into raw.orders values
    (1, 10, 25.00, '2026-11-01 09:00'),
    (2, 11, 40.50, '2026-11-01 10:30'),
    (3, 10, 12.25, '2026-11-02 08:15');
