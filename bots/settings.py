"""All configuration, from the environment and an optional ``.env`` file.

Names follow DESIGN.md: the well-known variables (``OPENAI_API_KEY``,
``CHROMA_URL``, ``REDIS_URL`` ...) keep their usual names; teamrag's own
settings start with ``TEAMRAG_``. Every field has a default that runs
embedded, with no server and no key.
"""

from __future__ import annotations

from datetime import tzinfo
from pathlib import Path
from typing import Literal

from pydantic import AliasChoices, Field, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from agent.tools.clock import resolve_zone
from agent.tools.errors import ToolError

MIN_SECRET_BYTES = 32
# Never echoed back in an error: a rejected secret may still be a real one, mistyped.
SECRET_FIELDS = frozenset({"jwt_secret"})


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_file=".env", env_file_encoding="utf-8", env_prefix="TEAMRAG_", extra="ignore"
    )

    data_dir: Path = Field(
        Path(".teamrag"), description="Folder for the embedded stores (catalog, vectors, BM25)."
    )
    default_scope: str = Field("public", description="Scope given to ingested documents.")
    glossary: Path | None = Field(
        None,
        description="A team glossary file (.toml with a [terms] table, or .csv with ko,en "
        "columns) whose Korean-English pairs add to or override the ones mined from the "
        "documents (`teamrag glossary` lists them).",
    )
    sources_scheduler: bool = Field(
        True,
        description="Sync the sources (`teamrag sources add`) at their intervals inside the "
        "bots and `teamrag serve`; false leaves it to `teamrag sync`.",
    )

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
    database_url: str | None = Field(
        None,
        validation_alias=AliasChoices("DATABASE_URL"),
        # Any other scheme reached psycopg, whose traceback named neither the variable
        # nor the fix.
        pattern=r"^postgres(?:ql)?(?:\+psycopg)?://",
        description="Postgres for thread memory, per-user memory and the document catalog "
        "with its keyword index (postgresql://user@host:5432/db); unset = SQLite files in "
        "the data folder.",
    )
    catalog_schema: str = Field(
        "teamrag",
        pattern=r"^[a-z_][a-z0-9_]{0,62}$",
        description="The Postgres schema of the shared document catalog (with DATABASE_URL).",
    )

    # LLM: used when OPENAI_API_KEY or OPENAI_BASE_URL is set, unless llm=off
    llm: Literal["auto", "off"] = Field(
        "auto", description="'off' forces extractive mode even when an endpoint is set."
    )
    fast_model: str = Field("gpt-4o-mini", description="Routing, planning and checks.")
    chat_model: str = Field("gpt-4o", description="Answers.")
    llm_timeout_s: float = Field(30.0, gt=0, le=600)
    llm_max_retries: int = Field(2, ge=0, le=10)

    # The workflow (defaults from the design documents)
    max_input_chars: int = Field(4000, ge=100, le=100_000)
    cache_threshold: float = Field(0.9, gt=0, le=1)
    cache_ttl_s: float = Field(86400.0, gt=0)
    min_sufficiency: float = Field(0.7, ge=0, le=1)
    max_iterations: int = Field(3, ge=1, le=10)
    max_answer_retries: int = Field(3, ge=0, le=10)
    timezone: str = Field(
        "Asia/Seoul", description="The team's time zone: the date/time tool and usage days."
    )
    persona: str = Field("", description="Replaces the default persona line of answer prompts.")

    # Feature flags (seed 003): defaults here, overridden per channel and per request
    cache: bool = True
    rerank: bool = True
    sufficiency_loop: bool = True
    groundedness_check: bool = True
    web_search: bool = Field(
        False, description="Off by default: web search sends the user's questions outside."
    )
    user_memory: bool = True
    speculative_generation: bool = True
    self_refine: bool = True
    context_compression: bool = False
    routing: bool = True
    dynamic_k: bool = True
    query_rewrite: bool = True
    hallucination_policy: Literal["fallback", "warn", "block"] = "fallback"
    route_models: dict[str, str] = Field(
        default_factory=dict,
        description='JSON: route (or "route:complexity") -> model, e.g. {"creative": "gpt-4o"}.',
    )
    max_tool_rounds: int = Field(4, ge=1, le=20)
    allow_private_urls: bool = Field(
        False, description="Let summarize_url fetch private-network addresses (tests only)."
    )

    # Web search (when TEAMRAG_WEB_SEARCH is on): Tavily with a key, else DuckDuckGo
    web_search_api_key: str | None = Field(
        None, validation_alias=AliasChoices("TEAMRAG_WEB_SEARCH_API_KEY", "TAVILY_API_KEY")
    )
    web_search_url: str = "https://api.tavily.com"
    duckduckgo_url: str = "https://html.duckduckgo.com"

    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = Field(
        "INFO", description="What the bots log to stderr."
    )
    log_format: Literal["text", "json"] = Field(
        "text", description="'json': one JSON object per line, for a log collector."
    )

    # Team deployment: state shared by every worker (unset = in-process, one worker)
    redis_url: str | None = Field(
        None,
        validation_alias=AliasChoices("REDIS_URL"),
        description="Rate limits, answer cache, de-duplication, thread locks, the turn queue, "
        "usage and feedback records, shared by every worker.",
    )
    redis_retry_s: float = Field(
        5.0,
        gt=0,
        le=300,
        description="After Redis fails, use in-process state this long before trying Redis again.",
    )
    redis_timeout_s: float = Field(
        2.0,
        gt=0,
        le=60,
        description="How long one Redis call may take before it counts as an outage (and the "
        "worker uses in-process state); raise it on a loaded host.",
    )
    rate_limit_per_minute: int = Field(
        20, ge=0, le=10_000, description="Questions per user per minute (per workspace); 0 = off."
    )
    queue_claim_s: float = Field(
        15.0,
        gt=0,
        le=3600,
        description="A queued turn whose worker has not been heard from "
        "for this long is taken over by another worker.",
    )
    queue_max_attempts: int = Field(
        3, ge=1, le=20, description="Give up on a turn after this many workers failed it."
    )
    turn_timeout_s: float = Field(
        180.0, gt=0, le=3600, description="End a turn that runs longer, with the reason."
    )
    ops_port: int = Field(
        0,
        ge=0,
        le=65535,
        description="Port of /healthz, /readyz and /metrics; 0 = off. "
        "The Slack HTTP server and teamrag serve keep only /healthz on their own port.",
    )
    langsmith_tracing: bool = Field(
        False,
        validation_alias=AliasChoices("LANGSMITH_TRACING", "LANGCHAIN_TRACING_V2"),
        description="Trace every turn to LangSmith (needs LANGSMITH_API_KEY).",
    )
    langsmith_api_key: str | None = Field(
        None, validation_alias=AliasChoices("LANGSMITH_API_KEY", "LANGCHAIN_API_KEY")
    )
    langsmith_project: str = Field(
        "teamrag", validation_alias=AliasChoices("LANGSMITH_PROJECT", "LANGCHAIN_PROJECT")
    )

    # Chat platforms (shared)
    channels_file: Path | None = Field(
        None,
        description="TOML file of per-channel rules (scopes, follow-ups, persona, where to "
        "answer).",
    )
    channels: str | None = Field(
        None, description="The same rules as inline TOML, for a deployment without files."
    )
    worker_threads: int = Field(
        32,
        ge=1,
        le=512,
        description="Threads for the blocking work of every answer under way "
        "(searches, embeddings, cache): a bot answering many at once waits on too few.",
    )
    chat_update_interval_s: float = Field(
        1.0, ge=0, le=10, description="Least time between two edits of a live chat message."
    )

    # Slack
    slack_bot_token: str | None = Field(None, validation_alias=AliasChoices("SLACK_BOT_TOKEN"))
    slack_app_token: str | None = Field(
        None,
        validation_alias=AliasChoices("SLACK_APP_TOKEN"),
        description="Set for Socket Mode (no public URL); unset runs the HTTP Events API server.",
    )
    slack_signing_secret: str | None = Field(
        None, validation_alias=AliasChoices("SLACK_SIGNING_SECRET")
    )
    slack_api_url: str | None = Field(
        None,
        validation_alias=AliasChoices("SLACK_API_URL"),
        description="Slack Web API base URL, e.g. http://127.0.0.1:9000/api/ for a local fake.",
    )
    slack_port: int = Field(3000, ge=1, le=65535, description="HTTP Events API port.")
    slack_streaming: bool = Field(
        True, description="Stream answers with chat.startStream; false posts and edits instead."
    )
    dm_continue_s: float = Field(
        1800.0,
        ge=0,
        description="A Slack DM message within this many seconds of the bot's last answer "
        "there continues that conversation; 0: every DM message starts its own.",
    )

    # Discord
    discord_token: str | None = Field(None, validation_alias=AliasChoices("DISCORD_TOKEN"))
    discord_api_base: str | None = Field(
        None, validation_alias=AliasChoices("DISCORD_API_BASE"), description="REST base URL."
    )
    discord_gateway_url: str | None = Field(
        None, validation_alias=AliasChoices("DISCORD_GATEWAY_URL")
    )
    discord_guild_id: int | None = Field(
        None, description="Sync slash commands to this guild only (instant; for development)."
    )
    discord_shard_count: int | None = Field(None, ge=1, description="Total shards (sharding).")
    discord_shard_ids: list[int] | None = Field(
        None, description="Shards this process runs, e.g. [0,1]; unset = all of them."
    )
    discord_allowed_channels: list[int] = Field(
        default_factory=list, description="Only answer in these channel ids (empty = all)."
    )
    discord_allowed_roles: list[int] = Field(
        default_factory=list, description="Only answer members with one of these role ids."
    )

    # What one request to the HTTP service (teamrag serve) may carry
    http_max_body_bytes: int = Field(
        1_048_576,
        ge=1024,
        le=1 << 30,
        description="A request body to `teamrag serve` over this many bytes is refused (413).",
    )
    http_max_history_chars: int = Field(
        100_000,
        ge=1000,
        le=10_000_000,
        description="The messages of one /v1/chat/completions request, all together, may "
        "hold this many characters (413 over it).",
    )

    # The HTTP service (teamrag serve)
    http_port: int = Field(8080, ge=1, le=65535, description="Port of `teamrag serve`.")
    jwt_secret: str | None = Field(
        None,
        description="Signs the HTTP service's bearer tokens (32 bytes at least); unset = a "
        "secret generated once and kept in the data folder (set it when several hosts serve).",
    )
    token_days: float = Field(
        30.0, gt=0, le=3650, description="How long a token from POST /api/auth/token lasts."
    )
    signin_failures_per_account: int = Field(
        5,
        ge=0,
        le=1000,
        description="Wrong passwords before an account's sign-in is locked; 0 = off.",
    )
    signin_failures_per_address: int = Field(
        20,
        ge=0,
        le=100_000,
        description="Wrong passwords from one client address before it is locked; 0 = off.",
    )
    signin_lockout_s: float = Field(
        30.0, gt=0, le=86400, description="The first sign-in lock; each further failure doubles it."
    )
    signin_max_lockout_s: float = Field(
        900.0, gt=0, le=86400, description="The longest a sign-in lock grows to."
    )
    signin_window_s: float = Field(
        900.0,
        gt=0,
        le=86400,
        description="Failed sign-ins are forgotten this long after the last one "
        "(or after the lock ends).",
    )
    signin_threads: int = Field(
        1,
        ge=1,
        le=64,
        description="Threads that check sign-in passwords (argon2), apart from the database's.",
    )

    @field_validator("timezone")
    @classmethod
    def _known_zone(cls, value: str) -> str:
        try:
            resolve_zone(value)
        except ToolError as exc:  # at start, not at the first date question or usage record
            raise ValueError(str(exc)) from None
        return value

    @field_validator("jwt_secret")
    @classmethod
    def _long_secret(cls, value: str | None) -> str | None:
        # A short HS256 secret is guessed offline from any one token, and then anyone can
        # forge a token for any account.
        # Empty reads as unset (a generated secret), as it always has.
        if value and len(value.encode()) < MIN_SECRET_BYTES:
            raise ValueError(
                f"{len(value.encode())} bytes is too short to sign tokens: use "
                f"{MIN_SECRET_BYTES} bytes at least, e.g. the output of "
                '`python -c "import secrets; print(secrets.token_urlsafe(48))"`, '
                "or unset it to have one generated in the data folder"
            )
        return value

    @property
    def zone(self) -> tzinfo:
        return resolve_zone(self.timezone)[0]

    @property
    def llm_enabled(self) -> bool:
        return self.llm == "auto" and bool(self.openai_api_key or self.openai_base_url)


class SettingsError(Exception):
    """A setting has a bad value; the message names the variable and the problem."""


class BotConfigError(SettingsError):
    """A bot cannot start with these settings (a missing token, say); the message says
    which variable to set."""


def load_settings() -> Settings:
    """Read the settings, turning validation errors into one line per bad variable."""
    from pydantic import ValidationError

    try:
        return Settings()
    except ValidationError as exc:
        problems = []
        for error in exc.errors():
            field = str(error["loc"][0]) if error["loc"] else "?"
            # A field read under its own name takes the prefix (llm: TEAMRAG_LLM); the loc
            # of an aliased one is its variable already (DATABASE_URL).
            name = f"TEAMRAG_{field.upper()}" if field in Settings.model_fields else field
            got = "(not shown)" if field in SECRET_FIELDS else repr(error.get("input"))
            problems.append(f"{name}: {error['msg']} (got {got})")
        raise SettingsError("invalid settings: " + "; ".join(problems)) from None
