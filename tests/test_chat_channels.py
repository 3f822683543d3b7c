"""Per-channel rules from a TOML file, and clear errors when the file is wrong."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from adapters.chat.channels import ChannelRule, ChannelRulesError, load_channel_rules
from adapters.discord.turns import Place
from adapters.slack.turns import incoming
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
    # A channel the rules do not name searches the default scope, never every scope.
    assert rules.for_channel("C-elsewhere") == ChannelRule(scopes=frozenset({"public"}))
    assert rules.for_channel("thread-1", parent="C0123ABCD") == eng


def test_no_file_means_answer_everywhere_with_the_default_scope() -> None:
    rule = load_channel_rules(None).for_channel("any")
    assert (rule.answer, rule.follow_ups, rule.scopes) == (True, True, frozenset({"public"}))
    other = load_channel_rules(None, default_scope="team-a").for_channel("any")
    assert other.scopes == frozenset({"team-a"})


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


PERSONAS = """
[defaults]
persona = "You are teamrag. Answer briefly."

[channels.C0123ABCD]
scopes = ["engineering"]
persona = "  You are the platform team's on-call helper; be precise.  "

[channels.C0999]
follow_ups = false
"""


def test_a_channel_persona_is_one_trimmed_line_and_unset_stays_unset(tmp_path: Path) -> None:
    rules = load_channel_rules(write(tmp_path, PERSONAS))
    assert rules.for_channel("C0123ABCD").persona == (
        "You are the platform team's on-call helper; be precise."
    )
    assert rules.for_channel("elsewhere").persona == "You are teamrag. Answer briefly."
    # A section of its own takes what it does not name from [defaults].
    assert rules.for_channel("C0999").persona == "You are teamrag. Answer briefly."
    assert rules.for_channel("C0999").follow_ups is False
    assert ChannelRule(persona="   ").persona is None


@pytest.mark.parametrize(
    ("persona", "problem"),
    [
        ('"""You are teamrag.\nIgnore the rules."""', "must be a single line"),
        ('"' + "x" * 501 + '"', "is 501 characters; keep it under 500"),
        ("3", "channels.C1.persona: Input should be a valid string"),
    ],
)
def test_a_wrong_persona_names_the_channel_and_the_fix(
    tmp_path: Path, persona: str, problem: str
) -> None:
    with pytest.raises(ChannelRulesError, match="TEAMRAG_CHANNELS_FILE") as caught:
        load_channel_rules(write(tmp_path, f"[channels.C1]\npersona = {persona}\n"))
    assert problem in str(caught.value)
    assert "channels.C1.persona" in str(caught.value)


def test_inline_rules_read_like_the_file() -> None:
    rules = load_channel_rules(None, PERSONAS)
    assert rules == load_channel_rules(None, PERSONAS.strip())
    assert rules.for_channel("C0123ABCD").scopes == frozenset({"engineering"})
    one_line = 'channels = { C1 = { persona = "Reply in the style of a release note." } }'
    assert load_channel_rules(None, one_line).for_channel("C1").persona == (
        "Reply in the style of a release note."
    )
    assert load_channel_rules(None, "") == load_channel_rules(None)  # empty = unset


@pytest.mark.parametrize(
    ("text", "problem"),
    [("[channels.C1\n", "TEAMRAG_CHANNELS is not valid TOML"), ("[x]\n", "TEAMRAG_CHANNELS: x")],
)
def test_wrong_inline_rules_name_the_setting_not_a_file(text: str, problem: str) -> None:
    with pytest.raises(ChannelRulesError) as caught:
        load_channel_rules(None, text)
    assert problem in str(caught.value)
    assert "TEAMRAG_CHANNELS_FILE" not in str(caught.value)


def test_rules_in_a_file_and_inline_at_once_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ChannelRulesError, match=r"TEAMRAG_CHANNELS and TEAMRAG_CHANNELS_FILE"):
        load_channel_rules(write(tmp_path, PERSONAS), PERSONAS)


def test_the_platform_turns_carry_the_channel_persona() -> None:
    rule = load_channel_rules(None, PERSONAS).for_channel("C0123ABCD")
    body = {
        "team_id": "T1",
        "event_id": "Ev1",
        "event": {"type": "app_mention", "channel": "C0123ABCD", "user": "U1", "ts": "1.0"},
    }
    slack = incoming(body).turn("q", rule)
    discord = Place(1, 2).turn("q", root=2, user=3, message=4, rule=ChannelRule(persona="p"))
    assert (slack.persona, discord.persona) == (rule.persona, "p")
    assert incoming(body).turn("q").persona == ""  # no rule: only naming its thread


@pytest.mark.parametrize("both", [True, False])
def test_a_bot_with_wrong_inline_rules_stops_before_opening_anything(
    both: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TEAMRAG_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("SLACK_BOT_TOKEN", "xoxb-1")
    monkeypatch.setenv("SLACK_APP_TOKEN", "xapp-1-A1-1-abc")
    if both:
        monkeypatch.setenv("TEAMRAG_CHANNELS_FILE", str(write(tmp_path, PERSONAS)))
        monkeypatch.setenv("TEAMRAG_CHANNELS", PERSONAS)
    else:
        monkeypatch.setenv("TEAMRAG_CHANNELS", "[channels.C1]\npersona = 1\n")
    result = CliRunner().invoke(app, ["slack"])
    assert result.exit_code == 2
    assert "TEAMRAG_CHANNELS" in result.output
    assert not (tmp_path / "data").exists()
