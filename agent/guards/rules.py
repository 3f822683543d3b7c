"""The rule type every pattern family is built from, plus context that several families share."""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["DEVICE", "EN_ASKING", "EN_DOC_REF", "KO_ASKING", "KO_YOU", "Rule", "rule"]

_WINDOW = 60


@dataclass(frozen=True)
class Rule:
    """A pattern plus the context that turns a hit back into an innocent question."""

    name: str
    pattern: re.Pattern[str]
    before: re.Pattern[str] | None = None  # searched in the text just before a hit
    after: re.Pattern[str] | None = None  # searched in the text just after a hit
    near: re.Pattern[str] | None = None  # searched in the text around a hit

    def fires(self, text: str) -> bool:
        for m in self.pattern.finditer(text):
            start, end = m.start(), m.end()
            if self.before and self.before.search(text[max(0, start - _WINDOW) : start]):
                continue
            if self.after and self.after.search(text[end : end + _WINDOW]):
                continue
            if self.near and self.near.search(text[max(0, start - _WINDOW) : end + _WINDOW]):
                continue
            return True
        return False


def rule(
    name: str,
    *patterns: str,
    before: str | None = None,
    after: str | None = None,
    near: str | None = None,
) -> Rule:
    return Rule(
        name=name,
        pattern=re.compile("|".join(f"(?:{p})" for p in patterns)),
        before=re.compile(before) if before else None,
        after=re.compile(after) if after else None,
        near=re.compile(near) if near else None,
    )


# Context shared by several rules. English: the speaker is asking whether *they* should
# do it, or quoting a document; Korean: a question or quotative ending, not a command.
EN_ASKING = (
    r"(?:\b(?:should|do|can|could|may|must|shall|did|would|will|if)\s+"
    r"(?:i|we|they|people|users|everyone|the\s+team)"
    r"|\b(?:i|we|they|people|users|everyone)(?:\s+(?:can|could|should|may|must|will|would|"
    r"often|usually|always|just|did|do|need\s+to|have\s+to))?"
    r"|\bhow\s+(?:(?:do|can|should|could|would)\s+(?:i|we)|to)"
    r"|\b(?:when|why|whether|where)\s+to"
    r"|\b(?:okay|ok|fine|safe|allowed|right|wise|possible|way)\s+(?:for\s+(?:me|us)\s+)?to"
    r"|\b(?:says?|said|told\s+(?:me|us)|tells\s+(?:me|us)|asks?\s+(?:me|us)|means?|supposed)\s+to"
    r"|\b(?:want|need|have|had|going|is\s+there\s+a\s+way)\s+to)"
    r"\s+(?:just\s+|still\s+|simply\s+|really\s+|safely\s+|now\s+)?$"
)
EN_DOC_REF = (
    r"^\s+(?:in|from|of|on|for)\s+(?:the|our|this|that|my|a|an)\s+(?:\S+\s+){0,2}?"
    r"(?:runbook|wiki|docs?|documents?|documentation|guide|readme|manual|page|ticket|e-?mail|"
    r"mail|confluence|notion|jira|handbook|polic(?:y|ies)|sop|playbook|checklist|spec|memo|"
    r"article|file|repo|repository|template|onboarding|announcement|procedure|process)s?\b"
)
KO_ASKING = (
    r"^\S*?(?:라고|라는|래요|랬|해도|해야|하려면|려면|(?:하는|는)\s*(?:방법|법|게|것|경우|지)|"
    r"할\s*(?:수|까|지|때)|하나요|나요|되|될|돼|된|하면\s*(?:되|안)|합니까)"
    r"|^(?:도|야)(?:\s|$)"
    r"|^.{0,40}(?:맞나요|맞아요\?|맞는지|맞죠|맞을까요|되나요|될까요)"
)
DEVICE = (
    r"phone|iphone|ipad|\bios\b|android|device|handset|tablet|mobile|console|playstation|"
    r"kindle|firestick|router|\bmdm\b|폰|기기|단말|아이폰|아이패드|갤럭시|태블릿"
)
# Korean "you" as a standalone word: addressing the assistant, not a syllable of another word.
KO_YOU = r"(?<!\w)(?:너|네|니|당신|너희|네가|니가)"
