"""The current date and time in a time zone, and spotting a question that asks for it.

An LLM's own idea of today is out of date, so "오늘 며칠이야?" and "what time is it"
are answered from the system clock. Time zones are resolved from IANA names, a
few names people type (KST, 서울) and UTC offsets.
"""

from __future__ import annotations

import re
import unicodedata
from datetime import UTC, datetime, timedelta, tzinfo
from datetime import timezone as fixed_timezone
from functools import cache
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError, available_timezones

from agent.tools.errors import ToolError

__all__ = ["asks_for_datetime", "current_datetime"]

_KO_DAY = r"(?:오늘|내일|어제|모레|그제|금일)"
_DATETIME_PATTERNS = [
    re.compile(p)
    for p in (
        # Korean
        rf"{_KO_DAY}\s*(?:은|이|의|이\s*몇|은\s*몇)?\s*(?:몇\s*월\s*)?"
        r"(?:며칠|몇\s*일|날짜|무슨\s*요일|몇\s*요일|요일)",
        r"몇\s*월\s*며칠",
        r"(?:지금|현재)\s*(?:\S+\s*)?"
        r"(?:몇\s*시(?!간)|시각|시간(?!\s*(?:이\s*)?(?:있|되|돼|괜찮|없|걸|남|내)))",
        r"^\s*몇\s*시(?!간)\s*(?:야|예요|에요|인가요|지|니|냐|죠|입니까)?\s*[?!.]*\s*$",
        r"(?:올해|지금|현재)\s*(?:는|은|가)?\s*몇\s*년",
        # English
        r"\bwhat\s+time\s+is\s+it\b",
        r"\bwhat\s+(?:date|day|time|year|month)\s+is\s+(?:it|today)\b",
        r"\bwhat\s*(?:'s|\s+is|\s+was)?\s+(?:the\s+)?(?:current\s+)?(?:date|time|day)"
        r"(?:\s+(?:is\s+it|it\s+is|today|now|right\s+now|here|there|in\s+[a-z ]+?))*"
        r"\s*(?:[?.!,]|$)",
        r"\bwhat(?:'s|\s+is)\s+today\s*(?:[?.!,]|$)",
        r"\b(?:today'?s|current)\s+(?:date|time)\b(?!\s+(?:format|of|for)\b)",
        r"\b(?:date|time)\s+(?:today|now|right\s+now)\b",
        r"\b(?:tell|give|show)\s+me\s+the\s+(?:current\s+)?(?:date|time)\s*(?:[?.!,]|$)",
    )
]


# Asking for the time now is short and names no year; "2010년 지방선거는 몇 월 며칠에
# 치러졌는가?" and "우리가 보고 있는 구조와 현재 사이의 시간은 몇 년인가?" ask the documents.
_MAX_WORDS = 8
_YEAR_OR_ID = re.compile(r"\d{3,}")


def asks_for_datetime(text: str) -> bool:
    """True for "오늘 며칠이야?", "지금 몇 시야", "what time is it"; not for a release date."""
    normalized = unicodedata.normalize("NFKC", text).lower().replace("’", "'").strip()
    if len(normalized.split()) > _MAX_WORDS or _YEAR_OR_ID.search(normalized):
        return False
    return any(pattern.search(normalized) for pattern in _DATETIME_PATTERNS)


_WEEKDAYS_EN = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
_WEEKDAYS_KO = ("월요일", "화요일", "수요일", "목요일", "금요일", "토요일", "일요일")
# Names people type that are not IANA keys.
_ZONE_ALIASES = {
    "kst": "Asia/Seoul",
    "korea": "Asia/Seoul",
    "seoul": "Asia/Seoul",
    "한국": "Asia/Seoul",
    "서울": "Asia/Seoul",
    "jst": "Asia/Tokyo",
    "japan": "Asia/Tokyo",
    "tokyo": "Asia/Tokyo",
    "일본": "Asia/Tokyo",
    "도쿄": "Asia/Tokyo",
    "pst": "America/Los_Angeles",
    "pdt": "America/Los_Angeles",
    "edt": "America/New_York",
}
_OFFSET = re.compile(r"^(?:utc|gmt)?\s*([+-])\s*(\d{1,2})(?::?(\d{2}))?$")


@cache
def _zone_keys_by_lower_name() -> dict[str, str]:
    # Scanning the zone database is slow-ish; only done once, and only for a miss.
    return {key.lower(): key for key in available_timezones()}


def resolve_zone(name: str) -> tuple[tzinfo, str]:
    """The zone a name means ("Asia/Seoul", "KST", "UTC+9"), and the name to show for it;
    ToolError names what is accepted."""
    wanted = name.strip()
    lowered = wanted.lower()
    offset = _OFFSET.match(lowered)
    if offset:
        sign, hours, minutes = offset.group(1), int(offset.group(2)), int(offset.group(3) or 0)
        if hours > 14 or minutes >= 60:
            raise ToolError(f"{name!r} is not a valid UTC offset (from -14:00 to +14:00)")
        delta = timedelta(hours=hours, minutes=minutes) * (-1 if sign == "-" else 1)
        return fixed_timezone(delta), f"UTC{sign}{hours:02d}:{minutes:02d}"
    key = _ZONE_ALIASES.get(lowered) or _zone_keys_by_lower_name().get(lowered) or wanted
    try:
        return ZoneInfo(key), key
    except (ZoneInfoNotFoundError, ValueError, OSError) as exc:
        raise ToolError(
            f"unknown time zone {name!r}; use an IANA name such as 'Asia/Seoul', 'UTC' "
            "or 'America/New_York', or an offset such as 'UTC+9'"
        ) from exc


def _utc_offset(moment: datetime) -> str:
    offset = moment.utcoffset() or timedelta(0)
    sign = "-" if offset < timedelta(0) else "+"
    minutes = abs(int(offset.total_seconds())) // 60
    return f"UTC{sign}{minutes // 60:02d}:{minutes % 60:02d}"


def current_datetime(timezone: str = "Asia/Seoul", *, now: datetime | None = None) -> str:
    """Date, time and weekday in a time zone, e.g.
    ``"2025-03-14 (Friday / 금요일) 15:04:05 KST, Asia/Seoul (UTC+09:00)"``.

    ``now`` pins the moment (tests); a naive ``now`` is taken as UTC.
    Raises :class:`ToolError` for an unknown time zone.
    """
    zone, name = resolve_zone(timezone)
    moment = datetime.now(UTC) if now is None else now
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    local = moment.astimezone(zone)
    weekday = local.weekday()
    offset = _utc_offset(local)
    abbreviation = local.tzname() or ""
    label = name
    if abbreviation and abbreviation != name and abbreviation[0] not in "+-":
        label = f"{abbreviation}, {name}"
    suffix = "" if name == offset else f" ({offset})"
    return (
        f"{local:%Y-%m-%d} ({_WEEKDAYS_EN[weekday]} / {_WEEKDAYS_KO[weekday]}) "
        f"{local:%H:%M:%S} {label}{suffix}"
    )
