select
    order_date,
    customer_id,
    sum(amount) as revenue,
    count(*) as orders
from {{ ref('stg_orders') }}
group by order_date, customer_id
