"""``POST /api/auth/token``: a name and password for a bearer token, with failed tries
limited per account and per client address (:mod:`adapters.http.signin_limit`) and the
password checked on its own threads (:mod:`adapters.http.passwords`)."""

from __future__ import annotations

import math
from typing import Annotated

from fastapi import APIRouter, Depends, HTTPException, Request
from fastapi.security import OAuth2PasswordRequestForm

from adapters.http.accounts import check_password, usable
from adapters.http.passwords import PasswordChecksBusy
from adapters.http.schemas import TokenResponse
from adapters.http.security import context

router = APIRouter(prefix="/api", tags=["auth"])


def too_many(reason: str, wait_s: float) -> HTTPException:
    seconds = max(1, math.ceil(wait_s))
    return HTTPException(
        429, f"{reason}: try again in {seconds} s", headers={"Retry-After": str(seconds)}
    )


@router.post(
    "/auth/token",
    response_model=TokenResponse,
    responses={
        401: {"description": "Wrong name or password"},
        429: {
            "description": "Too many failed sign-ins for the account or address; see Retry-After"
        },
    },
)
async def token(
    request: Request, form: Annotated[OAuth2PasswordRequestForm, Depends()]
) -> dict[str, str]:
    """Exchange a name and password (OAuth2 password form) for a bearer token."""
    ctx = context(request)
    name = form.username
    # Behind a proxy this is the proxy's address unless uvicorn trusts its
    # X-Forwarded-For (--forwarded-allow-ips / FORWARDED_ALLOW_IPS).
    address = request.client.host if request.client else "unknown"
    wait = await ctx.signin_limiter.wait(name, address)
    if wait is not None:
        raise too_many("too many failed sign-ins for this account or from this address", wait)
    account, stored = await ctx.accounts.db.call(ctx.accounts.credentials, name)
    try:
        right = await ctx.passwords.run(check_password, stored, form.password)
    except PasswordChecksBusy:
        raise too_many("too many sign-ins under way at once", 1) from None
    if not right or account is None or not usable(account):
        await ctx.signin_limiter.failed(name, address)
        raise HTTPException(
            401,
            "wrong name or password, or the account is disabled or has no password "
            "(set one with `teamrag users password NAME`, reading it from stdin)",
            headers={"WWW-Authenticate": "Bearer"},
        )
    await ctx.signin_limiter.succeeded(name)
    issued = ctx.tokens.issue(account.name, generation=account.token_generation)
    return {"access_token": issued, "token_type": "bearer"}
