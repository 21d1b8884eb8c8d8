import pytest

from lengths.convert import to_metres

CASES = [
    ('mm', 0.001),
    ('cm', 0.01),
    ('dm', 0.1),
    ('m', 1.0),
    ('dam', 10.0),
    ('hm', 100.0),
    ('km', 1000.0),
    ('in', 0.0254),
    ('ft', 0.3048),
    ('yd', 0.9144),
    ('mi', 1609.344),
    ('nmi', 1852.0),
    ('ftm', 1.8288),
    ('ch', 20.1168),
    ('fur', 201.168),
    ('lea', 4828.032),
    ('hand', 0.1016),
    ('link', 0.201168),
    ('rod', 5.0292),
    ('pt', 0.000352778),
    ('pc', 0.004233333),
    ('mil', 2.54e-05),
    ('au', 149597870700.0),
    ('ly', 9460700000000000.0),
    ('cable', 185.2),
    ('span', 0.2286),
    ('cubit', 0.4572),
    ('ell', 1.143),
    ('li', 500.0),
    ('verst', 1066.8),
    ('shaku', 0.30303),
    ('ri', 3927.27),
]


@pytest.mark.parametrize("unit, metres", CASES)
def test_to_metres(unit, metres):
    assert to_metres(1, unit) == metres
