def test_timeout_then_success(fake):
    fake.script(['timeout', 200])
    charge_with_retry(fake, 'INV-1', 100)
    assert fake.attempts == 2


def test_validation_422(fake):
    fake.script([422])
    charge_with_retry(fake, 'INV-1', 100)
    assert fake.attempts == 1


def test_three_timeouts(fake):
    fake.script(['timeout'] * 3)
    charge_with_retry(fake, 'INV-1', 100)
    assert fake.attempts == 3
