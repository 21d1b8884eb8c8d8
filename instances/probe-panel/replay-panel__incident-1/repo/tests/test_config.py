from orders.config import PRIMARY, REPLICAS


def test_hosts_have_ports():
    assert all(":" in host for host in [PRIMARY, *REPLICAS])
