"""usersim.lang.pii: personal values found whole by kind (phones in each national format through
phonenumbers, cards by Luhn and IBANs by check digits through python-stdnum, emails, addresses and
names as pii.yaml patterns), replaced by placeholders that stay the same for the same value;
dates, amounts, ids and digit runs that fail the checks stay. Cases are data:
tests/lang/data/pii_cases.yaml."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from usersim.lang.pii import Redactor, find_pii, mask_pii

CASES = yaml.safe_load((Path(__file__).parent / "data/pii_cases.yaml").read_text(encoding="utf-8"))
ROWS = [(group, row) for group, rows in CASES.items() for row in rows]


def _digits(text: str) -> str:
    return re.sub(r"\D", "", text)


@pytest.mark.parametrize("group, row", ROWS, ids=[f"{g}:{r['text'][:40]}" for g, r in ROWS])
def test_each_value_is_found_whole_by_kind_and_the_rest_is_kept(group, row):
    text = row["text"]
    found = {(f.kind, text[f.start : f.end]) for f in find_pii(text)}
    want = {(kind, v) for kind, values in (row.get("masked") or {}).items() for v in values}
    assert found == want, (text, found)
    out = Redactor().redact(text)
    for _, value in want:
        assert value not in out
        if len(_digits(value)) >= 4:  # no digit group of it survives either
            assert not any(g in out for g in re.findall(r"\d{3,}", value)), out
    for value in row.get("kept") or []:
        assert value in out, (value, out)


def test_the_same_value_gets_the_same_placeholder_however_it_is_written():
    r = Redactor()
    a = r.redact("Call +44 20 7946 0958 or email Marcus.Lee@example.com; card 4111 1111 1111 1111.")
    b = r.redact("Again: 020 7946 0958, marcus.lee@example.com, 4111-1111-1111-1111, GB82WEST12345698765432")
    c = r.redact("IBAN GB82 WEST 1234 5698 7654 32 and 07700 900123")
    assert a == "Call <PHONE_1> or email <EMAIL_1>; card <CARD_1>."
    assert b == "Again: <PHONE_1>, <EMAIL_1>, <CARD_1>, <IBAN_1>"
    assert c == "IBAN <IBAN_1> and <PHONE_2>"
    assert r.counts() == {"phone": 2, "email": 1, "card": 1, "iban": 1}


def test_a_name_given_once_is_replaced_wherever_it_appears_learnt_first():
    r = Redactor()
    texts = ["Thanks Priya, the dispute is open.", "Hi, my name is Priya Nair.", "Priya Nair (C-1003)"]
    for t in texts:
        r.learn(t)
    assert [r.redact(t) for t in texts] == [
        "Thanks <NAME_1>, the dispute is open.",
        "Hi, my name is <NAME_1>.",
        "<NAME_1> (C-1003)",
    ]


def test_a_tool_result_field_is_its_kind_whole_and_a_tools_own_name_is_not_a_person():
    r = Redactor()
    row = {
        "customer_id": "C-1002",
        "name": "Marcus Lee",
        "address": "7 Oak Lane, Shelbyville",
        "phone": "+44 20 7946 0958",
    }
    assert r.redact_value(row, fields=True) == {
        "customer_id": "C-1002", "name": "<NAME_1>", "address": "<ADDRESS_1>", "phone": "<PHONE_1>",
    }  # fmt: skip
    tool = {"name": "get_customer", "description": "Look up a customer"}
    hotel = {"hotel_id": "H-1", "name": "Kyoto Tower Hotel", "price": 800}
    assert r.redact_value(tool, fields=True) == tool and r.redact_value(hotel, fields=True) == hotel
    # the phone in running text is the same number: the same placeholder
    assert r.redact("ring 020 7946 0958") == "ring <PHONE_1>"


def test_mask_pii_reports_contact_data_for_the_personal_table_check():
    # judges/checks/owner.py marks a state table personal when a row holds contact data
    assert mask_pii("marcus.lee@example.com")[1] == {"email": 1}
    assert mask_pii("+44 20 7946 0958")[1] == {"phone": 1}
    assert mask_pii("4111 1111 1111 1111")[1] == {"card": 1}
    assert mask_pii("12 Kyoto Road")[1] == {}  # an address alone (a hotel's) does not make it personal
    assert mask_pii("T-4001 on 2026-04-07, $349.99")[1] == {}


@pytest.mark.parametrize("group, row", ROWS, ids=[f"{g}:{r['text'][:40]}" for g, r in ROWS])
def test_a_surrogate_is_a_value_of_the_same_kind_and_redacting_again_changes_nothing(group, row):
    """--pii-surrogates over the same rows: every original value is gone (its digit groups too),
    what stands in its place reads as the same kind, and the redacted text, redacted again by the
    same redactor (a drafted file, a title cut short), stays as it is."""
    text = row["text"]
    r = Redactor(surrogates=True)
    out = r.redact(text)
    want = [(kind, v) for kind, values in (row.get("masked") or {}).items() for v in values]
    for _, value in want:
        assert value not in out, out
        if len(_digits(value)) >= 6:  # nor its digits however grouped (a surrogate shares a "555")
            assert _digits(value) not in _digits(out), out
    assert sorted(f.kind for f in find_pii(out)) == sorted(kind for kind, _ in want), out
    for value in row.get("kept") or []:
        assert value in out, (value, out)
    assert r.redact(out) == out
    cut = out[: max(len(out) - 5, 1)] + "…"
    before = r.counts()
    r.redact(cut)
    assert r.counts() == before, cut
