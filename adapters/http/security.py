"""Who is asking: the bearer token checked, its account loaded, at every request."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, HTTPException, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from adapters.http.accounts import Account
from adapters.http.context import HttpContext
from adapters.http.tokens import TokenError

_bearer = HTTPBearer(
    auto_error=False, description="A token from POST /api/auth/token or `teamrag users token NAME`."
)


def context(request: Request) -> HttpContext:
    ctx: HttpContext = request.app.state.ctx
    return ctx


def unauthorized(reason: str) -> HTTPException:
    return HTTPException(401, reason, headers={"WWW-Authenticate": "Bearer"})


async def current_account(
    request: Request,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
) -> Account:
    if credentials is None:
        raise unauthorized(
            "no bearer token: send 'Authorization: Bearer <token>' (get one from "
            "POST /api/auth/token or `teamrag users token NAME`)"
        )
    ctx = context(request)
    try:
        claims = ctx.tokens.claims_of(credentials.credentials)
    except TokenError as exc:
        raise unauthorized(str(exc)) from None
    name = claims.account
    account = await ctx.accounts.db.call(ctx.accounts.get, name)
    if account is None:
        raise unauthorized(f"the account {name!r} no longer exists")
    if account.disabled:
        raise unauthorized(f"the account {name!r} is disabled (ask an admin to enable it)")
    if claims.generation != account.token_generation:
        raise unauthorized(
            f"the token was issued before the password of {name!r} changed: sign in again "
            "with the new password (POST /api/auth/token)"
        )
    return account


async def admin_account(account: Annotated[Account, Depends(current_account)]) -> Account:
    if not account.is_admin:
        raise HTTPException(
            403, f"{account.name!r} is not an admin (teamrag users add NAME --admin)"
        )
    return account


CurrentAccount = Annotated[Account, Depends(current_account)]
AdminAccount = Annotated[Account, Depends(admin_account)]
