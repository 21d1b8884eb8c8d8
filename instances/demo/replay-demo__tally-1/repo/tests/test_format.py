from tally import Money, format_money
from tally.currencies import by_numeric, codes, is_fund, minor_unit_name


def test_str_groups_digits_and_rounds():
    assert str(Money("1234.5", "USD")) == "1,234.50 USD"
    assert str(Money("1234567", "JPY")) == "1,234,567 JPY"
    assert str(Money("0.0005", "BHD")) == "0.000 BHD"


def test_symbol():
    assert format_money(Money("-5", "EUR"), symbol=True) == "-\u20ac5.00"
    assert format_money(Money("5", "AUD"), symbol=True) == "5.00 AUD"


def test_no_grouping():
    assert format_money(Money("1234.5", "USD"), grouping=False) == "1234.50 USD"


def test_table_helpers():
    assert by_numeric(978).code == "EUR"
    assert is_fund("clf")
    assert minor_unit_name("KWD") == "fils"
    assert "MRO" in codes()
