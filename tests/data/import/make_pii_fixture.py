"""Writes pii_chats.jsonl: bank conversations (OpenAI chat JSONL, as exported) full of personal
data: names, emails, phone numbers in UK, US, German, French and Chinese formats, card numbers with
and without separators, IBANs compact and spaced, street addresses (en, zh). One opens with a
greeting and asks later; one spreads the ask over two turns. Run it to regenerate the file."""

from __future__ import annotations

import json
from pathlib import Path


def call(cid: str, name: str, **args: object) -> dict:
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": cid, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}
        ],
    }


def result(cid: str, value: object) -> dict:
    return {"role": "tool", "tool_call_id": cid, "content": json.dumps(value, ensure_ascii=False)}


DANA = {
    "customer_id": "C-1001",
    "name": "Dana Whitfield",
    "email": "dana.w@example.com",
    "address": "12 Elm Street, Springfield",
}
PRIYA = {
    "customer_id": "C-1003",
    "name": "Priya Nair",
    "email": "priya.nair@example.com",
    "address": "301 River Road, Springfield",
}

CONVS = [
    {
        "id": "conv_pii-address",
        "created_at": "2026-04-07T10:00:00Z",
        "messages": [
            {"role": "system", "content": "You are Acme Bank's assistant."},
            {"role": "user", "content": "Hi there!"},
            {"role": "assistant", "content": "Hello! How can I help you today?"},
            {
                "role": "user",
                "content": "My name is Dana Whitfield. I moved house and need to update my address.",
            },
            {"role": "assistant", "content": "Of course. What is your customer ID and your date of birth?"},
            {
                "role": "user",
                "content": "C-1001, born 1985-03-14. If needed, call me on 07700 900123 or +44 20 7946 0958.",
            },
            call("c1", "verify_customer", customer_id="C-1001", date_of_birth="1985-03-14"),
            result("c1", {"verified": True, "customer_id": "C-1001", "name": "Dana Whitfield"}),
            {
                "role": "assistant",
                "content": "Thank you, Dana Whitfield, you are verified. What is the new address?",
            },
            {"role": "user", "content": "It's 48 Harbor Road, Springfield SW1A 1AA."},
            call(
                "c2", "update_address", customer_id="C-1001", address="48 Harbor Road, Springfield SW1A 1AA"
            ),
            result("c2", {**DANA, "address": "48 Harbor Road, Springfield SW1A 1AA"}),
            {
                "role": "assistant",
                "content": "Done: your address is now 48 Harbor Road, Springfield SW1A 1AA "
                "(change reference U-7781). We will write to dana.w@example.com to confirm.",
            },
        ],
    },
    {
        "id": "conv_pii-dispute",
        "created_at": "2026-04-07T11:00:00Z",
        "messages": [
            {"role": "user", "content": "Hello, I'm calling about my card 4111 1111 1111 1111."},
            {"role": "assistant", "content": "Sure, what about your card?"},
            {
                "role": "user",
                "content": "There is a charge from Skyline Electronics I never received; I want to dispute it.",
            },
            {
                "role": "assistant",
                "content": "I can help. What email is on your account, and a phone number?",
            },
            {"role": "user", "content": "priya.nair@example.com, and my mobile is (415) 555-0132."},
            call("d1", "find_customer", email="priya.nair@example.com"),
            result("d1", PRIYA),
            {
                "role": "assistant",
                "content": "Thanks, Priya Nair. Please confirm your customer ID and date of birth.",
            },
            {"role": "user", "content": "C-1003 and 1978-07-21."},
            call("d2", "verify_customer", customer_id="C-1003", date_of_birth="1978-07-21"),
            result("d2", {"verified": True, "customer_id": "C-1003", "name": "Priya Nair"}),
            call("d3", "list_transactions", account_id="A-2005"),
            result(
                "d3",
                [
                    {
                        "transaction_id": "T-4001",
                        "account_id": "A-2005",
                        "date": "2026-03-28",
                        "merchant": "Skyline Electronics",
                        "amount": 349.99,
                    }
                ],
            ),
            {
                "role": "assistant",
                "content": "I see $349.99 from Skyline Electronics on 2026-03-28. Is that the one?",
            },
            {
                "role": "user",
                "content": "Yes. The monitor I ordered never arrived. Card 4111-1111-1111-1111, the one ending 1111.",
            },
            call(
                "d4", "open_dispute", transaction_id="T-4001", reason="The monitor I ordered never arrived."
            ),
            result(
                "d4", {"dispute_id": "D-1", "transaction_id": "T-4001", "amount": 349.99, "status": "open"}
            ),
            {
                "role": "assistant",
                "content": "Dispute D-1 is open for $349.99. We will text (415) 555-0132 with updates.",
            },
        ],
    },
    {
        "id": "conv_pii-refund",
        "created_at": "2026-04-07T12:00:00Z",
        "messages": [
            {"role": "user", "content": "Good morning."},
            {"role": "assistant", "content": "Good morning! What can I do for you?"},
            {
                "role": "user",
                "content": "I'm Tom Becker, my name is Tom Becker. I want the refund for my gym charge sent abroad.",
            },
            {"role": "assistant", "content": "To which account, and how can we reach you?"},
            {
                "role": "user",
                "content": "IBAN GB82 WEST 1234 5698 7654 32, or DE89370400440532013000 if that fails. "
                "Phones: Berlin 030 12345678, Paris 06 12 34 56 78, email tom.becker@example.com. "
                "My other card is 5500000000000004. I live at 55 Hill Street, Ogdenville.",
            },
            {
                "role": "assistant",
                "content": "Noted: refunds to GB82WEST12345698765432 need a signed form; "
                "I have logged request RF-2231 and will email tom.becker@example.com.",
            },
        ],
    },
    {
        "id": "conv_pii-card-zh",
        "created_at": "2026-04-07T13:00:00+08:00",
        "messages": [
            {"role": "user", "content": "你好"},
            {"role": "assistant", "content": "您好，请问有什么可以帮您？"},
            {"role": "user", "content": "我叫李明，我的卡号6222020200112233446丢了，请帮我挂失。"},
            {"role": "assistant", "content": "好的，请提供您的手机号和地址。"},
            {"role": "user", "content": "手机 138 0013 8000，住在北京市朝阳区建国路88号3单元1201室。"},
            {
                "role": "assistant",
                "content": "已为李明登记挂失，工单号 LS-3390，新卡寄到北京市朝阳区建国路88号3单元1201室。",
            },
        ],
    },
]

# every personal value above, as the sweep in tests/integration/test_import_pii.py looks for it
ORIGINALS = [
    "Dana Whitfield",
    "Whitfield",
    "dana.w@example.com",
    "12 Elm Street",
    "07700 900123",
    "+44 20 7946 0958",
    "48 Harbor Road",
    "SW1A 1AA",
    "4111 1111 1111 1111",
    "4111-1111-1111-1111",
    "priya.nair@example.com",
    "(415) 555-0132",
    "Priya Nair",
    "301 River Road",
    "Tom Becker",
    "GB82 WEST 1234 5698 7654 32",
    "GB82WEST12345698765432",
    "DE89370400440532013000",
    "030 12345678",
    "06 12 34 56 78",
    "tom.becker@example.com",
    "5500000000000004",
    "55 Hill Street",
    "李明",
    "6222020200112233446",
    "138 0013 8000",
    "北京市朝阳区建国路88号3单元1201室",
]

if __name__ == "__main__":
    out = Path(__file__).with_name("pii_chats.jsonl")
    out.write_text("".join(json.dumps(c, ensure_ascii=False) + "\n" for c in CONVS), encoding="utf-8")
