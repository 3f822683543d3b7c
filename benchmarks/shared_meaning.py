"""Does a variation of a question need a vector of its own? Pools with and without.

The planner's variations are the question in other words: paraphrases, a keyword query
and a translation into the other language. Since round 4 of issue 17 they are searched
with the question's vector on the dense side (``SearchOptions.meaning``) and only their
own words on the keyword side, which saves embedding them and a vector read each.

This checks what that costs on the cross-language set (benchmarks/data/crosslingual.json)
in one mixed index of KorQuAD dev and XQuAD-en: each Korean question translates an XQuAD
question, and each English question has a KorQuAD question with the same answer, so
every pair is a question and its translation, asked both ways round (482 pairs). For
each pair the turn's pool is built as the agent builds it: the question's hybrid search
plus the translation's, top 6 each, merged by score. *own*: the translation searched with
its own vector; *shared*: with the question's. A hit is a chunk of the gold paragraph.

    .venv/bin/python benchmarks/shared_meaning.py [--data-dir DIR] [--json-out FILE]
"""

from __future__ import annotations

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from agent.retrieval.embeddings import UniversalSentenceEncoder  # noqa: E402
from agent.retrieval.ingest import Ingestor  # noqa: E402
from agent.retrieval.knowledge_base import (  # noqa: E402
    KnowledgeBase,
    SearchOptions,
    collection_name,
)
from agent.retrieval.vectors import VectorStore  # noqa: E402
from benchmarks.mixed_index import (  # noqa: E402
    command_line,
    cross_questions,
    squad_sets,
    write_paragraphs,
)
from bots.evaluation.sets import QuestionSet  # noqa: E402

K = 6


def pairs(sets: dict[str, QuestionSet]) -> list[tuple[str, str, str]]:
    """(question, its translation, gold paragraph), each pair asked both ways round."""
    found = []
    for item in cross_questions():
        same = [
            q
            for q in sets[item.file].questions
            if q.source == item.paragraph and item.answer in q.answers
        ]
        if same:
            found.append((item.text, same[0].text, item.paragraph))
            found.append((same[0].text, item.text, item.paragraph))
    return found


def pool(kb: KnowledgeBase, question: str, variation: str, shared: bool) -> list[str]:
    """The gold-comparable names of the merged pool, best score first."""
    options = SearchOptions(k=K, neighbours=0)
    hits = kb.search_many([question], options)[0]
    meaning = SearchOptions(k=K, neighbours=0, meaning=question) if shared else options
    hits += kb.search_many([variation], meaning)[0]
    best: dict[str, tuple[float, str]] = {}
    for hit in hits:
        name = Path(hit.chunk.source).stem
        if hit.chunk.chunk_id not in best or best[hit.chunk.chunk_id][0] < hit.score:
            best[hit.chunk.chunk_id] = (hit.score, name)
    return [name for _, name in sorted(best.values(), reverse=True)]


def measure(data_dir: Path) -> dict[str, object]:
    sets = squad_sets()
    docs = write_paragraphs(data_dir, sets)
    embedder = UniversalSentenceEncoder(processes=2)
    name = collection_name(embedder.name)
    kb = KnowledgeBase(
        data_dir / "index", embedder, VectorStore.embedded(data_dir / "index" / "chroma", name)
    )
    try:
        Ingestor(kb).run([docs])  # unchanged files are skipped on a second run
        asked = pairs(sets)
        result: dict[str, object] = {"pairs": len(asked), "chunks": kb.catalog.chunk_count()}
        for side, shared in (("own", False), ("shared", True)):
            counts = {"top1": 0, "top3": 0, "top6": 0, "in_pool": 0}
            for question, variation, gold in asked:
                names = pool(kb, question, variation, shared)
                rank = names.index(gold) if gold in names else None
                for key, limit in (("top1", 1), ("top3", 3), ("top6", 6)):
                    counts[key] += rank is not None and rank < limit
                counts["in_pool"] += rank is not None
            result[side] = {k: round(v / len(asked), 3) for k, v in counts.items()}
        return result
    finally:
        kb.close()
        embedder.close()


def main() -> None:
    command_line(__doc__.splitlines()[0], measure)


if __name__ == "__main__":
    main()
