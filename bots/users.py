"""``teamrag users``: the HTTP service's accounts (add, list, password, disable, enable,
token)."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console

from bots.common import err, fail, settings_or_exit

if TYPE_CHECKING:  # imported when a command runs (bots/cli.py)
    from adapters.http.accounts import AccountStore

users_app = typer.Typer(help="Accounts of the HTTP service (teamrag serve).", no_args_is_help=True)
out = Console()


def _store() -> AccountStore:
    from adapters.http.accounts import AccountStore
    from bots.serve import open_database

    try:
        return AccountStore(open_database(settings_or_exit()))
    except Exception as exc:  # a database that cannot be opened: say which and why
        raise fail(f"cannot open the accounts database: {type(exc).__name__}: {exc}") from None


@users_app.command("add")
def add(
    name: Annotated[str, typer.Argument(help="Account name (letters, digits, . _ - @).")],
    admin: Annotated[
        bool, typer.Option("--admin", help="May see /admin and everyone's usage.")
    ] = False,
    scope: Annotated[
        list[str] | None, typer.Option("--scope", help="A document scope it may search (repeat).")
    ] = None,
    password_stdin: Annotated[
        bool, typer.Option("--password-stdin", help="Read a password from stdin (first line).")
    ] = False,
) -> None:
    """Add an account; with --password-stdin it can also sign in with a password."""
    from adapters.http.accounts import AccountError
    from agent.retrieval.ingest import validate_scope

    password = _read_password("--password-stdin") if password_stdin else None
    try:
        scopes = tuple(validate_scope(s) for s in scope or ())
        account = _store().add(name, password=password, is_admin=admin, scopes=scopes)
    except (AccountError, ValueError) as exc:
        raise fail(str(exc), 2) from None
    err.print(
        f"added {account.name}{' (admin)' if account.is_admin else ''}; scopes: "
        f"{', '.join(account.scopes) or 'default'}; get a token with "
        f"`teamrag users token {account.name}`",
        highlight=False,
    )


@users_app.command("list")
def list_users() -> None:
    """List the accounts."""
    from rich.table import Table

    table = Table()
    for column in ("name", "admin", "scopes", "password", "disabled"):
        table.add_column(column)
    for a in _store().list():
        table.add_row(
            a.name,
            "yes" if a.is_admin else "",
            ", ".join(a.scopes) or "(default)",
            "yes" if a.has_password else "",
            "disabled" if a.disabled else "",
        )
    out.print(table)


def _read_password(what: str) -> str:
    """The first line of stdin: a password never goes on the command line (shell history,
    the process list)."""
    password = sys.stdin.readline().rstrip("\r\n")
    if not password:
        raise fail(f"{what}: stdin had no password on its first line", 2)
    return password


@users_app.command("password")
def password(name: Annotated[str, typer.Argument(help="The account.")]) -> None:
    """Set or change an account's password (from stdin's first line); revokes its tokens."""
    from adapters.http.accounts import AccountError

    try:
        _store().set_password(name, _read_password("teamrag users password"))
    except AccountError as exc:
        raise fail(str(exc), 2) from None
    err.print(
        f"password set for {name}; its earlier tokens no longer work; it can sign in at "
        "POST /api/auth/token"
    )


@users_app.command("disable")
def disable(name: Annotated[str, typer.Argument(help="The account to disable.")]) -> None:
    """Disable an account: its tokens stop working at once."""
    _set_disabled(name, True)


@users_app.command("enable")
def enable(name: Annotated[str, typer.Argument(help="The account to enable again.")]) -> None:
    """Enable a disabled account: its unexpired tokens work again."""
    _set_disabled(name, False)


def _set_disabled(name: str, disabled: bool) -> None:
    from adapters.http.accounts import AccountError

    try:
        _store().set_disabled(name, disabled)
    except AccountError as exc:
        raise fail(str(exc), 2) from None
    err.print(f"{'disabled' if disabled else 'enabled'} {name}")


@users_app.command("token")
def token(
    name: Annotated[str, typer.Argument(help="The account.")],
    days: Annotated[
        float | None, typer.Option(help="Lifetime in days (default TEAMRAG_TOKEN_DAYS).")
    ] = None,
) -> None:
    """Print a bearer token for the account (the only line on stdout)."""
    from bots.serve import tokens

    account = _store().get(name)
    if account is None:
        raise fail(f"no account named {name!r}: add it with `teamrag users add {name}`", 2)
    if account.disabled:
        raise fail(f"the account {name!r} is disabled", 2)
    print(tokens(settings_or_exit()).issue(name, generation=account.token_generation, days=days))
