"""The LLM-free router: held-out accuracy with the real encoder, and the two text heuristics.

The evaluation set below was written apart from ``agent.routing.intent.PROTOTYPES``
and is never fed back into them; ``test_evaluation_set_is_held_out_and_large_enough``
keeps it that way. In each list the first 14 lines were the first held-out set;
the last 8 were written later, after the comparison and lone-word rules, and
checked once. Run with ``-s`` to see the confusion matrix, misses and latency.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from dataclasses import dataclass

import numpy as np
import pytest

from agent.retrieval.embeddings import UniversalSentenceEncoder, Vectors
from agent.routing.intent import (
    PROTOTYPES,
    ROUTES,
    IntentGuess,
    PrototypeRouter,
    Route,
    is_context_dependent,
    memory_command,
)
from agent.wording.language import detect_language

EVALUATION: dict[Route, dict[str, list[str]]] = {
    "smalltalk": {
        "en": [
            "hey there!",
            "good afternoon :)",
            "thanks a bunch",
            "ty, that was helpful",
            "who made you?",
            "what are you able to help with?",
            "are you a human or an AI?",
            "how's your day going?",
            "see you around",
            "great job, bot",
            "haha",
            "long time no see",
            "I appreciate it",
            "morning!",
            "hello hello",
            "many thanks!",
            "what kind of bot are you?",
            "nice, thank you",
            "how are things?",
            "gotta go, bye",
            "you're pretty smart",
            "what should I call you?",
        ],
        "ko": [
            "안녕 봇아",
            "하이 반가워",
            "좋은 오후예요",
            "고마워요 ㅎㅎ",
            "도움 됐어, 땡큐",
            "누가 너를 만들었어?",
            "너는 뭘 도와줄 수 있어?",
            "사람이야 AI야?",
            "오늘 하루 어때?",
            "나중에 봐요",
            "잘했어 봇아",
            "ㅋㅋㅋㅋ",
            "오랜만이야",
            "정말 고맙습니다",
            "ㅎㅇㅎㅇ",
            "감사해요 봇님",
            "너 뭐 하는 애야?",
            "좋네요 고마워",
            "요즘 어때?",
            "이만 갈게 안녕",
            "너 꽤 똑똑하구나",
            "너를 뭐라고 부르면 돼?",
        ],
    },
    "knowledge": {
        "en": [
            "How do I request VPN access?",
            "What's the process for getting a new laptop?",
            "Where do I report a security incident?",
            "How many days are Postgres backups kept?",
            "What is the naming convention for git branches?",
            "Who should I ask for a production database password?",
            "How do I ingest a PDF into teamrag?",
            "What are the steps to onboard a new engineer?",
            "When can we deploy to production?",
            "What is the travel expense policy?",
            "How do I configure the Slack bot token?",
            "What does the error 'collection not found' mean?",
            "Is there a runbook for disk full alerts?",
            "Which team owns the payments API?",
            "where's the doc on setting up 2FA?",
            "what's the refund policy for annual plans?",
            "how do I get added to the on-call schedule?",
            "what does the handbook say about overtime?",
            "how are incidents classified by severity?",
            "which regions do we deploy to?",
            "what's required before merging a PR?",
            "how do I run teamrag locally?",
        ],
        "ko": [
            "Postgres 백업은 며칠 보관돼?",
            "온콜 인수인계는 언제 해?",
            "노트북 교체 신청은 어떻게 해?",
            "보안 사고는 어디에 신고해?",
            "깃 브랜치 이름 규칙이 뭐야?",
            "운영 DB 비밀번호는 누구한테 물어봐야 해?",
            "teamrag에 PDF 문서 넣는 방법 알려줘",
            "신규 개발자 온보딩 순서가 어떻게 돼?",
            "운영 배포는 언제 할 수 있어?",
            "출장 경비 규정 알려줘",
            "슬랙 봇 토큰은 어디서 설정해?",
            "'collection not found' 오류는 무슨 뜻이야?",
            "디스크 용량 경보 대응 런북 있어?",
            "결제 API 담당 팀이 어디야?",
            "2FA 설정 문서 어디 있어?",
            "연간 요금제 환불 정책이 뭐야?",
            "온콜 일정에 나를 추가하려면?",
            "야근 수당 규정 알려줘",
            "장애 등급은 어떻게 나눠?",
            "우리는 어느 리전에 배포해?",
            "PR 머지 전에 필요한 게 뭐야?",
            "teamrag를 로컬에서 실행하는 법",
        ],
    },
    "analysis": {
        "en": [
            "Compare Chroma and pgvector for storing our embeddings",
            "What's the difference between the embedded and server modes?",
            "pros and cons of running the bot on Slack vs Discord",
            "Should we use BM25 or dense search for error codes, and why?",
            "How do the Seoul and Busan office policies differ?",
            "Summarize the differences between the v1 and v2 onboarding guides",
            "Which is cheaper overall: reserved instances or spot instances?",
            "Weigh up Postgres checkpointing against SQLite for thread memory",
            "compare the security review process with the code review process",
            "What are the trade-offs of a larger chunk size?",
            "List the benefits and risks of enabling web search",
            "contrast our on-call policy with the SRE team's",
            "Give me a comparison table of the three deployment environments",
            "evaluate whether we should move from Jenkins to GitHub Actions",
            "gRPC vs REST for internal services?",
            "how is the Pro tier different from Enterprise?",
            "compare our three logging options and recommend one",
            "what are the upsides and downsides of four-day sprints?",
            "which is faster for us, Redis or Postgres for caching?",
            "differences between the old and new expense rules",
            "break down the trade-offs of monorepo vs polyrepo",
            "contrast manual and automated release approval",
        ],
        "ko": [
            "Chroma와 pgvector 중 임베딩 저장에 뭐가 나아?",
            "임베디드 모드와 서버 모드의 차이는?",
            "슬랙과 디스코드에서 봇을 돌리는 것의 장단점",
            "에러 코드 검색에는 BM25랑 벡터 검색 중 뭐가 좋아? 이유도 알려줘",
            "서울 사무실과 부산 사무실 정책은 어떻게 달라?",
            "v1과 v2 온보딩 가이드의 차이를 요약해줘",
            "예약 인스턴스와 스팟 인스턴스 비용 비교",
            "스레드 메모리로 Postgres와 SQLite를 비교 분석해줘",
            "보안 리뷰와 코드 리뷰 절차를 비교해줘",
            "청크 크기를 키우면 얻는 것과 잃는 것은?",
            "웹 검색을 켤 때의 이점과 위험을 정리해줘",
            "우리 온콜 정책과 SRE팀 정책을 대조해줘",
            "세 배포 환경을 표로 비교해줘",
            "젠킨스에서 GitHub Actions로 옮길지 평가해줘",
            "내부 서비스에 gRPC와 REST 중 뭐가 나아?",
            "Pro 요금제와 Enterprise는 뭐가 달라?",
            "로깅 옵션 세 가지를 비교하고 추천해줘",
            "4일 스프린트의 장점과 단점",
            "캐시로 Redis와 Postgres 중 어느 쪽이 빨라?",
            "예전 경비 규정과 새 규정의 차이",
            "모노레포 대 폴리레포 트레이드오프 정리",
            "수동 승인과 자동 승인 방식 비교",
        ],
    },
    "current_events": {
        "en": [
            "what's the weather in Seoul today?",
            "any breaking news?",
            "will it rain tomorrow in Daejeon?",
            "how is Samsung stock doing today?",
            "what's the latest release of Python?",
            "what did the Bank of Korea decide on rates this week?",
            "latest news about the AWS outage",
            "who won the baseball game yesterday?",
            "what's the current yen to won exchange rate?",
            "is there a typhoon coming this week?",
            "what's new in the most recent macOS update?",
            "today's top stories in tech",
            "ethereum price right now",
            "how hot will it be this afternoon?",
            "what's happening in the news?",
            "will it be sunny in Jeju tomorrow?",
            "what's Kakao's share price today?",
            "did Rust release a new version this month?",
            "what's the air quality in Seoul right now?",
            "who won the election in the US?",
            "current gold price",
            "any news on the Slack outage today?",
        ],
        "ko": [
            "오늘 뉴스 알려줘",
            "속보 있어?",
            "내일 대전에 비 와?",
            "오늘 삼성전자 주가 어때?",
            "파이썬 최신 릴리스가 뭐야?",
            "이번 주 한국은행 금리 결정 어떻게 됐어?",
            "AWS 장애 관련 최신 뉴스",
            "어제 야구 누가 이겼어?",
            "현재 엔화 환율 얼마야?",
            "이번 주에 태풍 와?",
            "최신 macOS 업데이트에 뭐가 바뀌었어?",
            "오늘의 IT 주요 기사",
            "이더리움 지금 시세",
            "오늘 오후 기온 몇 도야?",
            "요즘 무슨 뉴스 있어?",
            "내일 제주 날씨 맑아?",
            "오늘 카카오 주가 얼마야?",
            "이번 달 Rust 새 버전 나왔어?",
            "지금 서울 미세먼지 어때?",
            "미국 대선 누가 이겼어?",
            "현재 금값",
            "오늘 슬랙 장애 소식 있어?",
        ],
    },
    "tools": {
        "en": [
            "what time is it?",
            "3*(4+5)",
            "what's 18% of 350?",
            "how much is 999 + 1?",
            "what is 2^16?",
            "what's the date?",
            "which day of the week was January 1st 2000?",
            "how many days are left in this month?",
            "what's 45 minutes after 3:30pm?",
            "convert 5 km to miles",
            "divide 100 by 3",
            "how many weeks until June 1?",
            "what day will it be in 10 days?",
            "square root of 2",
            "what's 12 squared?",
            "128 / 16",
            "how many hours is 450 minutes?",
            "what's the date next Friday?",
            "what weekday is Dec 25 this year?",
            "tip of 15% on 42 dollars",
            "what's the time right now?",
            "days between 2024-01-01 and 2024-03-01",
        ],
        "ko": [
            "3*(4+5)는?",
            "오늘 며칠이야?",
            "지금 시간 알려줘",
            "350의 18%는?",
            "999 더하기 1은?",
            "2의 16승은?",
            "2000년 1월 1일은 무슨 요일이었어?",
            "이번 달 며칠 남았어?",
            "오후 3시 30분에서 45분 뒤는 몇 시야?",
            "5킬로미터는 몇 마일이야?",
            "100을 3으로 나누면?",
            "6월 1일까지 몇 주 남았어?",
            "10일 뒤는 무슨 요일이야?",
            "2의 제곱근 계산해줘",
            "12의 제곱은?",
            "128 / 16 은 얼마?",
            "450분은 몇 시간이야?",
            "다음 주 금요일은 몇 일이야?",
            "올해 크리스마스는 무슨 요일?",
            "42달러의 15%는?",
            "지금 몇 시 몇 분이야?",
            "2024-01-01부터 2024-03-01까지 며칠?",
        ],
    },
    "memory": {
        "en": [
            "what do you remember about me?",
            "forget what I told you",
            "forget my team",
            "what do you know about me so far?",
            "please forget everything I said about my role",
            "delete my stored preferences",
            "what have you saved about me?",
            "remember that I work on the search team",
            "do you remember which timezone I'm in?",
            "clear everything you know about me",
            "show me my memories",
            "can you forget my location?",
            "keep in mind that I prefer short answers",
            "what personal details have you stored?",
            "what do you have stored about me?",
            "forget my timezone",
            "wipe what you know about me",
            "remember my team is payments",
            "do you know what my role is?",
            "erase my preferences",
            "tell me what you remember about me",
            "please forget that I'm in Busan",
        ],
        "ko": [
            "뭘 기억하고 있어?",
            "내 정보 뭐 알고 있어?",
            "내 정보 잊어줘",
            "기억 지워줘",
            "나에 대해 지금까지 뭘 알게 됐어?",
            "내 역할에 대해 말한 거 전부 잊어줘",
            "저장된 내 설정 삭제해줘",
            "나에 대해 저장한 거 보여줘",
            "내가 검색팀에서 일한다는 거 기억해줘",
            "내가 어느 시간대에 있는지 기억해?",
            "나에 대해 아는 거 전부 지워",
            "내 기억 목록 보여줘",
            "내 위치 정보는 잊어줘",
            "짧은 답변을 좋아한다고 기억해 둬",
            "나에 대해 뭐 저장돼 있어?",
            "내 시간대 잊어줘",
            "나에 대해 아는 거 다 지워줘",
            "내 팀이 결제팀이라고 기억해줘",
            "내 역할이 뭔지 알아?",
            "내 설정 다 삭제해",
            "나에 대해 기억하는 거 알려줘",
            "내가 부산에 있다는 거 잊어줘",
        ],
    },
    "creative": {
        "en": [
            "write a farewell note for Minji who is leaving the team",
            "draft a Slack message asking everyone to update their OKRs",
            "compose a short incident summary email for customers",
            "write an intro post for our new design system channel",
            "draft a polite reply declining the meeting invite",
            "write a birthday message for my teammate",
            "can you write a tweet announcing our open-source release?",
            "draft the agenda email for Monday's planning meeting",
            "translate the maintenance notice into English",
            "write a thank-you note to the QA team for the launch",
            "draft onboarding instructions for a new intern",
            "rewrite my status update so it sounds more confident",
        ],
        "ko": [
            "퇴사하는 민지 님 송별 메시지 써줘",
            "OKR 업데이트 요청하는 슬랙 메시지 초안 써줘",
            "고객에게 보낼 장애 요약 메일 작성해줘",
            "디자인 시스템 채널 소개 글 써줘",
            "회의 초대를 정중하게 거절하는 답장 써줘",
            "동료 생일 축하 메시지 만들어줘",
            "오픈소스 공개를 알리는 트윗 초안 써줘",
            "월요일 기획 회의 안건 메일 작성해 주세요",
            "점검 공지를 영어로 번역해줘",
            "출시를 도와준 QA팀에 감사 인사 글 써줘",
            "인턴용 온보딩 안내문 초안 만들어줘",
            "내 업무 보고를 더 자신감 있게 다듬어줘",
        ],
    },
}

CASES: list[tuple[Route, str, str]] = [
    (route, language, text)
    for route, by_language in EVALUATION.items()
    for language, texts in by_language.items()
    for text in texts
]


@dataclass(frozen=True)
class Evaluation:
    results: list[tuple[Route, str, str, IntentGuess]]
    milliseconds: list[float]

    @property
    def accuracy(self) -> float:
        return sum(gold == guess.route for gold, _, _, guess in self.results) / len(self.results)

    def accuracy_in(self, language: str) -> float:
        mine = [(gold, guess) for gold, lang, _, guess in self.results if lang == language]
        return sum(gold == guess.route for gold, guess in mine) / len(mine)

    def confusion(self) -> Counter[tuple[str, str]]:
        return Counter((gold, guess.route) for gold, _, _, guess in self.results)

    def report(self) -> str:
        confusion = self.confusion()
        short = {r: r[:9] for r in ROUTES}
        lines = [
            f"accuracy {self.accuracy:.3f} over {len(self.results)} "
            f"(en {self.accuracy_in('en'):.3f}, ko {self.accuracy_in('ko'):.3f})",
            "classify ms/call: mean {:.2f}, p50 {:.2f}, p95 {:.2f}, max {:.2f}".format(
                float(np.mean(self.milliseconds)),
                *np.percentile(self.milliseconds, [50, 95, 100]).tolist(),
            ),
            "gold \\ guess   " + " ".join(f"{short[r]:>9}" for r in ROUTES),
        ]
        for gold in ROUTES:
            row = " ".join(f"{confusion[gold, guess]:>9}" for guess in ROUTES)
            lines.append(f"{gold:<14} {row}")
        lines.append("misses:")
        for gold, _, text, guess in self.results:
            if gold != guess.route:
                lines.append(
                    f"  {text!r}: {gold} -> {guess.route} (confidence {guess.confidence:.2f})"
                )
        unsure = [guess for *_, guess in self.results if guess.confidence < 0.5]
        right = sum(gold == g.route for gold, *_, g in self.results if g.confidence < 0.5)
        lines.append(f"unsure (< 0.5): {len(unsure)}, of which right: {right}")
        return "\n".join(lines)


@pytest.fixture(scope="module")
def router(embedder: UniversalSentenceEncoder) -> PrototypeRouter:
    return PrototypeRouter(embedder)


@pytest.fixture(scope="module")
def evaluation(router: PrototypeRouter) -> Evaluation:
    router.classify("warm up")  # embeds the prototypes: not part of the per-call cost
    results: list[tuple[Route, str, str, IntentGuess]] = []
    milliseconds: list[float] = []
    for gold, language, text in CASES:
        start = time.perf_counter()
        guess = router.classify(text)
        milliseconds.append((time.perf_counter() - start) * 1000)
        results.append((gold, language, text, guess))
    evaluation = Evaluation(results, milliseconds)
    print("\n" + evaluation.report())
    return evaluation


def test_evaluation_set_is_held_out_and_large_enough() -> None:
    def normalise(text: str) -> str:
        return " ".join(text.lower().split()).rstrip("?!. ")

    prototypes = {normalise(t) for texts in PROTOTYPES.values() for t in texts}
    assert not [text for *_, text in CASES if normalise(text) in prototypes]
    for route in ROUTES:
        for language in ("en", "ko"):
            texts = EVALUATION[route][language]
            assert len(texts) >= 12, (route, language)
            assert all(detect_language(t) == language for t in texts if t.strip("?!* ()0123456789"))


def test_accuracy_on_held_out_messages(evaluation: Evaluation) -> None:
    assert evaluation.accuracy >= 0.9, evaluation.report()


def test_real_questions_are_almost_never_taken_for_smalltalk(evaluation: Evaluation) -> None:
    knowledge = [guess for gold, _, _, guess in evaluation.results if gold == "knowledge"]
    as_smalltalk = sum(guess.route == "smalltalk" for guess in knowledge)
    assert as_smalltalk / len(knowledge) <= 0.02, evaluation.report()


def test_guesses_are_well_formed(evaluation: Evaluation) -> None:
    for *_, guess in evaluation.results:
        assert 0.0 <= guess.confidence <= 1.0
        assert set(guess.scores) == set(ROUTES)


def test_confidence_separates_right_from_wrong_on_average(evaluation: Evaluation) -> None:
    right = [g.confidence for gold, *_, g in evaluation.results if gold == g.route]
    wrong = [g.confidence for gold, *_, g in evaluation.results if gold != g.route]
    if wrong:
        assert float(np.mean(right)) > float(np.mean(wrong)), evaluation.report()


def test_memory_commands_route_to_memory_with_full_confidence(router: PrototypeRouter) -> None:
    for text in ("forget my team", "내 정보 잊어줘", "what do you remember about me?"):
        guess = router.classify(text)
        assert (guess.route, guess.confidence) == ("memory", 1.0)


@pytest.mark.parametrize("text", ["Jenkins", "온콜", "VPN", "런북", "MFA", "출장", "Terraform"])
def test_a_lone_work_term_is_not_smalltalk(router: PrototypeRouter, text: str) -> None:
    # Lone words sit nearest the short greetings; searching for them is the cheap mistake.
    assert router.classify(text).route not in ("smalltalk", "memory")


@pytest.mark.parametrize("text", ["hey", "thx", "ㅎㅇ", "ㅋㅋ", "굿모닝", "땡큐", "bye"])
def test_a_lone_greeting_is_smalltalk(router: PrototypeRouter, text: str) -> None:
    assert router.classify(text).route == "smalltalk"


def test_extra_prototypes_extend_a_route(embedder: UniversalSentenceEncoder) -> None:
    text = "ping the bot"
    plain = PrototypeRouter(embedder).classify(text)
    extended = PrototypeRouter(embedder, {"tools": [text]}).classify(text)
    assert extended.route == "tools"
    assert extended.scores["tools"] > plain.scores["tools"]


def test_extra_prototypes_are_checked(embedder: UniversalSentenceEncoder) -> None:
    with pytest.raises(ValueError, match="unknown route 'weather'"):
        PrototypeRouter(embedder, {"weather": ["is it sunny"]})
    with pytest.raises(TypeError, match="list of strings"):
        PrototypeRouter(embedder, {"smalltalk": "yo"})


class CountingEmbedder:
    """The real encoder, counting batch calls and slowed so threads overlap."""

    def __init__(self, inner: UniversalSentenceEncoder) -> None:
        self._inner = inner
        self.batches = 0

    @property
    def name(self) -> str:
        return self._inner.name

    def embed_documents(self, texts: list[str]) -> Vectors:
        self.batches += 1
        time.sleep(0.05)
        return self._inner.embed_documents(texts)

    def embed_query(self, text: str) -> Vectors:
        return self._inner.embed_query(text)

    def embed_queries(self, texts: list[str]) -> Vectors:
        return self._inner.embed_queries(texts)

    def close(self) -> None:
        pass


def test_prototypes_are_embedded_once_lazily_across_threads(
    embedder: UniversalSentenceEncoder,
) -> None:
    counting = CountingEmbedder(embedder)
    router = PrototypeRouter(counting)
    assert counting.batches == 0
    guesses: list[IntentGuess] = []
    threads = [
        threading.Thread(target=lambda: guesses.append(router.classify("안녕하세요")))
        for _ in range(8)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert counting.batches == 1
    assert [g.route for g in guesses] == ["smalltalk"] * 8


@pytest.mark.parametrize(
    "text",
    [
        "what do you remember about me?",
        "What do you know about me?",
        "what have you saved about me?",
        "show me my memories",
        "what info do you have on me?",
        "what do you remember?",
        "what do you know of my preferences?",
        "뭘 기억하고 있어?",
        "내 정보 뭐 알고 있어?",
        "나에 대해 뭘 알고 있어?",
        "나에 대해 저장한 거 보여줘",
        "저에 대해 아는 거 말해줘",
    ],
)
def test_memory_show(text: str) -> None:
    assert memory_command(text) == "show"


@pytest.mark.parametrize(
    "text",
    [
        "forget what I told you",
        "forget my team",
        "Please forget everything about me",
        "can you forget my location?",
        "delete my stored preferences",
        "clear everything you know about me",
        "내 정보 잊어줘",
        "기억 지워줘",
        "나에 대한 기억 전부 삭제해줘",
        "내 위치는 기억하지 마",
        "내 역할에 대해 말한 거 잊어줘",
    ],
)
def test_memory_forget(text: str) -> None:
    assert memory_command(text) == "forget"


@pytest.mark.parametrize(
    "text",
    [
        "How do I remember the on-call rotation?",
        "I forgot my password",
        "How do I delete my profile in Jira?",
        "What do you know about the backup policy?",
        "What did I tell you about the deploy?",
        "What do you know about my team's deploy schedule?",
        "What do you know?",
        "remember that I work on the search team",  # a fact to store, not show/forget
        "Is there a forget-password link on the login page?",
        "비밀번호를 잊어버렸어요",
        "비밀번호를 잊어버리면 어떻게 해?",
        "온콜 순서를 어떻게 기억해?",
        "뭘 기억해야 돼?",
        "DB 데이터 삭제해줘",
        "로그 지워줘",
        "내 정보 수정은 어디서 해?",
        "제 휴가 며칠 남았어요?",
    ],
)
def test_not_a_memory_command(text: str) -> None:
    assert memory_command(text) is None


CONTEXT_DEPENDENT = [
    "그거 어떻게 설정해?",
    "그것도 알려줘",
    "거기 주소가 뭐야?",
    "두 번째 방법은?",
    "그럼 스테이징은?",
    "그건요?",
    "아까 말한 문서 링크 줘",
    "위에서 말한 절차 다시 설명해줘",
    "배포는요?",
    "영어로는?",
    "더 자세히 설명해줘",
    "다른 방법은 없어?",
    "왜?",
    "and the second one?",
    "what about it?",
    "that one",
    "Do they need approval?",
    "same for staging?",
    "also for contractors?",
    "how about prod?",
    "How about the Busan office?",
    "tell me more",
    "Is that still valid?",
    "What does that mean?",
    "which one is faster?",
    "why?",
    "Will it be deployed today?",
    "what about IT?",
    "2번은?",
    "영어로?",
    "ok",
    "네",
    "Are there exceptions?",
    "any exceptions",
    "What are the requirements?",
    "Is there a deadline?",
    "예외가 있나요?",
    "예외 있어",
    "비용은 뭐예요?",
    # A topic, a condition or a thing named by what happened to it, alone.
    "주말은요",
    "p0는요?",
    "해외 출장 갈 때는요?",
    "주말에 출근하면요?",
    "받은 거 어디에 반납해?",
    "그 양식 어디 있어?",
    "그럼 누가 승인해요?",
    "and who covers?",
]

STANDALONE = [
    "Postgres 백업은 며칠 보관돼?",
    "온콜 인수인계는 언제 해?",
    "백업 보관 기간?",
    "그라파나 대시보드 어디 있어?",
    "그룹 권한 요청 방법",
    "로그 거래 내역 어디서 봐?",
    "선거기간 휴가 규정 알려줘",
    "3*(4+5)는?",
    "오늘 며칠이야?",
    "고마워",
    "안녕하세요",
    "How do I request VPN access?",
    "What is the on-call rotation policy?",
    "what time is it?",
    "Is it possible to deploy on Fridays?",
    "Which Slack channel is for incidents?",
    "thanks!",
    "hello",
    "hi there",
    "ㅋㅋㅋ 고마워",
    "오늘의 IT 주요 기사",
    "will it rain in Daejeon tomorrow?",
    "2의 16승은?",
    "현재 금값",
    "하이브리드 검색 설정",
    "Are there exceptions to the year-end freeze?",
    "Is there a VPN for contractors?",
    "예외 처리 방법",
    "배포 예외 승인 절차가 있나요?",
    # A question of its own after a word that only moves the talk on.
    "also, how do I reset my VPN password?",
    "근데 법카 한도 얼마야?",
    "회사에서 지원하는 건 뭐가 있어요?",
    "출장비 정산 기한은?",
]


@pytest.mark.parametrize("text", CONTEXT_DEPENDENT)
def test_context_dependent_with_history(text: str) -> None:
    assert is_context_dependent(text, has_history=True)


@pytest.mark.parametrize("text", STANDALONE)
def test_standalone_with_history(text: str) -> None:
    assert not is_context_dependent(text, has_history=True)


@pytest.mark.parametrize("text", CONTEXT_DEPENDENT)
def test_nothing_is_context_dependent_without_history(text: str) -> None:
    assert not is_context_dependent(text, has_history=False)
