"""TEAMRAG_TURN_TIMEOUT_S: the longest one turn may run before it ends with the reason.

Real parts: the runner as the bots compose it (``open_runner``), on the sample documents,
against the fake OpenAI server made slower than the limit.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from agent.events import Turn
from agent.retrieval.knowledge_base import KnowledgeBase
from bots.settings import SettingsError, load_settings
from bots.wiring import open_runner
from tests.fakes.openai_server import FakeOpenAI
from tests.support.http_support import http_settings


async def test_a_turn_longer_than_the_setting_ends_with_the_reason(
    sample_kb: KnowledgeBase, tmp_path: Path, fake_llm: FakeOpenAI
) -> None:
    fake_llm.latency_s = 5.0  # every model call: far beyond the one-second limit
    settings = http_settings(tmp_path, llm=fake_llm, turn_timeout_s=1.0, llm_timeout_s=30.0)
    async with open_runner(settings, sample_kb) as runner:
        assert runner.turn_timeout_s == 1.0
        final = await runner.ask(Turn("Postgres 백업은 며칠 동안 보관되나요?", thread_root="t"))
    assert "1 s" in final.answer or "1초" in final.answer, final.answer


@pytest.mark.parametrize("value", ["0", "-5", "3601", "soon"])
def test_a_bad_turn_timeout_is_refused_naming_the_variable(
    value: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.chdir(tmp_path)  # no .env of the repository
    monkeypatch.setenv("TEAMRAG_TURN_TIMEOUT_S", value)
    with pytest.raises(SettingsError, match="TEAMRAG_TURN_TIMEOUT_S"):
        load_settings()
