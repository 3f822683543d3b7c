"""Keyword tokens: Korean particles and compounds, English words."""

from __future__ import annotations

from agent.retrieval.tokenizer import tokenize, words


def test_particles_do_not_split_a_word_from_itself() -> None:
    # "서버가", "서버를", "서버에서" must all match the document word "서버".
    doc = set(tokenize("서버"))
    for query in ("서버가", "서버를", "서버에서", "서버의"):
        assert doc & set(tokenize(query)), query


def test_compounds_match_their_parts() -> None:
    assert set(tokenize("자연어처리")) & set(tokenize("자연어 처리"))
    assert set(tokenize("온콜 인수인계")) & set(tokenize("인수인계는"))


def test_english_is_lowercased_and_stopwords_dropped() -> None:
    tokens = tokenize("What is the Deploy window?")
    assert "deploy" in tokens and "window" in tokens
    assert "the" not in tokens


def test_mixed_and_empty() -> None:
    assert tokenize("") == []
    tokens = tokenize("REDIS_URL을 설정하세요")
    assert any(t.startswith("redis") for t in tokens)


def test_chat_questions_carry_only_their_subject() -> None:
    """ "할 수 있어?", "누가 해야 돼?", "알려줘" say how a question is asked, not what about:
    as terms they matched any passage with 있어도 or 해야, and the judge without an LLM
    went searching for them."""
    assert tokenize("운영 배포는 언제 할 수 있어?") == ["운영", "운영", "배포", "배포"]
    assert words("롤백은 몇 분 안에 할 수 있어야 돼?") == ["롤백", "분"]
    assert words("온콜 교대는 누가 해야 돼요?") == ["온콜", "교대"]
    assert words("백업 보관 기간 좀 알려주세요") == ["백업", "보관", "기간"]
    assert words("반차는 언제까지 신청하면 돼요?") == ["반차", "신청"]
    assert words("스테이징에 접속하려면 뭐가 필요해?") == ["스테이징", "접속", "필요"]
    # The verb endings go for document words too, so both sides still meet.
    assert set(tokenize("신청하면")) & set(tokenize("HR 시스템에서 신청하세요"))


def test_words_are_the_stems_without_the_matching_pairs() -> None:
    assert words("프로덕션 접근 권한") == ["프로덕션", "접근", "권한"]
    assert "로덕" in tokenize("프로덕션") and "로덕" not in words("프로덕션")
    assert words("How do I renew the VPN?") == ["renew", "vpn"]


def test_a_hyphenated_word_matches_it_written_solid() -> None:
    """Chat types "oncall" and "wifi"; documents write "on-call" and "Wi-Fi"."""
    assert "oncall" in tokenize("온콜(on-call) 인수인계")
    assert set(tokenize("whats the wifi pw")) & set(tokenize("직원용 Wi-Fi는 Dalbit-Staff"))
    assert set(tokenize("e-mail")) == {"mail", "email"}
    assert "20240115" not in tokenize("2024-01-15")  # a date, not a word
    assert words("on-call rotation") == ["call", "oncall", "rotation"]


def test_a_loanword_keeps_its_last_syllable_in() -> None:
    """인 after a noun is the copula ("담당자인 분"), but in 파이프라인 or 플러그인 it is
    the word's own syllable: stripped, "파이프라" matched no English word."""
    assert words("빌드 파이프라인이 깨졌어요") == ["빌드", "파이프라인", "깨졌어요"]
    assert words("플러그인 설치") == ["플러그인", "설치"]
    assert words("수도는 어디인가요?") == ["수도"]  # a question word with the copula
    assert words("어느 그룹의 기타리스트인가?") == ["그룹", "기타리스트"]
    assert words("파이프라인을 고쳤어요") == ["파이프라인", "고쳤어요"]
    assert words("담당자인 분") == ["담당자", "분"]
    assert words("학생인 경우") == ["학생", "경우"]


def test_how_many_days_is_a_question_word() -> None:
    assert words("휴가 며칠 남았어?") == ["휴가", "남았어"]
    # Nor are one-syllable adverbs a subject: "안 쓴 연차" matched "몸이 안 좋아".
    assert words("안 쓴 연차 더 쓸 수 있나요") == ["쓴", "연차", "쓸"]
    assert words("병가는 몇일이에요?") == ["병가"]


def test_chat_contractions_and_got_are_stop_words() -> None:
    """ "whats", "dont": chat drops the apostrophe of "what's" and "don't", and the word
    then matched no passage but counted as one the documents lack."""
    assert words("whats the threshold") == ["threshold"]
    assert words("i dont have a badge, cant get in") == ["badge", "get"]
    assert words("What's the threshold?") == words("whats the threshold")
    # Nor is "got" of "an email i just got" a subject no document names.
    assert words("where do i forward an email i just got") == ["forward", "email"]
