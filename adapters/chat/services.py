"""What a chat adapter is given: the agent and the shared bookkeeping around it.

Passed in, never imported as globals, so tests build it from real parts and a
team deployment can swap the in-process pieces for shared ones.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from adapters.chat.channels import ChannelRules
from adapters.chat.dedupe import Deduper, LocalDeduper
from adapters.chat.feedback import FeedbackStore
from adapters.chat.live import RunTurn


@dataclass
class ChatServices:
    run: RunTurn
    feedback: FeedbackStore
    dedupe: Deduper = field(default_factory=LocalDeduper)
    rules: ChannelRules = field(default_factory=ChannelRules)
    # Platforms allow about one edit per second per message.
    update_interval_s: float = 1.0
