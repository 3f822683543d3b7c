"""All configuration, from the environment and an optional ``.env`` file.

Names follow DESIGN.md: the well-known variables (``OPENAI_API_KEY``,
``CHROMA_URL``, ``REDIS_URL`` ...) keep their usual names; teamrag's own
settings start with ``TEAMRAG_``. Every field has a default that runs
embedded, with no server and no key.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import AliasChoices, Field
from pydantic_settings import BaseSettings, SettingsConfigDict


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_file=".env", env_file_encoding="utf-8", env_prefix="TEAMRAG_", extra="ignore"
    )

    data_dir: Path = Field(
        Path(".teamrag"), description="Folder for the embedded stores (catalog, vectors, BM25)."
    )
    default_scope: str = Field("public", description="Scope given to ingested documents.")

    # Embeddings
    embeddings: Literal["use", "openai"] = Field(
        "use", description="'use': the multilingual encoder in the wheel; 'openai': an endpoint."
    )
    embeddings_model: str = "text-embedding-3-small"
    embed_threads: int = Field(1, ge=1, le=16, description="BLAS threads for the USE encoder.")
    embed_processes: int = Field(
        2, ge=1, le=32, description="Worker processes that embed during ingestion (USE only)."
    )

    # Chunking
    chunk_size: int = Field(500, ge=100, le=8000)
    chunk_overlap: int = Field(60, ge=0, le=2000)

    # Retrieval
    top_k: int = Field(5, ge=1, le=50)

    # External services (unset = embedded)
    chroma_url: str | None = Field(None, validation_alias=AliasChoices("CHROMA_URL"))
    openai_api_key: str | None = Field(None, validation_alias=AliasChoices("OPENAI_API_KEY"))
    openai_base_url: str | None = Field(None, validation_alias=AliasChoices("OPENAI_BASE_URL"))


class SettingsError(Exception):
    """A setting has a bad value; the message names the variable and the problem."""


def load_settings() -> Settings:
    """Read the settings, turning validation errors into one line per bad variable."""
    from pydantic import ValidationError

    try:
        return Settings()
    except ValidationError as exc:
        problems = []
        for error in exc.errors():
            field = str(error["loc"][0]) if error["loc"] else "?"
            name = (
                field.upper() if field.isupper() or "_" not in field else f"TEAMRAG_{field.upper()}"
            )
            problems.append(f"{name}: {error['msg']} (got {error.get('input')!r})")
        raise SettingsError("invalid settings: " + "; ".join(problems)) from None
