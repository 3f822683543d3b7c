"""Small, exact tools: a calculator and the current date and time.

The LLM reaches them through tool calling (:data:`TOOLS`); without an LLM the
agent spots a calculation or a date question itself (:func:`find_expression`,
:func:`asks_for_datetime`) and calls the plain functions.

Arithmetic goes through :mod:`ast` with an allow-list of nodes, never
``eval``: chat text is untrusted, and an LLM's tool arguments are too.
"""

from __future__ import annotations

import ast
import math
import re
import unicodedata
from collections.abc import Callable
from datetime import UTC, datetime, timedelta, tzinfo
from datetime import timezone as fixed_timezone
from decimal import ROUND_HALF_UP, Decimal
from functools import cache
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError, available_timezones

from langchain_core.tools import BaseTool, ToolException, tool

__all__ = [
    "TOOLS",
    "ToolError",
    "asks_for_datetime",
    "calculate",
    "current_datetime",
    "find_expression",
]


class ToolError(Exception):
    """A tool could not do what was asked; the message says why, in plain words."""


Number = int | float

# Long inputs are not arithmetic a person types, and the evaluator recurses per operator.
MAX_EXPRESSION_CHARS = 500
MAX_EXPONENT = 10_000
# A chat answer with more digits than this is noise, and the bound keeps big-int maths cheap.
MAX_DIGITS = 100
_MAX_MAGNITUDE = 10**MAX_DIGITS


# --- Normalizing chat arithmetic ------------------------------------------------------------

_NUM = r"(?:\d+(?:\.\d+)?|\.\d+)"
# An operand a word operator can apply to: a number or one flat parenthesized group.
_ATOM = rf"(?:{_NUM}|\([^()]*\))"

_CHAR_MAP = str.maketrans(
    {"×": "*", "÷": "/", "−": "-", "–": "-", "—": "-", "π": " pi ", "√": " √", "^": "**"}
)
_THOUSANDS = re.compile(r"(?<![\d.])\d{1,3}(?:,\d{3})+(?!\d)")

_KO_UNITS = {"천만": 10_000_000, "백만": 1_000_000, "억": 100_000_000, "만": 10_000, "천": 1_000}
# Particles that may follow a unit; any other syllable makes it part of a word (천재, 불가).
_KO_AFTER_UNIT = "[원은는이가의를을야요에도]"


def _expand_unit(match: re.Match[str]) -> str:
    return f"({match.group(1)}*{_KO_UNITS[match.group(2)]})"


# Ordered: longer phrases before the words they contain.
_REWRITES: list[tuple[re.Pattern[str], str | Callable[[re.Match[str]], str]]] = [
    (re.compile(r"\b(?:multiplied\s+by|times)\b"), " * "),
    (re.compile(r"\bdivided\s+by\b"), " / "),
    (re.compile(r"\bplus\b"), " + "),
    (re.compile(r"\bminus\b"), " - "),
    (re.compile(r"\bmod(?:ulo)?\b"), " % "),
    (re.compile(rf"\b(?:raised\s+)?to\s+the\s+({_NUM})(?:st|nd|rd|th)\s+power\b"), r" ** \1"),
    (re.compile(r"\b(?:raised\s+)?to\s+the\s+power\s+of\b"), " ** "),
    (re.compile(rf"({_ATOM})\s*squared\b"), r"\1**2"),
    (re.compile(rf"({_ATOM})\s*cubed\b"), r"\1**3"),
    # Korean large-number units ("5만원" is 50,000 won); a unit before a noun ("3만 명") is
    # left alone so the message does not read as a calculation.
    (re.compile(rf"({_NUM})\s*(천만|백만|억|만|천)(?=$|[^가-힣]|{_KO_AFTER_UNIT})"), _expand_unit),
    (re.compile(rf"(?<=[\d)])\s*(?:원|달러|불)(?=$|[^가-힣]|{_KO_AFTER_UNIT})"), ""),
    (re.compile(r"[$₩]\s*(?=\d)"), ""),
    (re.compile(r"곱하기"), " * "),
    (re.compile(r"나누기"), " / "),
    (re.compile(r"더하기|플러스"), " + "),
    (re.compile(r"빼기|마이너스"), " - "),
    # "3 x 4": only between operands, so words with an x are left alone.
    (re.compile(r"(?<=[\d)])\s*x\s*(?=[\d(.])"), " * "),
    (re.compile(r"\s*\bper\s*cent\b"), "%"),
    # "프로" is also the start of 프로젝트, 프로그램 ...: only right after a number.
    (re.compile(r"(?<=\d)\s*(?:퍼센트|프로)(?=$|[^가-힣]|[은는이가의를을야요에도만])"), "%"),
    (re.compile(r"%\s*of\b"), "% * "),
    (re.compile(rf"({_ATOM})\s*의\s*({_NUM})\s*%"), r"\1 * \2%"),
    (
        re.compile(rf"(?:\bsquare\s+root(?:\s+of)?|\broot\s+of|√|루트)\s*({_ATOM})"),
        r" sqrt(\1)",
    ),
    (re.compile(rf"\bsqrt\s+({_NUM})"), r"sqrt(\1)"),
    (re.compile(rf"({_ATOM})\s*의\s*제곱근"), r"sqrt(\1)"),
    (re.compile(rf"({_ATOM})\s*의\s*({_NUM})\s*제곱(?!근)"), r"\1**\2"),
    (re.compile(rf"({_ATOM})\s*(?:의\s*)?세\s*제곱(?!근)"), r"\1**3"),
    (re.compile(rf"({_ATOM})\s*(?:의\s*)?제곱(?!근)"), r"\1**2"),
]

# A postfix percent: "15%" at the end or before an operator; "10 % 3" stays modulo.
_PERCENT_NUMBER = re.compile(rf"(?<![\w.])({_NUM})\s*%(?!\s*[\w(.])")
_PERCENT_GROUP = re.compile(r"\)\s*%(?!\s*[\w(.])")
_LEADING_ZEROS = re.compile(r"(?<![\d.])0+(?=\d)")


def _normalize(text: str) -> str:
    """Chat phrasing to Python-like arithmetic; the percent sign is still ambiguous here."""
    s = unicodedata.normalize("NFKC", text).lower().translate(_CHAR_MAP)
    s = _THOUSANDS.sub(lambda m: m.group().replace(",", ""), s)
    for pattern, replacement in _REWRITES:
        s = pattern.sub(replacement, s)
    return s


def _resolve_percent(s: str) -> str:
    s = _PERCENT_NUMBER.sub(r"(\1/100)", s)
    return _PERCENT_GROUP.sub(")/100", s)


# --- Evaluating ------------------------------------------------------------------------------


def _round_half_up(x: Number, ndigits: Number = 0) -> Number:
    # Python's round() rounds halves to even (round(2.5) == 2); people expect 3.
    if not isinstance(ndigits, int) or isinstance(ndigits, bool) or abs(ndigits) > MAX_DIGITS:
        raise ToolError("round() takes a whole number of digits, e.g. round(3.14159, 2)")
    # repr() is the shortest text that round-trips, so 2.675 rounds as typed, not as stored.
    quantum = Decimal(1).scaleb(-ndigits)
    rounded = Decimal(repr(x)).quantize(quantum, rounding=ROUND_HALF_UP)
    return int(rounded) if ndigits <= 0 else float(rounded)


def _trig(fn: Callable[[float], float]) -> Callable[[float], float]:
    # pi is inexact, so sin(pi) comes out as 1.2e-16 instead of 0.
    return lambda x: round(fn(x), 12)


# name -> (function, fewest arguments, most arguments)
_FUNCTIONS: dict[str, tuple[Callable[..., Number], int, int]] = {
    "sqrt": (math.sqrt, 1, 1),
    "log": (math.log, 1, 2),
    "ln": (math.log, 1, 1),
    "log10": (math.log10, 1, 1),
    "log2": (math.log2, 1, 1),
    "exp": (math.exp, 1, 1),
    "sin": (_trig(math.sin), 1, 1),
    "cos": (_trig(math.cos), 1, 1),
    "tan": (_trig(math.tan), 1, 1),
    "round": (_round_half_up, 1, 2),
    "abs": (abs, 1, 1),
    "floor": (math.floor, 1, 1),
    "ceil": (math.ceil, 1, 1),
}
_CONSTANTS: dict[str, float] = {"pi": math.pi, "e": math.e, "tau": math.tau}
_NAMES = "sqrt, log, ln, log10, log2, exp, sin, cos, tan, round, abs, floor, ceil, pi, e"


def _checked(value: object) -> Number:
    if isinstance(value, complex):
        raise ToolError("the result is not a real number (e.g. a fractional power of a negative)")
    if isinstance(value, float):
        if math.isnan(value):
            raise ToolError("the result is not a number")
        if math.isinf(value) or abs(value) >= _MAX_MAGNITUDE:
            raise ToolError(f"the result is too large (more than {MAX_DIGITS} digits)")
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        if abs(value) >= _MAX_MAGNITUDE:
            raise ToolError(f"the result is too large (more than {MAX_DIGITS} digits)")
        return value
    raise ToolError(f"unexpected result type {type(value).__name__}")


def _power(base: Number, exponent: Number) -> Number:
    if abs(exponent) > MAX_EXPONENT:
        raise ToolError(f"the exponent {exponent} is too large (at most {MAX_EXPONENT})")
    # Estimate before computing: 9**9999 as an int would take real time and memory.
    if abs(base) > 1 and exponent > 0 and exponent * math.log10(abs(base)) > MAX_DIGITS:
        raise ToolError(f"the result is too large (more than {MAX_DIGITS} digits)")
    if base == 0 and exponent < 0:
        raise ToolError("division by zero (zero to a negative power)")
    return _checked(base**exponent)


def _binary(op: ast.operator, left: Number, right: Number) -> Number:
    if isinstance(op, ast.Pow):
        return _power(left, right)
    if isinstance(op, ast.Div | ast.FloorDiv | ast.Mod) and right == 0:
        raise ToolError("division by zero")
    if isinstance(op, ast.Add):
        return _checked(left + right)
    if isinstance(op, ast.Sub):
        return _checked(left - right)
    if isinstance(op, ast.Mult):
        return _checked(left * right)
    if isinstance(op, ast.Div):
        return _checked(left / right)
    if isinstance(op, ast.FloorDiv):
        return _checked(left // right)
    if isinstance(op, ast.Mod):
        return _checked(left % right)
    raise ToolError(f"unsupported operator {type(op).__name__}; use + - * / // % **")


def _call(node: ast.Call) -> Number:
    if not isinstance(node.func, ast.Name):
        raise ToolError(f"only plain function calls are supported; available: {_NAMES}")
    name = node.func.id
    if name not in _FUNCTIONS:
        raise ToolError(f"unknown function {name!r}; available: {_NAMES}")
    fn, fewest, most = _FUNCTIONS[name]
    if node.keywords or not fewest <= len(node.args) <= most:
        wanted = str(fewest) if fewest == most else f"{fewest} or {most}"
        raise ToolError(f"{name}() takes {wanted} argument(s)")
    args = [_evaluate(arg) for arg in node.args]
    try:
        return _checked(fn(*args))
    except ValueError as exc:
        shown = ", ".join(_format(a) for a in args)
        raise ToolError(f"{name}({shown}) is undefined ({exc})") from exc


def _evaluate(node: ast.AST) -> Number:
    if isinstance(node, ast.Expression):
        return _evaluate(node.body)
    if isinstance(node, ast.Constant):
        if isinstance(node.value, int | float) and not isinstance(node.value, bool):
            return node.value
        raise ToolError(f"{node.value!r} is not a number")
    if isinstance(node, ast.Name):
        if node.id in _CONSTANTS:
            return _CONSTANTS[node.id]
        raise ToolError(f"unknown name {node.id!r}; available: {_NAMES}")
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        operand = _evaluate(node.operand)
        return -operand if isinstance(node.op, ast.USub) else operand
    if isinstance(node, ast.BinOp):
        return _binary(node.op, _evaluate(node.left), _evaluate(node.right))
    if isinstance(node, ast.Call):
        return _call(node)
    raise ToolError(
        f"unsupported syntax ({type(node).__name__}); use numbers, + - * / // % ** and brackets"
    )


def _parse(expression: str) -> ast.Expression:
    if len(expression) > MAX_EXPRESSION_CHARS:
        raise ToolError(f"the expression is too long (at most {MAX_EXPRESSION_CHARS} characters)")
    source = _LEADING_ZEROS.sub("", _resolve_percent(_normalize(expression))).strip()
    if not source:
        raise ToolError("the expression is empty")
    try:
        return ast.parse(source, mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        raise ToolError(
            f"could not read {expression.strip()!r} as arithmetic; "
            "use numbers, + - * / // % **, parentheses and functions like sqrt()"
        ) from exc


def _format(value: Number) -> str:
    if isinstance(value, int):
        return str(value)
    # 15 significant digits drop binary noise: 0.1 + 0.2 prints as 0.3.
    text = f"{value:.15g}"
    if "e" in text and 1e-9 <= abs(value) < 1e21:
        text = format(Decimal(text), "f")
    if "." in text and "e" not in text:
        text = text.rstrip("0").rstrip(".")
    return "0" if text in {"-0", "0", ""} else text


def calculate(expression: str) -> str:
    """Evaluate arithmetic safely and return the result as text (``"0.1+0.2"`` -> ``"0.3"``).

    Accepts + - * / // % ** (bounded), parentheses, unary minus, decimals, thousands
    separators, percentages ("15% of 240", "240의 15%"), Korean and English operator words,
    sqrt/log/ln/exp/sin/cos/tan (radians)/round/abs/floor/ceil, pi and e. Raises
    :class:`ToolError` on bad syntax, division by zero and results beyond 100 digits.
    """
    tree = _parse(expression)
    try:
        return _format(_evaluate(tree))
    except ZeroDivisionError as exc:
        raise ToolError("division by zero") from exc
    except OverflowError as exc:
        raise ToolError(f"the result is too large (more than {MAX_DIGITS} digits)") from exc
    except RecursionError as exc:
        raise ToolError("the expression is nested too deeply") from exc


# --- Finding a calculation in a chat message -------------------------------------------------

_NAME_ALTERNATIVES = "|".join(sorted(_FUNCTIONS.keys() | _CONSTANTS.keys(), key=len, reverse=True))
_TOKEN = (
    rf"(?:(?<![a-z_.\d]){_NUM}"  # not glued to a word: v2.3 and mp3 are not numbers
    rf"|\b(?:{_NAME_ALTERNATIVES})\b"
    r"|\*\*|//|[-+*/%(),])"
)
_SPAN = re.compile(rf"{_TOKEN}(?:[ \t]*{_TOKEN})*")
_DATE_LIKE = re.compile(
    r"\d{4}\s*[-/.]\s*\d{1,2}\s*[-/.]\s*\d{1,2}|\d{1,2}\s*/\s*\d{1,2}\s*/\s*\d{2,4}"
    r"|(?<![\d.])0\d"  # zero-padded parts: dates, phone numbers, ids
)
_POSTFIX_PERCENT = re.compile(r"%(?!\s*[\w(.])")

# What may surround a calculation in a chat message. Anything else ("2024-01-15 회의록",
# "3-4 days off") means the numbers belong to a question the documents should answer.
_EN_FILLER = frozenset(
    """
    a about also and answer approximately are be calc calculate can compute could do does eval
    evaluate exactly figure for get give hello hey hi how i in is it just know make many math me
    much need now of ok okay please pls plz question quick quickly result results roughly s so
    solve tell thank thanks the then to total u us value want what whats will work would you
    """.split()
)
_KO_FILLER = re.compile(
    "(?:"
    + "|".join(
        sorted(
            """
            얼마 계산 알려 정답 결과 무엇 입니 인가 일까 줄래 세요 빨리 한번 혹시 부탁 나와 나오
            은 는 이 가 을 를 도 요 야 몇 뭐 뭔 해 줘 주 래 좀 답 값 예 에 인 지 죠 니 냐 나 와 오
            봐 바 다 까 게 돼 되 될 어 번 하 면 임 구 라 고 거 것
            """.split(),
            key=len,
            reverse=True,
        )
    )
    + ")+"
)
_WORD = re.compile(r"[a-z]+|[가-힣]+")
_MENTION = re.compile(r"<[@#!][^<>\s]*>")


def _is_filler(text: str) -> bool:
    if re.search(r"\d", text):
        return False
    for word in _WORD.findall(text):
        if word in _EN_FILLER:
            continue
        if not _KO_FILLER.fullmatch(word):
            return False
    return True


def _trim(candidate: str) -> str:
    """Drop operators dangling at either end of a span ("2-factor" leaves "2-")."""
    candidate = candidate.strip()
    while candidate and candidate[-1] in "+-*/,(":
        candidate = candidate[:-1].rstrip()
    while candidate and candidate[0] in "+*/%,)":
        candidate = candidate[1:].lstrip()
    return candidate


def _is_arithmetic(candidate: str) -> bool:
    """True when the span parses and does some arithmetic (not a lone number or "15%")."""
    try:
        _parse(candidate)
        bare = ast.parse(_POSTFIX_PERCENT.sub("", candidate).strip(), mode="eval").body
    except (ToolError, SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    if isinstance(bare, ast.UnaryOp):
        bare = bare.operand
    return not isinstance(bare, ast.Constant | ast.Name)


def find_expression(text: str) -> str | None:
    """The arithmetic a chat message asks for, in a form :func:`calculate` accepts, or None.

    ``"1,200 곱하기 3은 얼마야"`` -> ``"1200 * 3"``; ``"15% of 240"`` -> ``"15% * 240"``;
    ``"2024년 휴가 정책"``, ``"v2.3 release notes"`` -> None.
    """
    if not text or len(text) > MAX_EXPRESSION_CHARS:
        return None
    # A chat mention ("<@U024BE7LH> 3+4?") carries digits that would read as leftover numbers.
    text = _MENTION.sub(" ", text).replace("’", "'")
    normalized = _normalize(text)
    best: tuple[str, int, int] | None = None
    for match in _SPAN.finditer(normalized):
        raw = match.group()
        candidate = _trim(raw)
        if not candidate or (best is not None and len(candidate) <= len(best[0])):
            continue
        if _DATE_LIKE.search(candidate) or not _is_arithmetic(candidate):
            continue
        start = match.start() + raw.index(candidate)
        best = (candidate, start, start + len(candidate))
    if best is None:
        return None
    candidate, start, end = best
    if not _is_filler(normalized[:start] + " " + normalized[end:]):
        return None
    return " ".join(candidate.split())


# --- Date and time ---------------------------------------------------------------------------

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


def asks_for_datetime(text: str) -> bool:
    """True for "오늘 며칠이야?", "지금 몇 시야", "what time is it"; not for a release date."""
    normalized = unicodedata.normalize("NFKC", text).lower().replace("’", "'").strip()
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


def _resolve_zone(name: str) -> tuple[tzinfo, str]:
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
    zone, name = _resolve_zone(timezone)
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


# --- LangChain tools -------------------------------------------------------------------------


@tool("calculator", parse_docstring=True)
def _calculator_tool(expression: str) -> str:
    """Evaluate arithmetic exactly. Use it for every calculation instead of doing maths yourself.

    Handles + - * / // % ** and parentheses, decimals, thousands separators (1,200),
    percentages ("15% of 240", "240의 15%"), sqrt, log, ln, exp, sin, cos, tan (radians),
    round, abs, floor, ceil, pi and e. Returns the result as text, or an error message.

    Args:
        expression: The arithmetic to evaluate, e.g. "1200 * 3", "(4 + 5) / 2" or "15% of 240".
    """
    try:
        return calculate(expression)
    except ToolError as exc:
        raise ToolException(f"calculator: {exc}") from exc


@tool("current_datetime", parse_docstring=True)
def _current_datetime_tool(timezone: str = "Asia/Seoul") -> str:
    """Get today's date, the current time and the weekday. Use it whenever a question
    depends on the current date or time ("오늘 며칠이야?", "what time is it?", "is the
    deadline past?"); your own knowledge of the date is out of date.

    Args:
        timezone: An IANA time zone such as "Asia/Seoul" (the default), "UTC" or
            "America/New_York", or an offset such as "UTC+9".
    """
    try:
        return current_datetime(timezone)
    except ToolError as exc:
        raise ToolException(f"current_datetime: {exc}") from exc


# The LLM sees a ToolError's message as the tool's answer and can correct its call.
_calculator_tool.handle_tool_error = True
_current_datetime_tool.handle_tool_error = True

TOOLS: list[BaseTool] = [_calculator_tool, _current_datetime_tool]
