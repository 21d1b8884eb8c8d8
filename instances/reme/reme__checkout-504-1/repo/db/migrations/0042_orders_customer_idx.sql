CREATE INDEX idx_orders_customer ON orders (customer_id);
