"""Bearer tokens: JWTs signed with HS256 and the service's secret.

A token names its account, when it expires and the account's token generation, nothing
more: the account's scopes, admin flag, whether it is disabled and its current
generation are read at every request, so disabling an account, changing its scopes or
changing its password (which raises the generation) takes effect at once, without
waiting for its tokens to expire.
"""

from __future__ import annotations

import os
import secrets
import time
from dataclasses import dataclass
from pathlib import Path

import jwt

ALGORITHM = "HS256"
ISSUER = "teamrag"


class TokenError(Exception):
    """Why a token was refused, in words for the 401 response."""


@dataclass(frozen=True)
class Claims:
    account: str
    # The account's token generation when the token was issued (0 for tokens from before
    # generations existed, as for an account whose password never changed).
    generation: int = 0


def load_or_create_secret(configured: str | None, path: Path) -> str:
    """``TEAMRAG_JWT_SECRET`` when set, else a secret generated once and kept in ``path``
    (readable by its owner only), so tokens stay valid across restarts."""
    if configured:
        return configured
    if path.exists():
        return path.read_text(encoding="utf-8").strip()
    path.parent.mkdir(parents=True, exist_ok=True)
    value = secrets.token_urlsafe(48)
    # O_EXCL: two processes starting together keep the first one's secret.
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return path.read_text(encoding="utf-8").strip()
    with os.fdopen(fd, "w", encoding="utf-8") as file:
        file.write(value)
    return value


@dataclass(frozen=True)
class Tokens:
    secret: str
    days: float = 30.0

    def issue(
        self,
        account: str,
        *,
        generation: int = 0,
        days: float | None = None,
        now: float | None = None,
    ) -> str:
        issued = int(now if now is not None else time.time())
        lifetime = (self.days if days is None else days) * 86400
        claims = {
            "sub": account,
            "iat": issued,
            "exp": issued + int(lifetime),
            "iss": ISSUER,
            "gen": generation,
        }
        return jwt.encode(claims, self.secret, algorithm=ALGORITHM)

    def account_of(self, token: str) -> str:
        """The account a valid token names; :class:`TokenError` says why one is not valid."""
        return self.claims_of(token).account

    def claims_of(self, token: str) -> Claims:
        """What a valid token says; :class:`TokenError` says why one is not valid."""
        try:
            claims = jwt.decode(
                token,
                self.secret,
                algorithms=[ALGORITHM],
                issuer=ISSUER,
                options={"require": ["sub", "exp", "iat"]},
            )
        except jwt.ExpiredSignatureError:
            raise TokenError(
                "the token has expired: sign in again or ask for a new one "
                "(teamrag users token NAME)"
            ) from None
        except jwt.InvalidSignatureError:
            raise TokenError(
                "the token's signature does not match this service's secret "
                "(TEAMRAG_JWT_SECRET changed, or the token is from elsewhere)"
            ) from None
        except jwt.DecodeError:
            raise TokenError(
                "the token is malformed: expected a JWT (header.payload.signature)"
            ) from None
        except jwt.InvalidTokenError as exc:
            raise TokenError(f"the token is not valid: {exc}") from None
        generation = claims.get("gen", 0)
        if not isinstance(generation, int):
            raise TokenError("the token is not valid: its 'gen' claim is not a whole number")
        return Claims(str(claims["sub"]), generation)
