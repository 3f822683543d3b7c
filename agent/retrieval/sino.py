"""The syllables Sino-Korean words are written with: the Hangul readings of the CJK
ideographs (U+4E00-U+9FFF), 513 of the 11,172 syllables.

A word spelled with others ("슬랙", "빌드", "트") is native Korean or borrowed from
another language. agent/glossary/loanwords.py uses this to tell a loanword from a
Sino-Korean noun whose consonants happen to match an English word (사용 and "using"), and
the tokenizer to keep the 인 of a loanword ("파이프라인", "플러그인") that it would otherwise
strip as the copula ("담당자인").
Derived once from the readings table of the ``hanja`` package (MIT); a set of syllables,
not a dependency.
"""

SINO_SYLLABLES = frozenset(
    "가각간갈감갑강개객갱갹거걱건걸검겁것게격견결겸겹경계고곡곤골곳공과곽관괄광괘괴괵굉교구국군굴궁권궐궤귀규균귤극근금급긍기"
    "긴길끽나낙난날남납낭내냑녀녁년녈념녑녕녘노녹농놔놜뇌뇨누눈눌뉴뉵능늦니닉닐님닙다단달담답당대덕도독돈돌동두둔둘득등라락란"
    "랄람랍랑래랭략량려력련렬렴렵령례로록론롱뢰료룡루류륙륜률륭륵름릉리린림립마막만말맘망매맥맹먀며멱면멸명몌모목몰몸몽묘묠무"
    "묵문물미민밀박반발밤방배백번벌범법벽변별병보복본볼봉부북분불붕비빈빙뿐사삭산살삼삽상새색생서석선설섬섭성세소속손솔송솰쇄"
    "쇠수숙순술숭쉬슬습승시식신실심십쌍씨아악안알암압앙애액앳앵야약양어억언얼엄업엇에엔여역연열염엽영예오옥온올옹와완왈왕왜외"
    "욋요욕용우욱운울웅원월위유육윤율융은을음읍응의이익인일임입잉자작잔잘잠잡장재쟁저적전절점접정제조족존졸종좌죄주죽준줄중즉"
    "즐즘즙증지직진질짐집짓징차착찬찰참창채책처척천철첨첩청체초촉촌총촬쵀최추축춘출충췌취측츤층치칙친칠침칩칭카쾌타탁탄탈탐탑"
    "탕태택탱터토톤통퇴투퉁특틈파판팔팟패팽퍅편폄평폐포폭폿퐁표품풍피픽필핍하학한할함합항해핵행향허헌헐험혁현혈혐협형혜호혹혼"
    "홀홍화확환활황홰회획횡효후훈훌훙훤훼휘휭휴휵휼흉흑흔흘흠흡흥희히힐"
)
