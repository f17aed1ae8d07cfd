import pytest

from usersim.lang.quantity import chinese_int, number


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("三", 3),
        ("十二", 12),
        ("二十", 20),
        ("两千", 2000),
        ("一万五", 15000),
        ("两千五", 2500),
        ("一百零五", 105),
    ],
)
def test_chinese_int(text, value):
    assert chinese_int(text) == value


def test_number_reads_digits_and_numerals_and_refuses_words():
    assert number("1.5") == 1.5 and number(" 两 ") == 2.0 and number("十五") == 15.0
    assert number("多少") is None and chinese_int("") is None
