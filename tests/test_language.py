"""Which language a message is answered in."""

from __future__ import annotations

import pytest

from agent.wording.language import detect_language


@pytest.mark.parametrize(
    ("text", "language"),
    [
        ("Postgres 백업은 며칠 동안 보관되나요?", "ko"),
        # Korean grammar on the last word, around long English names (were answered in English)
        ("PagerDuty란?", "ko"),
        ("teamrag ingest --prune 옵션은 뭐야?", "ko"),
        ("WireGuard client 설치는?", "ko"),
        # English around a Korean word
        ("What does 온콜 mean?", "en"),
        ("Is 온콜 handover on Monday?", "en"),
        ("When is the on-call handover?", "en"),
        ("3*(4+5)", "en"),
        ("", "en"),
    ],
)
def test_the_answer_language(text: str, language: str) -> None:
    assert detect_language(text) == language
