"""redact() skips the scans that cannot match (a report page is mostly HTML attributes), and masks
exactly what the full patterns mask: compared with the patterns applied to the whole text."""

from __future__ import annotations

import random

from usersim.core import secrets
from usersim.core.secrets import redact

PIECES = [
    "api_key=",
    "API-KEY=",
    "apikey=",
    "Token=",
    "token=",
    "tokens=",
    "SECRET=",
    "secret =",
    "Authorization=",
    "authorization:",
    "Bearer ",
    "bearer\t",
    "BEARER  ",
    "sk-",
    "https://user:pw@",
    "@",
    "=",
    '"',
    "'",
    "&",
    " ",
    "\n",
    "abcDEF",
    "123456",
    "xyz_789",
    "class=",
    "id=",
    "key=",
    "ſecret=",
    "<td>",
    "密钥=",
    "tok",
    "en=",
]


def _full(text: str) -> str:
    """What redact did before it skipped scans: every pattern over the whole text."""
    text = secrets._KEY_PARAM.sub(lambda m: f"{m.group(1)}=***", text)
    text = secrets._BEARER.sub(r"\1***", text)
    if "sk-" in text:
        text = secrets._SK.sub("sk-***", text)
    return secrets._URL_CREDENTIALS.sub(r"\1***@", text) if "@" in text else text


def test_redact_masks_what_the_whole_text_scans_mask(monkeypatch):
    for var in [k for k in __import__("os").environ if secrets._SECRET_NAME.search(k)]:
        monkeypatch.delenv(var)
    rng = random.Random(27)
    for _ in range(5000):
        text = "".join(rng.choice(PIECES) for _ in range(rng.randint(1, 14)))
        assert redact(text) == _full(text), text


def test_a_key_parameter_deep_in_a_page_of_attributes_is_masked():
    page = (
        '<div class="msg" id="r1-m2">' * 3000 + "GET /v1?api_key=abc123secret&x=1" + '<a href="#r2">' * 3000
    )
    out = redact(page)
    assert "api_key=***&x=1" in out and "abc123secret" not in out
    assert redact('<p class="x">Authorization: Bearer abcdefgh1234</p>') == (
        '<p class="x">Authorization: Bearer ***</p>'
    )
