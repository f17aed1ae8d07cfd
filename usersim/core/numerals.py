"""Chinese numerals: the one parser the judges, the simulator's guards and the reference agent share."""

from __future__ import annotations

CN_DIGITS: dict[str, int] = {
    "零": 0,
    "〇": 0,
    "一": 1,
    "两": 2,
    "二": 2,
    "三": 3,
    "四": 4,
    "五": 5,
    "六": 6,
    "七": 7,
    "八": 8,
    "九": 9,
}
CN_UNITS: dict[str, int] = {"十": 10, "百": 100, "千": 1000, "万": 10000}


def chinese_int(text: str) -> int | None:
    """三 -> 3, 十二 -> 12, 两千 -> 2000, 一万五 -> 15000; None when not a Chinese numeral."""
    if not text or any(ch not in CN_DIGITS and ch not in CN_UNITS for ch in text):
        return None
    total, section, digit = 0, 0, None
    last_unit, saw_zero = 1, False
    for ch in text:
        if ch in CN_DIGITS:
            digit = CN_DIGITS[ch]
            saw_zero = saw_zero or digit == 0
        else:
            unit = CN_UNITS[ch]
            if unit == 10000:
                total += (section + (digit or 0)) * unit
                section, digit = 0, None
            else:
                section += (1 if digit is None else digit) * unit
                digit = None
            last_unit = unit
    if digit is not None:  # 一万五 = 15000, 两千五 = 2500: a trailing digit scales one unit down
        section += digit * (last_unit // 10 if last_unit >= 100 and not saw_zero else 1)
    return total + section


def number(text: str) -> float | None:
    """'12', '1.5', '两', '十五', '二十' -> a number; None when the text is not one."""
    text = text.strip()
    try:
        return float(text)
    except ValueError:
        pass
    value = chinese_int(text)
    return None if value is None else float(value)
