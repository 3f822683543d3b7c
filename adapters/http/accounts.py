"""Accounts of the HTTP service: a name, an optional password, admin or not, and the
document scopes the account may search.

Passwords are kept only as argon2id hashes (argon2-cffi's defaults). An account
without a password signs in with a token from ``teamrag users token`` only.
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass

import sqlalchemy as sa
from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError
from sqlalchemy.engine import Connection, RowMapping

from adapters.http.db import Database, accounts

_NAME = re.compile(r"^[\w.@-]{1,64}$")
_hasher = PasswordHasher()


class AccountError(ValueError):
    """A bad account name, a duplicate or an unknown account; the message says which."""


@dataclass(frozen=True)
class Account:
    name: str
    is_admin: bool = False
    scopes: tuple[str, ...] = ()
    disabled: bool = False
    has_password: bool = False
    created_at: float = 0.0
    # Tokens issued under an older generation (before the last password change) are refused.
    token_generation: int = 0

    def searchable(self, default_scope: str) -> frozenset[str]:
        """The scopes its questions search: its own, or the default scope when it has none.
        Never None, which the knowledge base reads as "every scope"."""
        return frozenset(self.scopes) if self.scopes else frozenset({default_scope})


def check_name(name: str) -> str:
    if not _NAME.match(name):
        raise AccountError(f"account name {name!r}: use 1-64 letters, digits, '.', '_', '-' or '@'")
    return name


def _account(row: RowMapping) -> Account:
    return Account(
        name=row["name"],
        is_admin=bool(row["is_admin"]),
        scopes=tuple(json.loads(row["scopes"])),
        disabled=bool(row["disabled"]),
        has_password=row["password_hash"] is not None,
        created_at=float(row["created_at"]),
        token_generation=int(row["token_generation"]),
    )


class AccountStore:
    def __init__(self, db: Database) -> None:
        self.db = db

    def add(
        self,
        name: str,
        *,
        password: str | None = None,
        is_admin: bool = False,
        scopes: tuple[str, ...] = (),
    ) -> Account:
        check_name(name)
        hashed = _hasher.hash(password) if password else None

        def insert(conn: Connection) -> None:
            if conn.execute(sa.select(accounts.c.name).where(accounts.c.name == name)).first():
                raise AccountError(f"account {name!r} already exists")
            conn.execute(
                accounts.insert().values(
                    name=name,
                    password_hash=hashed,
                    is_admin=is_admin,
                    scopes=json.dumps(sorted(set(scopes))),
                    disabled=False,
                    created_at=time.time(),
                )
            )

        self.db.transaction(insert)
        found = self.get(name)
        assert found is not None
        return found

    def get(self, name: str) -> Account | None:
        def select(conn: Connection) -> Account | None:
            row = conn.execute(sa.select(accounts).where(accounts.c.name == name)).mappings()
            first = row.first()
            return _account(first) if first else None

        return self.db.transaction(select)

    def list(self) -> list[Account]:
        def select(conn: Connection) -> list[Account]:
            rows = conn.execute(sa.select(accounts).order_by(accounts.c.name)).mappings()
            return [_account(r) for r in rows]

        return self.db.transaction(select)

    def set_disabled(self, name: str, disabled: bool = True) -> None:
        self._update(name, disabled=disabled)

    def set_password(self, name: str, password: str) -> None:
        """Set or replace the account's password (an account added without one can then
        sign in over HTTP). Every token issued before stops working: a password is
        changed because it may be known to someone else, who may hold a token too."""
        if not password:
            raise AccountError("the password is empty")
        self._update(
            name,
            password_hash=_hasher.hash(password),
            token_generation=accounts.c.token_generation + 1,
        )

    def _update(self, name: str, **values: object) -> None:
        def update(conn: Connection) -> int:
            done = conn.execute(accounts.update().where(accounts.c.name == name).values(**values))
            return done.rowcount

        if not self.db.transaction(update):
            raise AccountError(f"no account named {name!r} (see `teamrag users list`)")

    def credentials(self, name: str) -> tuple[Account | None, str | None]:
        """The account (None when unknown) and its password hash (None when it has none)."""

        def select(conn: Connection) -> RowMapping | None:
            return (
                conn.execute(sa.select(accounts).where(accounts.c.name == name)).mappings().first()
            )

        row = self.db.transaction(select)
        return (_account(row), row["password_hash"]) if row else (None, None)

    def verify_password(self, name: str, password: str) -> Account | None:
        """The account when the password is right and the account active; else None."""
        account, stored = self.credentials(name)
        return account if check_password(stored, password) and usable(account) else None


def check_password(stored: str | None, password: str) -> bool:
    """Whether ``password`` matches the hash ``stored``.

    No hash (an unknown name, or an account without a password) still costs one hash
    check, so the time taken does not tell which names exist.
    """
    try:
        _hasher.verify(stored or _DUMMY_HASH, password)
    except (VerificationError, InvalidHashError):
        return False
    return stored is not None


def usable(account: Account | None) -> bool:
    """An account that may sign in with its password: known, with one, not disabled."""
    return account is not None and account.has_password and not account.disabled


_DUMMY_HASH = _hasher.hash("not a password anyone has")
