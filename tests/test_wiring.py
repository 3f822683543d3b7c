"""Settings reach the agent: every flag and threshold set in the environment is used."""

from __future__ import annotations

import pytest

from bots.settings import Settings
from bots.wiring import agent_config, build_llms, parts_in_use


def test_environment_settings_reach_the_agent_config(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TEAMRAG_RERANK", "false")
    monkeypatch.setenv("TEAMRAG_USER_MEMORY", "0")
    monkeypatch.setenv("TEAMRAG_MAX_ITERATIONS", "2")
    monkeypatch.setenv("TEAMRAG_CACHE_THRESHOLD", "0.95")
    monkeypatch.setenv("TEAMRAG_MAX_INPUT_CHARS", "1000")
    config = agent_config(Settings())
    assert not config.features.rerank and not config.features.user_memory
    assert config.features.cache and config.features.groundedness_check
    assert config.max_iterations == 2 and config.cache_threshold == 0.95
    assert config.max_input_chars == 1000


def test_the_llm_is_used_only_when_an_endpoint_is_set(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "TEAMRAG_LLM"):
        monkeypatch.delenv(name, raising=False)
    assert build_llms(Settings()) is None
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    llms = build_llms(Settings())
    assert llms is not None and llms.fast_name == "gpt-4o-mini" and llms.chat_name == "gpt-4o"
    monkeypatch.setenv("TEAMRAG_LLM", "off")
    assert build_llms(Settings()) is None


def test_status_lines_say_which_parts_are_embedded(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "DATABASE_URL", "TAVILY_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("TEAMRAG_RERANK", "false")
    lines = parts_in_use(Settings())
    assert lines[0].startswith("answers: extractive") and "SQLite" in lines[1]
    assert lines[2] == "web search: off" and lines[3] == "stages switched off: rerank"
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:8000/v1")
    monkeypatch.setenv("DATABASE_URL", "postgresql://postgres@db/teamrag")
    lines = parts_in_use(Settings())
    assert "LLM at http://127.0.0.1:8000/v1" in lines[0] and "Postgres" in lines[1]


def test_status_says_where_the_shared_state_lives(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("REDIS_URL", raising=False)
    assert "set REDIS_URL for several workers" in parts_in_use(Settings())[-1]
    monkeypatch.setenv("REDIS_URL", "redis://cache:6379/0")
    assert parts_in_use(Settings())[-1].endswith(": Redis (REDIS_URL)")


def test_status_says_how_each_chat_platform_would_run(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("SLACK_BOT_TOKEN", "SLACK_APP_TOKEN", "DISCORD_TOKEN", "TEAMRAG_CHANNELS_FILE"):
        monkeypatch.delenv(name, raising=False)
    assert parts_in_use(Settings())[4:7] == [
        "slack: not set up (SLACK_BOT_TOKEN)",
        "discord: not set up (DISCORD_TOKEN)",
        "channel rules: none (answer everywhere, default scope)",
    ]
    monkeypatch.setenv("SLACK_BOT_TOKEN", "xoxb-1")
    monkeypatch.setenv("TEAMRAG_SLACK_PORT", "3100")
    assert parts_in_use(Settings())[4] == "slack: HTTP Events API on port 3100"
    monkeypatch.setenv("SLACK_APP_TOKEN", "xapp-1")
    monkeypatch.setenv("DISCORD_TOKEN", "abc")
    assert parts_in_use(Settings())[4:6] == [
        "slack: Socket Mode (SLACK_APP_TOKEN)",
        "discord: token set",
    ]
