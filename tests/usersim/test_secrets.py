from usersim.core.secrets import redact, redact_value


def test_redact_masks_env_values_params_tokens_and_url_credentials(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "live-key-0123456789")
    text = (
        "key live-key-0123456789; openai:gpt?api_key=abc123&x=1; Authorization: Bearer abcdef123456; "
        "sk-proj-ABCDEFGH123; http://user:pass@host/v1"
    )
    out = redact(text)
    for secret in ("live-key-0123456789", "abc123", "abcdef123456", "sk-proj-ABCDEFGH123", "user:pass"):
        assert secret not in out
    assert "x=1" in out and "host/v1" in out


def test_redact_value_masks_secret_keys_but_not_token_counts():
    value = {
        "args": {"api_key": "k", "max_tokens": 10, "auth_token": "t"},
        "h": ["Bearer xyz"],
        "prompt_tokens": 5,
    }
    assert redact_value(value) == {
        "args": {"api_key": "***", "max_tokens": 10, "auth_token": "***"},
        "h": ["***"],
        "prompt_tokens": 5,
    }
