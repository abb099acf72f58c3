select
    customer_id,
    sum(revenue) as total_revenue
from {{ ref('orders_daily') }}
group by customer_id
