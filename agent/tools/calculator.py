"""A calculator for chat: arithmetic evaluated through :mod:`ast`, never ``eval``.

Chat text is untrusted, and an LLM's tool arguments are too, so the expression is
parsed and walked with an allow-list of nodes, functions and constants, and every
result is bounded. Chat phrasing ("15% of 240", "1,200 곱하기 3", "5만원") is first
rewritten into Python-like arithmetic.

The rewriting (``_normalize``) and parsing (``_parse``) are shared with
:mod:`agent.tools.expressions`, which looks for a calculation inside a message.
"""

from __future__ import annotations

import ast
import math
import re
import unicodedata
from collections.abc import Callable
from decimal import ROUND_HALF_UP, Decimal

from agent.tools.errors import ToolError

__all__ = ["MAX_DIGITS", "MAX_EXPONENT", "MAX_EXPRESSION_CHARS", "Number", "calculate"]

Number = int | float

# Long inputs are not arithmetic a person types, and the evaluator recurses per operator.
MAX_EXPRESSION_CHARS = 500
MAX_EXPONENT = 10_000
# A chat answer with more digits than this is noise, and the bound keeps big-int maths cheap.
MAX_DIGITS = 100
_MAX_MAGNITUDE = 10**MAX_DIGITS


# --- Normalizing chat arithmetic ------------------------------------------------------------

# Not inside a run of digits: a number is read from the run's start, and one tried from
# every digit of a long run rescans the run each time (quadratic).
_NUM = r"(?<!\d)(?:\d+(?:\.\d+)?|\.\d+)"
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
