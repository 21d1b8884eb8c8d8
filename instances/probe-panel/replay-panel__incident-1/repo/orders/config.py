"""Where the orders service reads from."""

PRIMARY = "db-primary:5432"
REPLICAS = [
    "db-replica-1:5432",
    "db-replica-2:5432",
    "db-replica-3:5432",
]
