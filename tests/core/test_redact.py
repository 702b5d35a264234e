"""Secrets are masked in error texts; ordinary words next to credential-like names are not."""

from __future__ import annotations

from lsrep.redact import MASK, redact, register_secret


def test_configured_key_header_values_and_key_shapes_are_masked():
    register_secret("plainkeyvalue42xyz")
    text = ("401 {'Authorization': 'Bearer plainkeyvalue42xyz', 'X-Api-Key': 'abc123def456', "
            "'Host': '127.0.0.1'} token sk-proj-AbCdEf123456789 api_key=q1w2e3r4t5 "
            "Authorization: Bearer eyJhbGciOi.J9.x2 and the key plainkeyvalue42xyz again")
    out = redact(text)
    for secret in ("plainkeyvalue42xyz", "abc123def456", "sk-proj-AbCdEf123456789", "q1w2e3r4t5", "eyJhbGciOi"):
        assert secret not in out, secret
    assert "'Host': '127.0.0.1'" in out and out.count(MASK) >= 5


def test_ordinary_text_is_left_alone():
    for text in ("answerer.endpoint.api_key: unknown field", "the secret: nothing", "no credentials here",
                 "task-1234 failed", None, ""):
        assert redact(text) == text
