"""`usersim import --redact-pii --persona --environment`: bank conversations full of personal data
(tests/data/import/pii_chats.jsonl, written by make_pii_fixture.py: names, emails, phones in UK,
US, German, French and Chinese formats, cards with and without separators, IBANs compact and
spaced, street addresses in English and Chinese) leave none of it in any written file, digits
included; the cases validate and a placeholder means the same value in the history, the checks,
the persona and the environment's state."""

from __future__ import annotations

import re
import sys

import yaml

from tests.support.cli import REPO, usersim

DATA = REPO / "tests/data/import"
SUITE = str(REPO / "examples/bank/cases/_suite.yaml")
sys.path.insert(0, str(DATA))
from make_pii_fixture import ORIGINALS  # noqa: E402


def _digits(text: str) -> str:
    return re.sub(r"\D", "", text)


def test_no_original_value_is_left_in_any_written_file_and_placeholders_agree(tmp_path):
    out = tmp_path / "imported"
    res = usersim(
        "import", str(DATA / "pii_chats.jsonl"), "--to", str(out),
        "--redact-pii", "--persona", "--environment", SUITE,
    )  # fmt: skip
    assert res.stdout.strip().splitlines()[-1].endswith("all valid"), res.stdout + res.stderr
    assert "redacted: " in res.stdout and "6 phone value(s)" in res.stdout and "2 iban value(s)" in res.stdout
    files = [p for p in out.rglob("*") if p.is_file()]
    assert len(files) == 4 + 4 + 4 + 1  # static and organic cases, personas, the environment's state
    leaks = []
    for p in files:
        text = p.read_text(encoding="utf-8")
        flat = re.sub(r"[\s\-()+.]", "", text)  # digits however they are grouped
        for value in ORIGINALS:
            if value in text or (len(_digits(value)) >= 6 and _digits(value) in flat):
                leaks.append((p.name, value))
        assert "data/import/pii_chats" not in text, p  # the input's name only, never its path
    assert leaks == []
    assert usersim("validate", str(out)).returncode == 0

    case = yaml.safe_load((out / "conv_pii-address-t4.yaml").read_text(encoding="utf-8"))
    assert case["source"] == "pii_chats.jsonl:1"
    assert case["input"]["message"] == "It's <ADDRESS_1>."
    (fs,) = [c["final_state"] for c in case["judging"]["checks"] if "final_state" in c]
    # the check expects what the history says the user gave
    assert fs["expect"]["customers"] == [{"customer_id": "C-1001", "address": "<ADDRESS_1>"}]
    # the state the case runs against has the same placeholders for the customers' data
    state = yaml.safe_load((out / case["environment"]["state"]).read_text(encoding="utf-8"))
    dana = next(r for r in state["customers"] if r["customer_id"] == "C-1001")
    history = " ".join(str(m.get("content") or "") for m in case["input"]["history"])
    assert dana["name"] == "<NAME_1>" and "<NAME_1>" in history
    dispute = yaml.safe_load((out / "conv_pii-dispute-t5.yaml").read_text(encoding="utf-8"))
    calls = [c for m in dispute["input"]["history"] for c in m.get("tool_calls") or []]
    find = next(c for c in calls if c["function"]["name"] == "find_customer")
    priya = next(r for r in state["customers"] if r["customer_id"] == "C-1003")
    assert f'"{priya["email"]}"' in find["function"]["arguments"] and priya["email"].startswith("<EMAIL_")
    # a card written with spaces and with dashes is one value: one placeholder in all of it
    said = " ".join(str(m.get("content") or "") for m in dispute["input"]["history"])
    assert "<CARD_1>" in said and "<CARD_1>" in dispute["input"]["message"] and "<CARD_2>" not in said

    persona = yaml.safe_load((out / "personas/conv_pii-refund-user.yaml").read_text(encoding="utf-8"))
    facts = {f["value"]: f["slot"] for f in persona["known_info"]}
    # whole values by kind, as their placeholders: never a digit group of a phone, card or IBAN
    assert {"<IBAN_1>", "<IBAN_2>", "<CARD_2>", "<EMAIL_3>", "<ADDRESS_3>"} <= set(facts)
    assert not any(re.fullmatch(r"[\d\s\-]+", v) for v in facts), facts
    for p in out.glob("conv_*.yaml"):
        data = yaml.safe_load(p.read_text(encoding="utf-8"))
        assert not re.search(r"\d{4}", data["title"].split("—", 1)[-1].replace("2026", "")), data["title"]


def test_drafted_personas_ask_what_the_user_asked_and_keep_values_whole_without_redaction(tmp_path):
    out = tmp_path / "plain"
    res = usersim(
        "import", str(DATA / "pii_chats.jsonl"), "--to", str(out), "--persona", "--environment", SUITE
    )  # fmt: skip
    assert res.stdout.strip().splitlines()[-1].endswith("all valid"), res.stdout + res.stderr
    personas = {
        p.stem: yaml.safe_load(p.read_text(encoding="utf-8")) for p in (out / "personas").glob("*.yaml")
    }
    address = personas["conv_pii-address-user"]
    # opened with "Hi there!": the goal is the ask that came after it, and it can be met; the
    # simulated user opens with the greeting and the ask (an agent may read the request from the
    # first message alone), and so does the organic case
    ask = "My name is Dana Whitfield. I moved house and need to update my address."
    assert address["opening_message"] == f"Hi there! {ask}"
    organic = yaml.safe_load((out / "conv_pii-address-sim.yaml").read_text(encoding="utf-8"))
    assert organic["input"]["message"] == address["opening_message"]
    assert (
        address["goal"]["description"]
        == "My name is Dana Whitfield. I moved house and need to update my address."
    )
    assert (
        address["goal"]["required"] == ["outcome"]
        and "U-7781" in address["goal"]["deliverable_keywords"]["outcome"]
    )
    # the ask spread over two turns is one goal
    dispute = personas["conv_pii-dispute-user"]
    assert dispute["goal"]["description"].startswith(
        "I'm calling about my card 4111 1111 1111 1111. There is"
    )
    # whole values named by kind: a phone, a card, an IBAN is one fact, never its digit groups
    facts = {f["slot"]: f["value"] for f in personas["conv_pii-refund-user"]["known_info"]}
    assert facts["iban"] == "GB82 WEST 1234 5698 7654 32" and facts["iban_2"] == "DE89370400440532013000"
    assert facts["phone"] == "030 12345678" and facts["phone_2"] == "06 12 34 56 78"
    assert facts["card_number"] == "5500000000000004" and facts["email"] == "tom.becker@example.com"
    assert facts["address"] == "55 Hill Street, Ogdenville"
    dana = {f["slot"]: f["value"] for f in address["known_info"]}
    assert dana["phone"] == "07700 900123" and dana["phone_2"] == "+44 20 7946 0958"
    assert dana["id"] == "C-1001" and dana["date_of_birth"] == "1985-03-14"
    values = [f["value"] for p in personas.values() for f in p["known_info"]]
    assert not any(v in ("7946", "0958", "900123", "1234", "12345678") for v in values), values


def test_surrogates_leave_no_original_and_an_agent_that_checks_shapes_acts_on_them(tmp_path):
    """--pii-surrogates: each personal value becomes a fictional one of the same shape (an email,
    a Luhn-valid card, an IBAN with valid check digits, a street address), still none of the
    originals anywhere; the same value the same surrogate in history, checks, persona and state;
    and the organic address change, which the bank agent refuses to act on with `<ADDRESS_1>`
    ("the full new address (street, city)?"), passes the correct agent and fails the flawed one."""
    from usersim.lang.pii import find_pii

    out = tmp_path / "imported"
    res = usersim(
        "import", str(DATA / "pii_chats.jsonl"), "--to", str(out), "--pii-surrogates", "--persona",
        "--environment", SUITE,
    )  # fmt: skip
    assert res.stdout.strip().splitlines()[-1].endswith("all valid"), res.stdout + res.stderr
    # as many values as with placeholders: a title cut inside a surrogate is no new value
    assert "6 name value(s)" in res.stdout and "6 phone value(s)" in res.stdout, res.stdout
    written = {p: p.read_text(encoding="utf-8") for p in out.rglob("*") if p.is_file()}
    leaks = []
    for p, text in written.items():
        flat = re.sub(r"[\s\-()+.]", "", text)
        for value in ORIGINALS:
            if value in text or (len(_digits(value)) >= 6 and _digits(value) in flat):
                leaks.append((p.name, value))
        assert not re.search(r"<[A-Z]+_\d+>", text), p  # no placeholder either
    assert leaks == []

    case = yaml.safe_load((out / "conv_pii-address-t4.yaml").read_text(encoding="utf-8"))
    address = case["input"]["message"].removeprefix("It's ").rstrip(".")
    assert [f.kind for f in find_pii(address)] == ["address"], address
    (fs,) = [c["final_state"] for c in case["judging"]["checks"] if "final_state" in c]
    assert fs["expect"]["customers"] == [{"customer_id": "C-1001", "address": address}]
    refund = written[out / "conv_pii-refund-t3.yaml"]
    kinds = {f.kind for f in find_pii(refund)}
    assert {"iban", "phone", "email", "card", "address"} <= kinds  # each still reads as its kind

    organic = [out / "conv_pii-address-sim.yaml"]
    for agent, status in (("correct", "passed"), ("flawed", "failed")):
        run = tmp_path / agent
        usersim(
            "run", *map(str, organic), "--agent", f"python:examples.bank.agent:{agent}",
            "--simulator", "rule", "--out", str(run), "--no-progress", check=False,
        )  # fmt: skip
        (record,) = [yaml.safe_load(x) for x in (run / "results.jsonl").read_text().splitlines()]
        assert record["status"] == status, [v["reason"] for v in record["verdicts"] if v["verdict"] != "pass"]
    assert record["blame"] == "agent"  # the flawed agent skipped verifying the caller
    assert any("verify_customer was never called" in v["reason"] for v in record["verdicts"])
