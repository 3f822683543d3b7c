"""Rules for requests that could cause serious harm: weapons, drugs, malware, self-harm, theft."""

from __future__ import annotations

from agent.guards.rules import Rule, rule

__all__ = ["HARMFUL_EN", "HARMFUL_KO"]

# ----- harmful requests

_EN_MAKE = (
    r"(?:make|making|build|building|construct|assemble|create|manufacture|synthesi[sz]e|"
    r"cook|produce|3d[\s-]?print|craft|rig)"
)
_DEFENSIVE_EN = (
    r"^\s*(?:detection|detector|scanner|protection|defen[cs]e|response|playbook|runbook|policy|"
    r"simulation|training|awareness|removal|signatures?|rules?|analysis|report|tabletop|drill|"
    r"incident|exercise|roth)\b"
)

HARMFUL_EN: tuple[Rule, ...] = (
    rule(
        "weapons",
        rf"\b{_EN_MAKE}\s+(?:me\s+)?(?:(?:a|an|some|my\s+own|the|homemade|improvised|diy|simple|"
        r"working|powerful|small|real)\s+)*(?:pipe\s+)?(?:bombs?|explosives|"
        r"explosive\s+(?:device|charge|vest)s?|ieds?|grenades?|molotov(?:\s+cocktails?)?|"
        r"detonators?|napalm|thermite|nerve\s+(?:agent|gas)|sarin|vx\s+gas|ricin|anthrax|"
        r"bio-?weapons?|chemical\s+weapons?|dirty\s+bombs?|ghost\s+guns?|"
        r"untraceable\s+(?:guns?|firearms?)|poison\s+gas|mustard\s+gas|chlorine\s+gas|"
        r"car\s+bombs?|letter\s+bombs?|land\s*mines?|tnt|c-?4|tatp|semtex)\b"
        r"(?![-\s]?(?:proof|sale|squad|threat|drill|shelter|disposal|detection|detector))",
        r"\b(?:bomb|explosive|ied|pipe\s+bomb|molotov|nerve\s+agent|bioweapon|chemical\s+weapon)s?"
        r"\s+(?:recipe|tutorial|blueprint|schematic|making|construction|formula|assembly)\b",
    ),
    rule(
        "violence",
        r"\b(?:how\s+(?:do|can|could|would|should)\s+i|how\s+to|best\s+way\s+to|ways?\s+to|"
        r"help\s+me|teach\s+me\s+(?:how\s+)?to|i\s+want\s+to)\s+(?:kill|murder|poison|strangle|"
        r"stab|shoot|assassinate|kidnap)\s+(?:someone|somebody|a\s+(?:person|human|child|kid|"
        r"coworker|colleague)|people|him|her|them|my\s+(?:\S+\s+)?(?:boss|coworker|co-worker|"
        r"colleague|manager|wife|husband|partner|neighbou?r|ex|teacher|family|mom|dad|mother|"
        r"father|brother|sister))\b",
    ),
    rule(
        "drugs",
        r"\b(?:make|making|cook|cooking|synthesi[sz]e|synthesizing|synthesising|manufacture|"
        r"produce|extract|brew)\s+(?:(?:some|my\s+own|homemade|pure)\s+)?(?:crystal\s+)?"
        r"(?:meth|methamphetamine|heroin|fentanyl|cocaine|crack\s+cocaine|lsd|mdma|ecstasy|ghb|"
        r"dmt|pcp|street\s+drugs|illegal\s+drugs)\b",
        r"\b(?:meth|methamphetamine|heroin|fentanyl|cocaine|lsd|mdma)\s+(?:recipe|synthesis|"
        r"cook|lab\s+setup|production\s+(?:steps|method|guide))\b",
        after=r"^\s*(?:patch|patches|tablets?|gmp|sop|batch|under\s+licen[cs]e)\b",
    ),
    rule(
        "malware",
        r"\b(?:write|writing|create|creating|make|making|build|building|code|coding|develop|"
        r"developing|program|generate|craft|design)\s+(?:me\s+)?(?:\S+\s+){0,3}?"
        r"(?:ransomware|malware|keyloggers?|trojans?|rootkits?|botnets?|spyware|"
        r"info-?stealers?|password\s+stealers?|remote\s+access\s+trojans?|cryptolockers?|"
        r"computer\s+virus(?:es)?|viruses|computer\s+worms?|network\s+worms?|"
        r"self-propagating\s+worms?|logic\s+bombs?|backdoors?|crypters?)\b",
        r"\bencrypts?\s+(?:all\s+)?(?:the\s+|their\s+|victims?'?\s+|someone's\s+)?files\b.{0,60}?"
        r"\b(?:ransom|bitcoin|pay\s+to\s+decrypt)",
        after=_DEFENSIVE_EN,
    ),
    rule(
        "self_harm",
        r"\b(?:how\s+(?:do|can|could|should|would)\s+i|how\s+to|best\s+way\s+to|easiest\s+way\s+to|"
        r"quickest\s+way\s+to|painless(?:ly)?\s+(?:way\s+)?to|ways?\s+to|methods?\s+(?:of|for|to)|"
        r"help\s+me|teach\s+me\s+to)\s+(?:\S+\s+){0,2}?(?:kill\s+myself|commit\s+suicide|"
        r"end\s+my\s+(?:own\s+)?life|take\s+my\s+(?:own\s+)?life|hurt\s+myself|harm\s+myself|"
        r"cut\s+myself|hang\s+myself|overdose|die\s+painlessly|die\s+quickly)\b",
        r"\b(?:suicide|self[\s-]?harm)\s+(?:methods?|techniques?|instructions|guide|tips)\b",
        r"\b(?:lethal|fatal|deadly)\s+(?:dose|amount)\s+of\b.{0,40}?\b(?:to\s+die|"
        r"to\s+kill\s+myself|for\s+suicide|myself)\b",
        r"\bhow\s+many\s+(?:\S+\s+){0,3}?(?:pills|tablets)\b.{0,40}?\b(?:to\s+die|"
        r"kill\s+(?:me|myself)|lethal|fatal)\b",
    ),
    rule(
        "credential_theft",
        r"\b(?:steal|stealing|harvest|harvesting|phish|phishing|exfiltrate|sniff)\s+(?:\S+\s+){0,2}?"
        r"(?:passwords?|credentials|logins?|login\s+details|session\s+(?:cookies|tokens)|"
        r"cookies|2fa\s+codes|otp\s+codes|mfa\s+codes|credit\s+card\s+(?:numbers|details)|"
        r"bank\s+details)\b",
        r"\bcrack\s+(?:someone|somebody|another\s+person|my\s+\S+)(?:'s)?\s+(?:\S+\s+)?passwords?\b",
        r"\b(?:hack|hacking|break)\s+into\s+(?:someone(?:'s)?|somebody(?:'s)?|"
        r"another\s+person's|other\s+people's|his|her|their|my\s+(?:\S+\s+)?(?:ex|boss|coworker|"
        r"colleague|manager|wife|husband|partner|girlfriend|boyfriend|neighbou?r)(?:'s)?)\s+"
        r"(?:\S+\s+)?(?:account|email|e-mail|phone|instagram|facebook|gmail|slack|computer|laptop|"
        r"icloud|wifi|kakao(?:talk)?)",
        before=r"\b(?:attackers?|hackers?|criminals?|scammers?|they|malware|phishers?|"
        r"bad\s+actors?)\s+(?:\S+\s+){0,2}$",
        after=r"^.{0,40}\b(?:prevent|protect|detect|defend|stop|mitigate|avoid)",
    ),
    rule(
        "phishing_kit",
        r"\b(?:make|create|build|set\s+up|setup|host|write|code|develop|clone|design|generate|"
        r"give\s+me|send\s+me|(?:where|how)\s+(?:can|do)\s+i\s+(?:buy|get|find|download))\s+"
        r"(?:me\s+)?(?:(?:a|an|some|the|convincing|realistic|working)\s+)*"
        r"(?:phishing|credential[\s-]?harvesting)\s+(?:kits?|pages?|sites?|websites?|panels?|"
        r"emails?|campaigns?)\b",
        after=r"^.{0,40}\b(?:training|awareness|simulation|simulated|drill|exercise|tabletop)\b",
    ),
)

_KO_PARTICLE = r"\s*(?:을|를|은|는|이|가|의|좀|하나)?\s*"
_KO_HOW = r"(?:(?:직접|집에서|쉽게|간단하게|간단히|몰래|새로|빨리)\s*)*"
_KO_MAKE = r"(?:제조|만드|만들|조립|제작|합성|설계도|레시피|제조법)"

HARMFUL_KO: tuple[Rule, ...] = (
    rule(
        "ko_weapons",
        r"(?:(?:사제|파이프)\s*)?(?:폭탄(?!\s*(?:주|세일|할인|특가|이벤트|행사|가격|배송|문자|메일|"
        r"발언|선언|고백|머리|급|맞|돌리|처리|쿠폰|혜택|딜|매출|드립|같은|처럼))|폭발물|화염병|수류탄|"
        r"뇌관|기폭\s*장치|기폭제|급조\s*폭발물|독가스|신경\s*가스|신경\s*작용제|사린|리신|탄저균|"
        r"생화학\s*무기|화학\s*무기|생물\s*무기|사제\s*총기?|다이너마이트|지뢰)"
        rf"{_KO_PARTICLE}{_KO_HOW}{_KO_MAKE}",
        before=r"(?:업무|일|메일|문자|질문|과제|숙제|댓글|스팸|요청|선물|칭찬|사랑|애교|데이터|로그|"
        r"알림|트래픽|버그)\s*$",
    ),
    rule(
        "ko_drugs",
        r"(?:마약|필로폰|메스암페타민|히로뽕|코카인|헤로인|펜타닐|엑스터시|mdma|lsd|ghb|대마초?|아편|"
        rf"물뽕)(?!류){_KO_PARTICLE}{_KO_HOW}(?:{_KO_MAKE}|재배|추출|정제|키우)",
        after=r"^\S*\s*(?:단속|적발|혐의|사건|뉴스|기사|처벌|형량|예방|신고|통계)",
    ),
    rule(
        "ko_malware",
        r"(?:랜섬\s*웨어|악성\s*코드|악성\s*프로그램|멀웨어|말웨어|키\s*로거|트로이\s*목마|루트킷|봇넷|"
        r"스파이웨어|백도어|웜\s*바이러스|컴퓨터\s*바이러스|바이러스|"
        r"정보\s*탈취\s*(?:툴|프로그램|코드)|해킹\s*툴|크립터)"
        r"(?:\s*(?:코드|프로그램|툴|소스\s*코드|소스|파일))?"
        rf"{_KO_PARTICLE}{_KO_HOW}(?:만들|만드|제작|작성|개발|짜|코딩|생성|구현)",
        r"(?:파일|데이터)\s*(?:을|를)?\s*(?:몰래\s*)?암호화\s*(?:하고|해서|한\s*뒤|한\s*다음).{0,30}?"
        r"(?:돈|비트코인|몸값)",
    ),
    rule(
        "self_harm_ko",
        r"(?:자살|자해|극단적\s*선택|스스로\s*목숨을\s*끊|목숨을\s*끊|생을\s*마감)\s*"
        r"(?:하는|할|을\s*하는|을\s*할|을|를|는)?\s*(?:수\s*있는\s*)?"
        r"(?:(?:쉬운|확실한|고통\s*없는|편한|빠른|좋은)\s*)?(?:방법|법|도구|수단)",
        r"(?:고통\s*없이|편하게|조용히|확실하게|쉽게|빨리|아프지\s*않게)\s*"
        r"(?:죽는|죽을\s*수\s*있는|죽으려면|목숨을\s*끊는|생을\s*마감하는)",
        r"(?:손목|동맥)\s*(?:을|를)?\s*(?:긋|그어|자르)",
        r"(?:수면제|진통제|약|타이레놀)\s*(?:을|를)?\s*(?:몇\s*(?:알|개|통)|얼마나).{0,20}?(?:죽|치사)",
        r"치사량.{0,20}?(?:죽|자살)|(?:죽|자살).{0,20}?치사량",
    ),
    rule(
        "ko_credential_theft",
        r"(?:남의|남|타인의?|다른\s*사람(?:의|들의)?|동료(?:의)?|상사(?:의)?|팀장(?:님)?(?:의)?|"
        r"친구(?:의)?|전\s*(?:여친|남친|애인|배우자)(?:의)?|여친(?:의)?|남친(?:의)?|옆\s*사람(?:의)?|"
        r"직원들?(?:의)?)\s*(?:비밀\s*번호|비번|패스워드|계정|인증\s*번호|otp|카톡|카카오톡|이메일|"
        r"메일|메일함|sns|인스타(?:그램)?|페이스북|공인\s*인증서|쿠키|세션)\s*(?:을|를|좀)?\s*"
        r"(?:몰래\s*)?(?:훔치|훔쳐|탈취|빼내|빼돌|해킹|털|엿보|몰래\s*보|뚫)",
        r"(?:남의|타인의?|다른\s*사람(?:의)?|동료(?:의)?|상사(?:의)?)\s*(?:\S+\s*)?"
        r"(?:비밀\s*번호|비번|패스워드)\s*(?:을|를)?\s*(?:몰래\s*)?(?:알아내|알아낼|크랙)",
        r"(?:계정|비밀\s*번호|비번|패스워드|인증\s*정보|세션|쿠키|개인\s*정보)\s*(?:을|를)?\s*"
        r"(?:탈취|훔치|훔쳐|빼내|빼돌리|털)(?:는|하는|할|해|려면|기)",
        after=r"^.{0,20}?(?:공격|대응|방어|예방|막|탐지|차단|사고|사례|피해|유형)",
    ),
    rule(
        "ko_phishing_kit",
        r"(?:피싱|스미싱|파밍)\s*(?:사이트|페이지|키트|메일|문자|링크|툴|도구)\s*(?:을|를|좀|하나)?\s*"
        r"(?:만들|만드|제작|생성|구축|개발|짜|구해|구하|구매|사)",
        before=r"(?:모의|훈련용|교육용|테스트용|보안\s*훈련|훈련)\s*$",
    ),
)
