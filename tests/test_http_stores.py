"""The HTTP service's accounts and conversations on SQLite and Postgres, the `teamrag users`
commands, and the quota shared by two workers through Redis."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from adapters.http.accounts import AccountError, AccountStore
from adapters.http.conversations import ConversationStore, Message, new_id
from adapters.http.db import MIGRATIONS, Database, engine_url
from adapters.http.tokens import Tokens, load_or_create_secret
from agent.retrieval.knowledge_base import KnowledgeBase
from bots.cli import app
from tests.support.http_support import http_service, http_settings
from tests.support.postgres_support import PG_URL


@pytest.fixture
def postgres_url() -> Iterator[str]:
    """A schema of its own for each test, dropped afterwards: concurrent runs never meet."""
    psycopg = pytest.importorskip("psycopg")
    schema = f"teamrag_http_{uuid.uuid4().hex[:10]}"
    try:
        with psycopg.connect(PG_URL, connect_timeout=2, autocommit=True) as conn:
            conn.execute(f"CREATE SCHEMA {schema}")
    except psycopg.OperationalError as exc:
        pytest.skip(f"Postgres unreachable at {PG_URL}: {' '.join(str(exc).split())}")
    yield f"{PG_URL}?options=-csearch_path%3D{schema}"
    with psycopg.connect(PG_URL, autocommit=True) as conn:
        conn.execute(f"DROP SCHEMA {schema} CASCADE")


@pytest.fixture(params=["sqlite", "postgres"])
def database(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[str | None, Path]]:
    url = request.getfixturevalue("postgres_url") if request.param == "postgres" else None
    yield url, tmp_path


async def test_accounts_and_conversations_survive_reopening(
    database: tuple[str | None, Path],
) -> None:
    url, folder = database
    db = Database.open(url, folder)
    assert db.version == len(MIGRATIONS)
    accounts = AccountStore(db)
    accounts.add("minji", password="비밀", is_admin=True, scopes=("ops", "public"))
    with pytest.raises(AccountError, match="already exists"):
        accounts.add("minji")
    with pytest.raises(AccountError, match="account name"):
        accounts.add("민지 김")  # a space
    store = ConversationStore(db)
    made = await store.create("minji", "백업 질문")
    await store.add_message(Message(new_id(), made.id, "user", "백업은?", 1.0))
    answer = Message(new_id(), made.id, "assistant", "35일 [1]", 2.0, [{"number": 1}], {"x": 1})
    await store.add_message(answer)
    db.close()

    db = Database.open(url, folder)  # a restart: migrations already applied, data kept
    accounts, store = AccountStore(db), ConversationStore(db)
    account = accounts.get("minji")
    assert account is not None and account.is_admin and account.scopes == ("ops", "public")
    assert accounts.verify_password("minji", "비밀") == account
    assert accounts.verify_password("minji", "wrong") is None
    assert [c.id for c in await store.page("minji", 10, 0)] == [made.id]
    assert await store.get(made.id, "jisoo") is None
    kept = await store.messages(made.id)
    assert [(m.role, m.content) for m in kept] == [("user", "백업은?"), ("assistant", "35일 [1]")]
    assert kept[1].sources == [{"number": 1}] and kept[1].meta == {"x": 1}
    assert await store.message_owner(answer.id) == ("minji", "assistant")
    assert await store.delete(made.id, "minji")
    assert await store.messages(made.id) == []
    db.close()


def test_a_password_change_raises_the_token_generation_after_an_upgrade(
    database: tuple[str | None, Path],
) -> None:
    """A database from before the token generation (schema version 1) gets the column on
    open, every account at 0; a password change raises it, which revokes earlier tokens."""
    import sqlalchemy as sa

    url, folder = database
    db = Database.open(url, folder)
    AccountStore(db).add("minji", password="비밀")
    with db.engine.begin() as conn:  # back to what version 1 left
        conn.execute(sa.text("ALTER TABLE teamrag_accounts DROP COLUMN token_generation"))
        conn.execute(sa.text("DELETE FROM teamrag_http_schema WHERE version > 1"))
    db.close()

    db = Database.open(url, folder)
    assert db.version == len(MIGRATIONS)
    accounts = AccountStore(db)
    before = accounts.get("minji")
    assert before is not None and before.token_generation == 0
    accounts.set_password("minji", "새 비밀")
    accounts.set_password("minji", "또 새 비밀")
    after = accounts.get("minji")
    assert after is not None and after.token_generation == 2
    db.close()


def test_engine_url_uses_psycopg_3_for_postgres(tmp_path: Path) -> None:
    assert engine_url("postgresql://u@h/db", tmp_path) == "postgresql+psycopg://u@h/db"
    assert engine_url("postgres://u@h/db", tmp_path) == "postgresql+psycopg://u@h/db"
    assert engine_url(None, tmp_path) == f"sqlite:///{tmp_path / 'http.sqlite'}"


def test_the_generated_secret_is_kept(tmp_path: Path) -> None:
    path = tmp_path / "jwt_secret"
    first = load_or_create_secret(None, path)
    assert len(first) > 40 and load_or_create_secret(None, path) == first
    assert oct(path.stat().st_mode & 0o777) == "0o600"
    assert load_or_create_secret("configured", path) == "configured"


def test_users_commands(tmp_path: Path) -> None:
    runner = CliRunner()
    env = {"TEAMRAG_DATA_DIR": str(tmp_path / "data"), "TEAMRAG_JWT_SECRET": "s" * 40}
    added = runner.invoke(app, ["users", "add", "minji", "--admin", "--scope", "ops"], env=env)
    assert added.exit_code == 0, added.output
    with_password = runner.invoke(
        app, ["users", "add", "jisoo", "--password-stdin"], input="비밀번호\n", env=env
    )
    assert with_password.exit_code == 0, with_password.output
    again = runner.invoke(app, ["users", "add", "minji"], env=env)
    assert again.exit_code == 2 and "already exists" in again.output
    bad_scope = runner.invoke(app, ["users", "add", "x", "--scope", "no spaces"], env=env)
    assert bad_scope.exit_code == 2
    listed = runner.invoke(app, ["users", "list"], env=env)
    assert "minji" in listed.output and "jisoo" in listed.output and "ops" in listed.output

    token = runner.invoke(app, ["users", "token", "minji", "--days", "1"], env=env)
    assert token.exit_code == 0
    lines = token.stdout.splitlines()
    assert len(lines) == 1 and Tokens("s" * 40).account_of(lines[0]) == "minji"

    assert runner.invoke(app, ["users", "disable", "jisoo"], env=env).exit_code == 0
    refused = runner.invoke(app, ["users", "token", "jisoo"], env=env)
    assert refused.exit_code == 2 and "disabled" in refused.output
    unknown = runner.invoke(app, ["users", "disable", "nobody"], env=env)
    assert unknown.exit_code == 2 and "no account" in unknown.output
    assert runner.invoke(app, ["users", "enable", "jisoo"], env=env).exit_code == 0
    assert runner.invoke(app, ["users", "token", "jisoo"], env=env).exit_code == 0

    # minji was added without a password: she gets one, from stdin, never argv.
    listed = runner.invoke(app, ["users", "list"], env=env)
    assert not _has_password(listed.output, "minji")
    set_it = runner.invoke(app, ["users", "password", "minji"], input="새 비밀번호\n", env=env)
    assert set_it.exit_code == 0, set_it.output
    assert _has_password(runner.invoke(app, ["users", "list"], env=env).output, "minji")
    empty = runner.invoke(app, ["users", "password", "minji"], input="\n", env=env)
    assert empty.exit_code == 2 and "no password on its first line" in empty.output
    nobody = runner.invoke(app, ["users", "password", "nobody"], input="x\n", env=env)
    assert nobody.exit_code == 2 and "no account named 'nobody'" in nobody.output


def _has_password(table: str, name: str) -> bool:
    """The "password" column of ``teamrag users list`` for ``name``."""
    row = next(line for line in table.splitlines() if f" {name} " in line)
    cells = [cell.strip() for cell in row.split("│")[1:-1]]  # name, admin, scopes, password
    return cells[3] == "yes"


@pytest.mark.slow
async def test_the_quota_is_shared_by_two_workers_through_redis(
    sample_kb: KnowledgeBase, tmp_path: Path, redis_url: str
) -> None:
    settings = http_settings(tmp_path, REDIS_URL=redis_url, rate_limit_per_minute=2)
    async with (
        http_service(sample_kb, settings) as one,
        http_service(sample_kb, settings) as two,
    ):
        token = one.add_user("minji")
        async with one.client(token) as first, two.client(token) as second:
            assert (await first.post("/api/chat", json={"query": "안녕"})).status_code == 200
            assert (await second.post("/api/chat", json={"query": "hello"})).status_code == 200
            refused = await first.post("/api/chat", json={"query": "hi again"})
            assert refused.status_code == 429 and int(refused.headers["Retry-After"]) >= 1
            # The conversation asked on one worker is readable on the other.
            listed = (await second.get("/api/conversations")).json()["items"]
            assert len(listed) == 2
