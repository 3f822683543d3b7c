"""Per-channel rules from a TOML file, and clear errors when the file is wrong."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from adapters.chat.channels import ChannelRule, ChannelRulesError, load_channel_rules
from bots.cli import app

RULES = """
[defaults]
follow_ups = true

[channels.C0123ABCD]
scopes = ["engineering", "public"]
follow_ups = false

[channels."987654321098765432"]
answer = false
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "channels.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_rules_by_channel_with_defaults_and_a_thread_falling_back_to_its_parent(
    tmp_path: Path,
) -> None:
    rules = load_channel_rules(write(tmp_path, RULES))
    eng = rules.for_channel("C0123ABCD")
    assert eng.scopes == frozenset({"engineering", "public"})
    assert eng.follow_ups is False
    assert rules.for_channel("987654321098765432").answer is False
    assert rules.for_channel("C-elsewhere") == ChannelRule()
    assert rules.for_channel("thread-1", parent="C0123ABCD") == eng


def test_no_file_means_answer_everywhere_with_the_default_scope() -> None:
    rule = load_channel_rules(None).for_channel("any")
    assert (rule.answer, rule.follow_ups, rule.scopes) == (True, True, None)


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("[channels.C1\nscopes = 1", "not valid TOML"),
        ("[channels.C1]\nfollowups = false", "channels.C1.followups: Extra inputs"),
        ('[channels.C1]\nscopes = ["no spaces allowed"]', "channels.C1.scopes"),
        ("[defaults]\nanswer = 'maybe'", "defaults.answer"),
    ],
)
def test_a_wrong_file_names_the_variable_the_place_and_the_problem(
    tmp_path: Path, text: str, problem: str
) -> None:
    with pytest.raises(ChannelRulesError, match="TEAMRAG_CHANNELS_FILE") as caught:
        load_channel_rules(write(tmp_path, text))
    assert problem in str(caught.value)


def test_a_missing_file_says_how_to_fix_it(tmp_path: Path) -> None:
    with pytest.raises(ChannelRulesError, match=r"cannot be read.*unset it"):
        load_channel_rules(tmp_path / "nope.toml")


@pytest.mark.parametrize("bot", ["slack", "discord"])
def test_a_bot_with_a_wrong_channels_file_stops_before_opening_anything(
    bot: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TEAMRAG_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("SLACK_BOT_TOKEN", "xoxb-1")
    monkeypatch.setenv("SLACK_APP_TOKEN", "xapp-1-A1-1-abc")
    monkeypatch.setenv("DISCORD_TOKEN", "token")
    monkeypatch.setenv("TEAMRAG_CHANNELS_FILE", str(write(tmp_path, "[channels.C1\n")))
    result = CliRunner().invoke(app, [bot])
    assert result.exit_code == 2
    assert "is not valid TOML" in result.output
    assert not (tmp_path / "data").exists()  # nothing was opened or created
