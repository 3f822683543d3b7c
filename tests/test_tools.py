"""The calculator and date tools, and spotting them in Korean and English chat messages."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

from agent.tools import (
    TOOLS,
    ToolError,
    asks_for_datetime,
    calculate,
    current_datetime,
    find_expression,
)

# --- calculate ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ("1 + 2 * 3", "7"),
        ("(1 + 2) * 3", "9"),
        ("0.1 + 0.2", "0.3"),
        ("10 / 4", "2.5"),
        ("10 / 2", "5"),
        ("7 // 2", "3"),
        ("7 % 3", "1"),
        ("2 ** 10", "1024"),
        ("2^10", "1024"),
        ("2 ** -2", "0.25"),
        ("-5 + 3", "-2"),
        ("-(2 + 3)", "-5"),
        ("1/3", "0.333333333333333"),
        ("1,234.5 + 1", "1235.5"),
        ("1,200 * 3", "3600"),
        ("15% of 240", "36"),
        ("50%", "0.5"),
        ("200 * 15%", "30"),
        ("sqrt(16)", "4"),
        ("sqrt(2)", "1.4142135623731"),
        ("log(100, 10)", "2"),
        ("ln(e)", "1"),
        ("sin(pi)", "0"),
        ("cos(0)", "1"),
        ("round(2.5)", "3"),
        ("round(2.675, 2)", "2.68"),
        ("abs(-7.5)", "7.5"),
        ("pi * 2", "6.28318530717959"),
        ("3 × 4 ÷ 2", "6"),
        ("0.000001 * 2", "0.000002"),
        ("2 ** 64", "18446744073709551616"),
    ],
)
def test_calculate(expression: str, expected: str) -> None:
    assert calculate(expression) == expected


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ("240의 15%", "36"),
        ("1,200 곱하기 3", "3600"),
        ("100 나누기 8", "12.5"),
        ("2 더하기 3", "5"),
        ("10 빼기 7", "3"),
        ("2의 10제곱", "1024"),
        ("7의 제곱", "49"),
        ("16의 제곱근", "4"),
        ("1000의 3.5퍼센트", "35"),
        ("5만원 곱하기 3", "150000"),
        ("12 times 12", "144"),
        ("100 divided by 4", "25"),
        ("3 squared plus 4 squared", "25"),
    ],
)
def test_calculate_understands_words(expression: str, expected: str) -> None:
    assert calculate(expression) == expected


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        ("1 / 0", "division by zero"),
        ("10 // 0", "division by zero"),
        ("5 % 0", "division by zero"),
        ("0 ** -1", "division by zero"),
        ("2 ** 100000", "exponent"),
        ("9 ** 999", "too large"),
        ("10.0 ** 400", "too large"),
        ("10 ** 99 * 10", "too large"),
        ("sqrt(-1)", "undefined"),
        ("log(0)", "undefined"),
        ("(-8) ** (1/3)", "not a real number"),
        ("__import__('os').system('id')", "function"),
        ("open('/etc/passwd')", "unknown function"),
        ("x + 1", "unknown name"),
        ("[1, 2]", "unsupported"),
        ("lambda: 1", "unsupported"),
        ("'a' * 3", "not a number"),
        ("3 +", "could not read"),
        ("", "empty"),
        ("1+" * 400 + "1", "too long"),
        ("round(1, 2, 3)", "argument"),
    ],
)
def test_calculate_errors_say_what_went_wrong(expression: str, message: str) -> None:
    with pytest.raises(ToolError, match=message):
        calculate(expression)


# --- current_datetime ----------------------------------------------------------------------

FIXED = datetime(2025, 3, 14, 6, 4, 5, tzinfo=UTC)  # a Friday


def test_current_datetime_in_seoul() -> None:
    text = current_datetime(now=FIXED)
    assert text == "2025-03-14 (Friday / 금요일) 15:04:05 KST, Asia/Seoul (UTC+09:00)"


def test_current_datetime_crosses_midnight_into_the_next_day() -> None:
    late = datetime(2025, 3, 14, 23, 30, tzinfo=UTC)
    text = current_datetime("Asia/Seoul", now=late)
    assert text.startswith("2025-03-15 (Saturday / 토요일) 08:30:00")


@pytest.mark.parametrize(
    ("zone", "expected"),
    [
        ("UTC", "2025-03-14 (Friday / 금요일) 06:04:05 UTC (UTC+00:00)"),
        ("America/New_York", "2025-03-14 (Friday / 금요일) 02:04:05 EDT, America/New_York"),
        ("asia/seoul", "15:04:05 KST, Asia/Seoul"),
        ("KST", "15:04:05 KST, Asia/Seoul"),
        ("UTC+9", "15:04:05 UTC+09:00"),
        ("+05:30", "11:34:05 UTC+05:30"),
    ],
)
def test_current_datetime_other_zones(zone: str, expected: str) -> None:
    assert expected in current_datetime(zone, now=FIXED)


def test_current_datetime_converts_an_aware_now_and_reads_a_naive_one_as_utc() -> None:
    in_seoul = FIXED.astimezone(timezone(timedelta(hours=9)))
    assert current_datetime("UTC", now=in_seoul) == current_datetime("UTC", now=FIXED)
    naive = FIXED.replace(tzinfo=None)
    assert current_datetime("Asia/Seoul", now=naive) == current_datetime(now=FIXED)


def test_current_datetime_without_now_is_today() -> None:
    text = current_datetime("UTC")
    today = datetime.now(UTC).date().isoformat()
    yesterday = (datetime.now(UTC) - timedelta(minutes=1)).date().isoformat()
    assert text[:10] in {today, yesterday}


@pytest.mark.parametrize("zone", ["Mars/Olympus", "", "Asia", "../../etc/passwd", "UTC+25"])
def test_unknown_timezone_is_a_tool_error(zone: str) -> None:
    with pytest.raises(ToolError, match=r"time zone|UTC offset"):
        current_datetime(zone, now=FIXED)


# --- find_expression ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("message", "expression", "value"),
    [
        ("3*(4+5)는?", "3*(4+5)", "27"),
        ("what is 12.5 * 8?", "12.5 * 8", "100"),
        ("1,200 곱하기 3은 얼마야", "1200 * 3", "3600"),
        ("240의 15%는?", "240 * 15%", "36"),
        ("계산해줘: 2^10", "2**10", "1024"),
        ("What's 100 divided by 4?", "100 / 4", "25"),
        ("what’s 15 percent of 80?", "15% * 80", "12"),
        ("How much is 1,250 x 4?", "1250 * 4", "5000"),
        ("calculate 7 mod 3", "7 % 3", "1"),
        ("what is 2 to the 10th power", "2 ** 10", "1024"),
        ("Please compute 1.5 * 4", "1.5 * 4", "6"),
        ("2 + 2 = ?", "2 + 2", "4"),
        ("10 빼기 7은 뭐야?", "10 - 7", "3"),
        ("2의 10제곱은 얼마야?", "2**10", "1024"),
        ("100 나누기 8 계산해 주세요", "100 / 8", "12.5"),
        ("16의 제곱근은?", "sqrt(16)", "4"),
        ("루트 2는 얼마?", "sqrt(2)", "1.4142135623731"),
        ("(1+2)*3 계산 좀 해줘", "(1+2)*3", "9"),
        ("50000원의 20%는 얼마예요?", "50000 * 20%", "10000"),
        ("1/3 + 1/6?", "1/3 + 1/6", "0.5"),
        ("sqrt(16) + 2", "sqrt(16) + 2", "6"),
        ("-5 + 3", "-5 + 3", "-2"),
        ("<@U024BE7LH> 3+4는?", "3+4", "7"),
    ],
)
def test_find_expression_in_chat(message: str, expression: str, value: str) -> None:
    found = find_expression(message)
    assert found == expression
    assert calculate(found) == value


def test_find_expression_keeps_division_by_zero_for_calculate_to_explain() -> None:
    found = find_expression("1/0은?")
    assert found == "1/0"
    with pytest.raises(ToolError, match="division by zero"):
        calculate(found)


@pytest.mark.parametrize(
    "message",
    [
        "What is the backup policy?",
        "2024년 휴가 정책",
        "v2.3 release notes",
        "2024-01-15 회의록 찾아줘",
        "Who is on call 24/7?",
        "Can I take 3-4 days off?",
        "50% 할인 정책 알려줘",
        "COVID-19 재택 근무 규정",
        "Section 4.2 of the handbook",
        "회의실 3층 예약 방법",
        "What is 3?",
        "안녕하세요",
        "",
        "version 1.2.3 changelog",
        "10:30 회의",
        "Is 2-factor auth required?",
        "010-1234-5678 누구 번호야?",
        "Python 3.11 + Django 5 지원돼?",
        "연차 15일 중 3일 남았어",
        "GPT-4 사용 정책",
        "규정 3-2항 설명해줘",
        "3만 명 사용자 정책",
        "12/25 휴무야?",
        "what time is it",
        "1 + 1 = 2 라는 문구가 있는 문서 찾아줘",
    ],
)
def test_find_expression_ignores_questions_that_only_contain_numbers(message: str) -> None:
    assert find_expression(message) is None


# --- asks_for_datetime ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "message",
    [
        "오늘 며칠이야?",
        "지금 몇 시야",
        "오늘 무슨 요일이야?",
        "현재 시간 알려줘",
        "오늘이 몇 월 며칠이야?",
        "몇 시야?",
        "지금 한국 시간 몇 시야?",
        "what's the date today?",
        "what time is it",
        "What time is it in London?",
        "What day is it today?",
        "what's today's date",
        "Tell me the current time.",
        "what year is it",
    ],
)
def test_asks_for_datetime(message: str) -> None:
    assert asks_for_datetime(message)


@pytest.mark.parametrize(
    "message",
    [
        "what is the release date of v2?",
        "What time is the standup?",
        "what time does the office open?",
        "What's the date of the all-hands?",
        "Is the doc up to date?",
        "휴가 며칠 쓸 수 있어?",
        "회의 몇 시간 걸려?",
        "배포 날짜 알려줘",
        "지금 시간 있어?",
        "회의 몇 시야?",
        "3 + 4는?",
    ],
)
def test_does_not_ask_for_datetime(message: str) -> None:
    assert not asks_for_datetime(message)


# --- TOOLS ----------------------------------------------------------------------------------


def test_tools_have_names_descriptions_and_argument_schemas() -> None:
    by_name = {t.name: t for t in TOOLS}
    assert set(by_name) == {"calculator", "current_datetime"}
    calculator, clock = by_name["calculator"], by_name["current_datetime"]
    assert "arithmetic" in calculator.description.lower()
    assert "date" in clock.description.lower()
    calc_schema = calculator.tool_call_schema.model_json_schema()  # type: ignore[union-attr]
    assert calc_schema["required"] == ["expression"]
    assert calc_schema["properties"]["expression"]["type"] == "string"
    assert calc_schema["properties"]["expression"]["description"]
    clock_schema = clock.tool_call_schema.model_json_schema()  # type: ignore[union-attr]
    assert clock_schema["properties"]["timezone"]["default"] == "Asia/Seoul"
    assert "required" not in clock_schema


def test_tools_run_and_report_errors_to_the_llm() -> None:
    calculator, clock = TOOLS
    assert calculator.invoke({"expression": "240의 15%"}) == "36"
    # An error comes back as the tool's answer, so the LLM can correct its call.
    assert "division by zero" in calculator.invoke({"expression": "1/0"})
    assert "KST" in clock.invoke({})
    assert "unknown time zone" in clock.invoke({"timezone": "Nowhere/Land"})
