"""redact() remembers the secret env values between calls, but never misses a changed environment."""

from __future__ import annotations

from usersim.core.secrets import redact


def test_a_key_set_or_changed_after_earlier_calls_is_still_redacted(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "first-secret-value-123")
    assert redact("key first-secret-value-123") == "key ***"
    monkeypatch.setenv("OPENAI_API_KEY", "second-secret-value-456")
    assert redact("key second-secret-value-456 and first-secret-value-123") == (
        "key *** and first-secret-value-123"
    )
    monkeypatch.setenv("MY_SERVICE_TOKEN", "token-value-789xyz")
    assert redact("t=token-value-789xyz") == "t=***"
    monkeypatch.delenv("MY_SERVICE_TOKEN")
    assert redact("token-value-789xyz") == "token-value-789xyz"
