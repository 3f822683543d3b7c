"""A table cut across chunks keeps its header row in each chunk (agent/retrieval/chunking.py):
the rows of a later chunk otherwise read as a table whose first row is its header, and
the extractive answer quoted a row as the column names of the rows below it.

The tables are written here (a studio's equipment list, an on-call roster), not taken from
a benchmark; the Word file goes through the real loader.
"""

from __future__ import annotations

from pathlib import Path

import docx

from agent.answers.candidates import quotable
from agent.retrieval.chunking import ChunkingConfig, chunk_document
from agent.retrieval.loaders import load_document
from agent.retrieval.types import Chunk, LoadedDocument, SearchHit, Section
from agent.state import hit_of, pool_item

ROLES = [
    ("Client engineer", "Windows workstation with 64 GB RAM and a second screen"),
    ("Backend engineer", "MacBook Pro 16-inch with 48 GB RAM and a docking station"),
    ("Technical artist", "Windows workstation with a drawing tablet and a colour screen"),
    ("Producer", "MacBook Pro 14-inch with 36 GB RAM and a travel adapter kit"),
    ("QA tester", "Windows laptop plus phones checked out from the device room"),
    ("Sound designer", "Mac Studio with studio monitors and an audio interface"),
]


def chunks_of(document: LoadedDocument, size: int = 200) -> list[Chunk]:
    config = ChunkingConfig(size=size, overlap=0)
    return chunk_document(document, doc_id="d", source="/d", content_hash="h" * 12, config=config)


def test_a_word_table_keeps_its_header_in_every_chunk(tmp_path: Path) -> None:
    word = docx.Document()
    word.add_heading("Standard equipment by role", level=1)
    table = word.add_table(rows=1, cols=2)
    table.rows[0].cells[0].text, table.rows[0].cells[1].text = "Role", "Computer"
    for role, computer in ROLES:
        cells = table.add_row().cells
        cells[0].text, cells[1].text = role, computer
    path = tmp_path / "equipment.docx"
    word.save(str(path))
    chunks = chunks_of(load_document(path, path.read_bytes()))
    assert len(chunks) > 2  # the table is cut
    assert "| Role | Computer |" in chunks[0].text  # a Markdown row, as every loader writes
    for chunk in chunks[1:]:
        assert chunk.text.startswith("| Role | Computer |\n\n"), chunk.text
    rows = [c.text for chunk in chunks for c in quotable(0, chunk) if "|" in c.text]
    assert len(rows) == len(ROLES), rows
    assert all(row.startswith("| Role | Computer | → |") for row in rows), rows
    assert "| Role | Computer | → | Producer | MacBook Pro 14-inch" in " ".join(rows)


def test_a_markdown_table_keeps_its_header_and_the_text_after_it_none() -> None:
    rows = "\n".join(f"| {role} | {computer} |" for role, computer in ROLES)
    text = f"| Role | Computer |\n|---|---|\n{rows}\n\nAsk IT for anything beyond this list."
    chunks = chunks_of(LoadedDocument("Equipment", [Section(text, heading="Equipment")]), 150)
    with_rows = [c for c in chunks if any(role in c.text for role, _ in ROLES)]
    assert len(with_rows) > 1
    assert all(c.text.startswith("| Role | Computer |") for c in with_rows)
    after = next(c for c in chunks if "Ask IT" in c.text)
    assert not after.text.split("Ask IT")[0].strip() or after in with_rows


def test_a_passage_with_its_neighbours_reads_its_overlap_once() -> None:
    """Chunks overlap; joined back for the answer, the overlap is not repeated, also when
    a chunk ends inside a sentence ("(Vol. 1, Vol." then "1, Vol. 2).")."""
    text = (
        "Hutton's theory held that the Earth was much older than supposed, and that rocks "
        "were worn down and raised again over many ages. Hutton published a two-volume "
        "version of his ideas in 1795 (Vol. 1, Vol. 2). 허턴의 생각은 당시 학계에서 "
        "받아들여지지 않았고, 라이엘이 이를 이어받아 널리 알렸습니다."
    )
    document = LoadedDocument("Hutton", [Section(text, heading="Geology")])
    config = ChunkingConfig(size=90, overlap=30)
    chunks = chunk_document(document, doc_id="d", source="/d", content_hash="h" * 12, config=config)
    assert len(chunks) > 2
    joined = [c.text for c in chunks]
    assert sum(map(len, joined)) > len(text) + len(joined), joined  # they overlap
    for i, chunk in enumerate(chunks):
        hit = SearchHit(chunk, 1.0, neighbours=chunks[max(0, i - 1) : i] + chunks[i + 1 : i + 2])
        context = " ".join(hit.context_text().split())
        assert context in text, (context, joined)
    assert "(Vol. 1, Vol. 2)" in " ".join(
        SearchHit(chunks[1], 1.0, neighbours=chunks).context_text().split()
    )


def test_a_section_heading_is_never_a_chunk_of_its_own() -> None:
    """A long first paragraph cut the heading line off into a chunk that said nothing and was
    quoted as a neighbour."""
    items = "\n".join(
        f"- Step {n}: check the dashboard for region {n} and note it." for n in range(9)
    )
    text = f"7. Closing and postmortems\n\n{items}"
    document = LoadedDocument(
        "Runbook", [Section(text, heading="Runbook > 7. Closing and postmortems")]
    )
    chunks = chunks_of(document, 120)
    assert len(chunks) > 2
    assert chunks[0].text.startswith("7. Closing and postmortems\n\n- Step 0"), chunks[0].text
    assert all(c.text != "7. Closing and postmortems" for c in chunks)


def test_a_neighbour_from_another_section_opens_with_its_heading_as_a_heading() -> None:
    """Joined below the hit, the next section's numbered heading reads as a heading, not as
    a list item an answer could quote."""
    first = LoadedDocument(
        "Events",
        [
            Section(
                "2. Rewards\n\n- Rewards go to the in-game mailbox.", heading="Events > 2. Rewards"
            ),
            Section(
                "3. Events with random items\n\nOdds are published in the game.",
                heading="Events > 3. Events with random items",
            ),
        ],
    )
    chunks = chunks_of(first)
    hit = SearchHit(chunks[0], 1.0, neighbours=[chunks[1]])
    context = hit.context_text()
    assert "\n\n## 3. Events with random items\n\n" in context, context
    texts = [c.text for c in quotable(0, hit_of(pool_item(hit, "test")).chunk)]
    assert texts == ["- Rewards go to the in-game mailbox.", "Odds are published in the game."]


def test_a_heading_with_its_text_on_the_next_line_is_not_the_start_of_a_sentence() -> None:
    """An HWPX section's heading is followed by its text after a single line break: read as
    one paragraph, the heading was quoted as the start of the first sentence."""
    heading = "택배와 야간 출입 (Parcels and late entry)"
    text = f"{heading}\n개인 택배는 1층 무인 택배함으로 받고, 사흘 안에 찾아가야 합니다."
    chunk = Chunk("d:1", "d", 1, text, "/d.hwpx", "Office", heading=f"Office > {heading}")
    item = pool_item(SearchHit(chunk, 1.0), "test")
    assert item["text"].startswith(f"## {heading}\n\n")
    texts = [c.text for c in quotable(0, hit_of(item).chunk)]
    assert texts == ["개인 택배는 1층 무인 택배함으로 받고, 사흘 안에 찾아가야 합니다."]
