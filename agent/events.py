"""What goes into the agent (a :class:`Turn`) and what comes out (an event stream).

Adapters only ever see these types: they build a Turn from a platform message
and render Progress, Token and Final events. Everything is a plain dataclass
so the stream crosses threads and serialises to JSON without surprises.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from agent.wording import replies
from agent.wording.language import detect_language

Route = Literal[
    "blocked",
    "cached",
    "smalltalk",
    "knowledge",
    "analysis",
    "current_events",
    "tools",
    "memory",
    "creative",
    "error",
]


@dataclass(frozen=True)
class Turn:
    """One message addressed to the bot."""

    text: str
    platform: str = "cli"
    workspace: str = "local"
    channel: str = "terminal"
    thread_root: str = "default"
    user: str = "local-user"
    message_id: str = ""
    # Document scopes this channel may search; None means the default scope only.
    scopes: frozenset[str] | None = None
    # The channel's persona line for the prompts; empty means the process-wide one.
    persona: str = ""
    # Feature flags for this request (seed 003), over the channel's and the settings':
    # {"self_refine": False, "hallucination_policy": "block"}. None: no override.
    features: Mapping[str, Any] | None = field(default=None, hash=False)

    @property
    def thread_id(self) -> str:
        return f"{self.platform}:{self.workspace}:{self.channel}:{self.thread_root}"


@dataclass(frozen=True)
class Citation:
    """A numbered citation: where an answer's ``[n]`` points."""

    number: int
    title: str
    source: str
    locator: str = ""  # "p. 3" or a heading path
    link: str | None = None
    doc_id: str = ""
    kind: Literal["document", "web"] = "document"
    # The passage the answer drew on (cut at QUOTE_CHARS): a reader checks the claim
    # where it is cited, without opening the document.
    quote: str = ""


QUOTE_CHARS = 600


def quote_of(text: str) -> str:
    """A passage as a citation shows it: at most QUOTE_CHARS, cut with "…". The answer
    cache keeps exactly this, so a cached answer cites the same quote as a fresh one."""
    text = text.strip()
    return text if len(text) <= QUOTE_CHARS else text[: QUOTE_CHARS - 1].rstrip() + "…"


@dataclass(frozen=True)
class Progress:
    """A human sentence about the step that just started, in the user's language."""

    stage: str
    text: str
    kind: Literal["progress"] = "progress"


@dataclass(frozen=True)
class Token:
    """Answer text as it is generated.

    ``reset`` is set on the first token of a rewritten draft (after a failed
    groundedness check): adapters clear what they have shown so far.
    """

    text: str
    reset: bool = False
    kind: Literal["token"] = "token"


@dataclass(frozen=True)
class Usage:
    prompt_tokens: int = 0
    completion_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


@dataclass(frozen=True)
class Final:
    """The end of every turn, including failed ones (then ``answer`` says why)."""

    answer: str
    sources: list[Citation] = field(default_factory=list)
    route: Route = "knowledge"
    language: str = "en"
    cached: bool = False
    blocked: bool = False
    # The LLM was configured but failed, so a deterministic stand-in answered.
    degraded: bool = False
    mode: Literal["llm", "extractive"] = "extractive"
    llm_calls: int = 0
    usage: Usage = field(default_factory=Usage)
    # The same tokens split by model name: the fast and the chat model are priced apart.
    usage_by_model: dict[str, Usage] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)  # milliseconds per stage
    thread_id: str = ""
    notes: list[str] = field(default_factory=list)  # stated reasons: fallbacks taken, limits hit
    # Whether the documents answer the question: False when they do not and the reply
    # says so; None where it does not apply (smalltalk, blocked input, memory, a failure).
    covered: bool | None = None
    # How the router judged the question ("simple", "moderate", "complex"; "" when no
    # router ran, e.g. a blocked or cached turn) and how sure it was (0 to 1).
    complexity: str = ""
    confidence: float = 0.0
    # The model that wrote the answer (under the route map); "" when no LLM wrote it.
    model: str = ""
    # The feature flags this turn ran with (settings, then channel, then request).
    features: dict[str, Any] = field(default_factory=dict)
    # The turn's way through the graph: one step per node run (node, ms, its decision).
    path: list[dict[str, Any]] = field(default_factory=list)
    kind: Literal["final"] = "final"

    @classmethod
    def failed(
        cls,
        turn: Turn,
        reason: str,
        *,
        mode: Literal["llm", "extractive"] = "extractive",
        timings: dict[str, float] | None = None,
    ) -> Final:
        """The Final of a turn that could not be answered: the error reply in the asker's
        language naming ``reason`` (also kept in ``notes`` for the logs and the API)."""
        language = detect_language(turn.text)
        return cls(
            answer=replies.text("error", language, reason=reason),
            route="error",
            language=language,
            degraded=True,
            mode=mode,
            timings=timings or {},
            thread_id=turn.thread_id,
            notes=[reason],
        )

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["usage"]["total_tokens"] = self.usage.total_tokens
        for model, usage in self.usage_by_model.items():
            data["usage_by_model"][model]["total_tokens"] = usage.total_tokens
        data.pop("kind")
        return data


Event = Progress | Token | Final
