"""``teamrag doctor`` as an operator runs it, against real servers and closed ports."""

from __future__ import annotations

import socket
import uuid
from pathlib import Path

import psycopg
import pytest
import typer
from typer.testing import CliRunner

from agent.retrieval.catalog import DocumentRecord
from agent.retrieval.catalog_postgres import PostgresCatalog
from agent.retrieval.embeddings import UniversalSentenceEncoder
from agent.retrieval.ingest import Ingestor
from agent.retrieval.loaders.ocr import ocr_status
from agent.retrieval.types import Chunk
from agent.sources.base import SourceSpec
from agent.sources.store import SqliteSourceStore
from bots.doctor import doctor as doctor_command
from tests.conftest import open_kb
from tests.fakes.discord_payloads import TOKEN as DISCORD_TOKEN
from tests.fakes.discord_server import FakeDiscord
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.slack_server import APP_TOKEN, BOT_TOKEN, FakeSlack
from tests.support.postgres_support import PG_URL
from tests.support.servers import chroma_server, free_port

pytest_plugins = ("tests.support.slack_fixtures",)

# The command alone, so these tests do not depend on every other command importing.
app = typer.Typer()
app.command(name="doctor")(doctor_command)
app.callback()(lambda: None)  # a group, invoked as `doctor` like the real CLI

SETTINGS = (
    "REDIS_URL",
    "CHROMA_URL",
    "DATABASE_URL",
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "SLACK_BOT_TOKEN",
    "SLACK_APP_TOKEN",
    "SLACK_SIGNING_SECRET",
    "SLACK_API_URL",
    "DISCORD_TOKEN",
    "DISCORD_API_BASE",
    "LANGSMITH_TRACING",
    "LANGSMITH_API_KEY",
    "TEAMRAG_CHANNELS",
    "TEAMRAG_CHANNELS_FILE",
)


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory: pytest.TempPathFactory, embedder: UniversalSentenceEncoder) -> Path:
    """A data folder with one document ingested (doctor only reads it)."""
    folder = tmp_path_factory.mktemp("doctor") / "data"
    docs = folder.parent / "docs"
    docs.mkdir()
    (docs / "backups.md").write_text("# Backups\n\nPostgres backups are kept for 35 days.\n")
    kb = open_kb(folder, embedder)
    try:
        assert not Ingestor(kb).run([docs]).failed
    finally:
        kb.close()
    return folder


@pytest.fixture
def clean_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in SETTINGS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)  # no .env from the developer's folder


def doctor(data_dir: Path, **env: str) -> tuple[int, str]:
    # A wide console: the assertions read whole sentences, not wrapped cells.
    values = {"TEAMRAG_DATA_DIR": str(data_dir), "COLUMNS": "1000"} | env
    result = CliRunner().invoke(app, ["doctor", "--timeout", "3"], env=values)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    return result.exit_code, result.output


def row(output: str, part: str) -> str:
    cells = [(line, line.split("│")) for line in output.splitlines()]
    (line,) = [line for line, cell in cells if len(cell) > 2 and cell[1].strip() == part]
    return line


def problem(output: str, part: str) -> str:
    """The problem line of ``part`` and its fix line."""
    lines = output.splitlines()
    (at,) = [i for i, line in enumerate(lines) if line.startswith(f"✗ {part}: ")]
    fix = lines[at + 1] if at + 1 < len(lines) and lines[at + 1].startswith("  fix: ") else ""
    return lines[at] + "\n" + fix


def postgres_reachable() -> bool:
    try:
        with socket.create_connection(("127.0.0.1", 5432), timeout=0.5):
            return True
    except OSError:
        return False


def test_everything_embedded_is_fine(data_dir: Path, clean_env: None) -> None:
    code, output = doctor(data_dir)
    assert code == 0, output
    for part in ("Redis", "Chroma", "Postgres", "LLM"):
        assert " embedded " in row(output, part) and " ok " in row(output, part)
    assert "1 documents" in row(output, "knowledge base")
    assert "local: documents and keyword index, sources and their sync state, thread" in row(
        output, "stores"
    )
    assert "All good." in output


def test_every_external_part_answering(
    data_dir: Path,
    clean_env: None,
    tmp_path: Path,
    redis_url: str,
    fake_llm: FakeOpenAI,
    fake_slack: FakeSlack,
) -> None:
    """A team's deployment: Redis, a Chroma server, Postgres, an LLM, Slack and Discord."""
    discord = FakeDiscord().start()
    env = {
        "REDIS_URL": redis_url,
        "OPENAI_BASE_URL": fake_llm.base_url,
        "OPENAI_API_KEY": "x",
        "SLACK_BOT_TOKEN": BOT_TOKEN,
        "SLACK_SIGNING_SECRET": "s3cret",
        "SLACK_API_URL": fake_slack.base_url,
        "DISCORD_TOKEN": DISCORD_TOKEN,
        "DISCORD_API_BASE": discord.api_base,
    }
    schema = f"t_{uuid.uuid4().hex[:12]}"
    if postgres_reachable():  # the shared catalog then lives there: one document in it
        env.update(DATABASE_URL=PG_URL, TEAMRAG_CATALOG_SCHEMA=schema)
        catalog = PostgresCatalog(PG_URL, schema)
        record = DocumentRecord("d1", "/docs/backups.md", "public", "Backups", "h", 1, "p", 0.0)
        text = "Postgres backups are kept for 35 days."
        chunk = Chunk(
            "d1-0", "d1", 0, text, record.source, "Backups", "public", None, "", None, "h"
        )
        catalog.replace_document(record, [chunk], [text.lower().split()])
        catalog.close()
    try:
        with chroma_server(tmp_path / "chroma") as chroma_url:
            code, output = doctor(data_dir, CHROMA_URL=chroma_url, **env)
    finally:
        discord.stop()
        if "DATABASE_URL" in env:
            with psycopg.connect(PG_URL, autocommit=True) as db:
                db.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
    assert code == 0, output
    if "DATABASE_URL" in env:
        assert f"Postgres schema {schema}" in row(output, "knowledge base"), output
        assert "1 documents" in row(output, "knowledge base"), output
        assert "shared: documents and keyword index, sources and their sync state, thread" in row(
            output, "stores"
        ), output
    external = ["Redis", "Chroma", "LLM", "Slack", "Discord"]
    external += ["Postgres"] if "DATABASE_URL" in env else []
    for part in external:
        assert " external " in row(output, part) and " ok " in row(output, part), output
    assert redis_url in row(output, "Redis") and chroma_url in row(output, "Chroma")
    assert fake_llm.models_calls == 1
    assert [c.method for c in fake_slack.calls] == ["auth.test"]


def test_redis_at_a_closed_port(data_dir: Path, clean_env: None) -> None:
    url = f"redis://127.0.0.1:{free_port()}/0"
    code, output = doctor(data_dir, REDIS_URL=url)
    assert code == 1
    assert url in row(output, "Redis") and " problem " in row(output, "Redis")
    assert "ConnectionError" in problem(output, "Redis")
    assert "fix: start Redis at REDIS_URL" in problem(output, "Redis")
    assert "unset REDIS_URL" in problem(output, "Redis")
    assert "1 problem(s)" in output


def test_unreachable_llm_and_a_refused_key(
    data_dir: Path, clean_env: None, fake_llm: FakeOpenAI
) -> None:
    gone = f"http://127.0.0.1:{free_port()}/v1"
    code, output = doctor(data_dir, OPENAI_BASE_URL=gone)
    assert code == 1
    assert gone in row(output, "LLM") and "cannot connect" in problem(output, "LLM")
    assert "TEAMRAG_LLM=off" in problem(output, "LLM")

    fake_llm.models_fail_with = 401
    code, output = doctor(data_dir, OPENAI_BASE_URL=fake_llm.base_url, OPENAI_API_KEY="bad")
    assert code == 1
    assert "refused the key (HTTP 401)" in problem(output, "LLM")
    assert "fix: set OPENAI_API_KEY" in problem(output, "LLM")


def test_postgres_at_a_closed_port_hides_the_password(data_dir: Path, clean_env: None) -> None:
    url = f"postgresql://app:hunter2@127.0.0.1:{free_port()}/teamrag"
    code, output = doctor(data_dir, DATABASE_URL=url)
    assert code == 1
    assert "Connection refused" in problem(output, "Postgres")
    assert "unset DATABASE_URL" in problem(output, "Postgres")
    assert "hunter2" not in output and "app:***@127.0.0.1" in row(output, "Postgres")


def test_refused_chat_tokens(data_dir: Path, clean_env: None, fake_slack: FakeSlack) -> None:
    discord = FakeDiscord().start()
    try:
        code, output = doctor(
            data_dir,
            SLACK_BOT_TOKEN="xoxb-revoked",
            SLACK_SIGNING_SECRET="s3cret",
            SLACK_API_URL=fake_slack.base_url,
            DISCORD_TOKEN="not-the-token",
            DISCORD_API_BASE=discord.api_base,
        )
    finally:
        discord.stop()
    assert code == 1
    assert "auth.test failed: invalid_auth" in problem(output, "Slack")
    assert "fix: set SLACK_BOT_TOKEN" in problem(output, "Slack")
    assert "HTTP 401" in problem(output, "Discord")
    assert "fix: set DISCORD_TOKEN" in problem(output, "Discord")


def test_socket_mode_checks_the_app_token(
    data_dir: Path, clean_env: None, fake_slack: FakeSlack
) -> None:
    env = {"SLACK_BOT_TOKEN": BOT_TOKEN, "SLACK_API_URL": fake_slack.base_url}
    code, output = doctor(data_dir, SLACK_APP_TOKEN=APP_TOKEN, **env)
    assert code == 0, output
    assert [c.method for c in fake_slack.calls] == ["auth.test", "apps.connections.open"]

    code, output = doctor(data_dir, SLACK_APP_TOKEN="xapp-revoked", **env)
    assert code == 1
    assert "apps.connections.open failed: invalid_auth" in problem(output, "Slack")
    assert "fix: set SLACK_APP_TOKEN" in problem(output, "Slack")


def test_bot_settings_that_cannot_start(data_dir: Path, clean_env: None) -> None:
    """Checked before any connection: a Slack HTTP bot without its signing secret."""
    gone = f"http://127.0.0.1:{free_port()}/api/"
    code, output = doctor(data_dir, SLACK_BOT_TOKEN=BOT_TOKEN, SLACK_API_URL=gone)
    assert code == 1
    assert "SLACK_SIGNING_SECRET is not set" in problem(output, "Slack settings")
    assert "cannot connect" in problem(output, "Slack")  # and Slack itself is not there


def test_configuration_problems(
    data_dir: Path, clean_env: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rules = tmp_path / "channels.toml"
    rules.write_text('[channels.C1]\nscopes = "not a list"\n')
    code, output = doctor(data_dir, TEAMRAG_CHANNELS_FILE=str(rules))
    assert code == 1
    assert "TEAMRAG_CHANNELS_FILE" in problem(output, "channel rules")

    code, output = doctor(data_dir, TEAMRAG_TOP_K="many")
    assert code == 1
    assert "TEAMRAG_TOP_K" in problem(output, "settings")


def test_data_folder_unwritable_or_empty(data_dir: Path, clean_env: None, tmp_path: Path) -> None:
    not_a_folder = tmp_path / "file"
    not_a_folder.write_text("")
    code, output = doctor(not_a_folder)
    assert code == 1
    assert "not writable" in problem(output, "data folder")
    assert "fix: set TEAMRAG_DATA_DIR" in problem(output, "data folder")

    code, output = doctor(tmp_path / "fresh")
    assert code == 1
    assert "nothing has been ingested" in problem(output, "knowledge base")
    assert "fix: run `teamrag ingest PATH`" in problem(output, "knowledge base")


def test_registered_in_the_cli() -> None:
    from bots.cli import app as cli

    result = CliRunner().invoke(cli, ["doctor", "--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0 and "every connection" in result.output


def test_sources_allowed_to_reach_private_addresses_are_listed(
    clean_env: None, tmp_path: Path
) -> None:
    folder = tmp_path / "data"
    store = SqliteSourceStore(folder / "catalog.sqlite3")
    try:
        store.add(SourceSpec("intranet", "web", "http://wiki.corp/", "eng", 0, {}, True))
        store.add(SourceSpec("public", "web", "https://docs.example.com/", "eng", 0, {}))
    finally:
        store.close()
    _, output = doctor(folder)
    line = row(output, "private addresses")
    assert "allowed for intranet (web http://wiki.corp/)" in line and "public" not in line
    _, output = doctor(tmp_path / "no-sources")
    assert "private addresses" not in output


def test_doctor_says_whether_scanned_pdfs_can_be_read(
    data_dir: Path, clean_env: None, tmp_path: Path
) -> None:
    """OCR is optional: without tesseract the row says what is left out and the install
    line, and the deployment is still all good."""
    empty = tmp_path / "no-tesseract"
    empty.mkdir()
    code, output = doctor(data_dir, PATH=str(empty))
    assert code == 0, output
    line = row(output, "OCR (scanned PDFs)")
    assert "off, scanned PDF pages are left out: tesseract is not installed" in line
    assert "apt-get install -y tesseract-ocr tesseract-ocr-kor" in line
    available, said = ocr_status()
    if not available:
        pytest.skip(f"OCR is not available on this machine: {said}")
    assert "available: tesseract" in row(doctor(data_dir)[1], "OCR (scanned PDFs)")
