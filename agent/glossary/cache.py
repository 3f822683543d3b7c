"""The glossary of a knowledge base's current catalog generation, rebuilt when documents
change (at most every :data:`REFRESH_S` while an ingest is under way) or the team's file
does."""

from __future__ import annotations

import logging
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from agent.glossary.glossary import Glossary
from agent.glossary.loanwords import Loanwords
from agent.glossary.team_file import GlossaryFileError, read_team_file
from agent.retrieval.types import TermPair

if TYPE_CHECKING:
    from agent.retrieval.embeddings import Similarity

log = logging.getLogger(__name__)

# An ingest bumps the generation once per document: searches meanwhile keep the glossary
# they have for this long instead of rebuilding it per document.
REFRESH_S = 10.0


class _PairSource(Protocol):
    @property
    def generation(self) -> int: ...

    def term_pairs(self) -> list[tuple[str, TermPair]]: ...

    def vocabulary(self) -> list[str]: ...


class GlossaryCache:
    def __init__(
        self,
        catalog: _PairSource,
        team_file: Path | None = None,
        similarity: Similarity | None = None,
    ) -> None:
        self._catalog = catalog
        self._similarity = similarity  # the encoder's, to tell loanwords apart
        self.team_file = team_file
        self._lock = threading.Lock()
        self._built: tuple[int, float, float] | None = None  # generation, file mtime, when
        self._glossary = Glossary()
        self._warned_at = float("-inf")  # when a catalog failure was last logged

    def get(self, *, fresh: bool = False, strict: bool = False) -> Glossary:
        """The glossary in use. A team file that went missing or broke after start does not
        fail a search: its pairs are left out and the log says why once per change
        (``strict`` raises instead, for `teamrag glossary`). Nor does a catalog that cannot
        give its pairs: searches and prompts keep the glossary last built (at first, none)
        and the log says why, at most every :data:`REFRESH_S` while it lasts."""
        try:
            generation = self._catalog.generation
        except Exception as exc:  # the catalog's own error, whichever store it is
            if strict:
                raise
            return self._unavailable(exc)
        try:
            mtime = self.team_file.stat().st_mtime if self.team_file is not None else 0.0
        except OSError:
            mtime = -1.0  # gone: read_team_file says so
        with self._lock:
            built = self._built
            if built is not None and built[:2] == (generation, mtime):
                return self._glossary
            recent = built is not None and time.monotonic() - built[2] < REFRESH_S
            if recent and built is not None and built[1] == mtime and not fresh:
                return self._glossary
            try:
                team = read_team_file(self.team_file) if self.team_file is not None else []
            except GlossaryFileError as exc:
                if strict:
                    raise
                log.warning("team glossary left out: %s", exc)
                team = []
            try:
                mined = self._catalog.term_pairs()
                loanwords = Loanwords(self._catalog.vocabulary(), self._similarity)
            except Exception as exc:
                if strict:
                    raise
                return self._unavailable(exc)
            self._glossary = Glossary(mined, team, loanwords)
            self._built = (generation, mtime, time.monotonic())
            return self._glossary

    def _unavailable(self, exc: Exception) -> Glossary:
        """The glossary last built, when the catalog fails; the next call asks again."""
        now = time.monotonic()
        if now - self._warned_at >= REFRESH_S:
            self._warned_at = now
            log.warning("glossary pairs unavailable from the catalog (%s: %s); searches and "
                        "prompts go on with the %d pairs last read", type(exc).__name__, exc,
                        len(self._glossary))  # fmt: skip
        return self._glossary
