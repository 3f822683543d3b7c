"""reStructuredText, parsed with docutils into what the Markdown loader gives: one section
per title with its heading path (``Guide > Approvals``), list items one a line (``- x``,
``1. x``), tables as Markdown rows under their header row, and no markup left over
(underlines, ``.. contents::``, comments, backticks).

docutils is imported on first use: ``teamrag --help`` does not pay for it. It is told to
read no files and pass no raw HTML (``.. include:: /etc/passwd`` is dropped, not read),
to report nothing and never halt; input it still chokes on (lists nested hundreds deep)
is read as plain text, with a note saying so.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path
from typing import Any

from agent.retrieval.loaders.base import decode_text, row_line, table_lines
from agent.retrieval.loaders.rst_sphinx import register_sphinx_directives, unmarked
from agent.retrieval.loaders.text import load_text
from agent.retrieval.types import LoadedDocument, Section

# docutils reads about 300 KB a second and a little slower as files grow (2 MB: ~7 s);
# beyond this a file is read as plain text, and the note says how to get its sections.
MAX_PARSE_CHARS = 4_000_000

_SETTINGS: dict[str, Any] = {
    "_disable_config": True,  # no docutils.conf from the working or home directory
    "file_insertion_enabled": False,  # include, csv-table :file:/:url:, raw :file:
    "raw_enabled": False,  # `.. raw:: html` would go into answers and web pages
    "report_level": 5,  # problems stay in the tree as system_message nodes, skipped below
    "halt_level": 5,
    "traceback": True,  # raise what it cannot parse (we fall back), never sys.exit()
    "warning_stream": False,
    "syntax_highlight": "none",  # `.. code::` without Pygments: the text is what we want
    "strip_comments": True,
    # docutils refuses a whole file over one line of 10,000 characters (inline parsing
    # slows on long lines): an unwrapped Korean paragraph can be that long. 50,000 parses
    # in under a second.
    "line_length_limit": 50_000,
    "language_code": "en",
}

Node = Any  # a docutils node: docutils ships no type hints


def load_rst(path: Path, data: bytes) -> LoadedDocument:
    text = decode_text(data, path)
    if len(text) > MAX_PARSE_CHARS:
        return _plain(
            path,
            data,
            f"larger than {MAX_PARSE_CHARS // 1_000_000} MB of reStructuredText: read as "
            "plain text, without its sections; split it into smaller files to get them",
        )
    try:
        document = _parse(text)
        loaded = _from_doctree(document, path.stem)
    except Exception as exc:  # docutils on hostile input: RecursionError, its own errors
        return _plain(path, data, f"not readable as reStructuredText ({type(exc).__name__})")
    if not loaded.sections:  # a line over docutils' length limit leaves an empty tree
        return _plain(path, data, "not readable as reStructuredText")
    return loaded


def _plain(path: Path, data: bytes, why: str) -> LoadedDocument:
    plain = load_text(path, data)
    return LoadedDocument(title=plain.title, sections=plain.sections, notes=why)


def _parse(text: str) -> Node:
    from docutils.core import publish_doctree

    _register()
    return publish_doctree(text, settings_overrides=dict(_SETTINGS))


@cache
def _register() -> None:
    register_sphinx_directives()


def _from_doctree(document: Node, stem: str) -> LoadedDocument:
    from docutils import nodes

    title_node = next((c for c in document.children if isinstance(c, nodes.title)), None)
    title = _inline(title_node) if title_node is not None else ""
    sections: list[Section] = []
    _collect(document, [title] if title else [], title, sections)
    return LoadedDocument(title=title or document.get("title") or stem, sections=sections)


def _collect(node: Node, path: list[str], title: str, out: list[Section]) -> None:
    """``node``'s own text as one section (its title first, as Markdown sections keep
    their heading line), then each subsection. A title with no text of its own lives on
    in its subsections' heading paths only, as in :func:`markdown_sections`."""
    from docutils import nodes

    own: list[str] = []
    subsections = []
    for child in node.children:
        if isinstance(child, nodes.section):
            subsections.append(child)
        elif not isinstance(child, nodes.title):
            own.extend(_blocks(child))
    if own:
        text = "\n\n".join(([title] if title else []) + own)
        out.append(Section(text=text, heading=" > ".join(path)))
    for section in subsections:
        heading = next((c for c in section.children if isinstance(c, nodes.title)), None)
        name = _inline(heading) if heading is not None else ""
        _collect(section, [*path, name] if name else path, name, out)


def _blocks(node: Node) -> list[str]:
    """The paragraphs, lists, tables and code of a body element, one string each."""
    from docutils import nodes

    if isinstance(node, _skipped()):
        return []
    if isinstance(node, nodes.topic) and "contents" in node["classes"]:
        return []  # `.. contents::`: the section titles again
    if isinstance(node, nodes.paragraph | nodes.rubric | nodes.subtitle | nodes.caption):
        line = _inline(node)
        return [line] if line else []
    if isinstance(node, nodes.literal_block | nodes.doctest_block | nodes.math_block):
        # Fenced as in Markdown: searchable, but not quoted as a sentence.
        return [f"```\n{node.astext().strip(chr(10))}\n```"]
    if isinstance(node, nodes.Admonition):
        return _admonition(node)
    if isinstance(
        node,
        nodes.bullet_list
        | nodes.enumerated_list
        | nodes.definition_list
        | nodes.field_list
        | nodes.docinfo
        | nodes.option_list,
    ):
        lines = _list_lines(node, "")
        return ["\n".join(lines)] if lines else []
    if isinstance(node, nodes.table):
        return _table_blocks(node)
    if isinstance(node, nodes.line_block):
        lines = _line_block(node, "")
        return ["\n".join(lines)] if lines else []
    if isinstance(node, nodes.footnote | nodes.citation):
        label = next((c for c in node.children if isinstance(c, nodes.label)), None)
        body = _one_line(c for c in node.children if not isinstance(c, nodes.label))
        return [f"[{label.astext()}] {body}" if label is not None else body]
    if isinstance(node, nodes.attribution):
        return [f"— {_inline(node)}"]
    if isinstance(node, nodes.TextElement):
        line = _inline(node)
        return [line] if line else []
    # Containers: block quotes, topics, sidebars, figures, compound, container.
    return [block for child in node.children for block in _blocks(child)]


@cache
def _skipped() -> tuple[type, ...]:
    """What carries no prose: comments, targets, substitution definitions, images, raw
    passthrough (refused anyway), problems docutils reported, headers and footers."""
    from docutils import nodes

    return (
        nodes.comment,
        nodes.target,
        nodes.substitution_definition,
        nodes.system_message,
        nodes.image,
        nodes.raw,
        nodes.pending,
        nodes.meta,
        nodes.decoration,
        nodes.transition,
        nodes.label,
    )


def _inline(node: Node) -> str:
    """A text element's text on one line: literals without their backticks, a link's
    address after its words, footnote marks and problems left out."""
    from docutils import nodes

    runs: list[tuple[str, bool]] = []  # (text, is code): markup is taken out of prose only

    def walk(current: Node, code: bool) -> None:
        if isinstance(current, nodes.Text):
            runs.append((current.astext(), code))  # str() would keep escapes as NULs
        elif isinstance(current, nodes.problematic):
            runs.append((current.astext(), False))  # an unknown role, a mark left open
        elif isinstance(current, (*_skipped(), nodes.footnote_reference, nodes.citation_reference)):
            return
        else:
            code = code or isinstance(current, nodes.literal | nodes.FixedTextElement)
            for child in current.children:
                walk(child, code)
            uri = current.get("refuri", "") if isinstance(current, nodes.reference) else ""
            if uri and not uri.startswith("mailto:") and uri not in current.astext():
                runs.append((f" ({uri})", True))

    walk(node, False)
    # Prose split by a problem docutils marked (``make``를: an opening mark it saw, and
    # no closing one) is cleaned whole, so the two marks meet again.
    text, prose = "", ""
    for run, code in runs:
        if code:
            text, prose = text + unmarked(prose) + run, ""
        else:
            prose += run
    return " ".join((text + unmarked(prose)).split())


def _one_line(children: Any) -> str:
    """Body elements run into one line (a list item, a table cell), code fences dropped."""
    lines: list[str] = []
    for child in children:
        for block in _blocks(child):
            lines.extend(line for line in block.split("\n") if not line.startswith("```"))
    return " ".join(" ".join(lines).split())


def _list_lines(node: Node, indent: str) -> list[str]:
    """A list one item a line, as Markdown writes it: ``- x``, ``1. x``, definitions and
    fields as ``- term: definition``; nested lists indented under their item."""
    from docutils import nodes

    nested_types = (
        nodes.bullet_list,
        nodes.enumerated_list,
        nodes.definition_list,
        nodes.field_list,
        nodes.option_list,
    )
    lines: list[str] = []
    for number, item in enumerate(node.children):
        if isinstance(item, _skipped()):
            continue
        head, body = _item_parts(node, item, number)
        nested = [c for c in body if isinstance(c, nested_types)]
        text = _one_line(c for c in body if not isinstance(c, nested_types))
        if text:
            lines.append(f"{indent}{head} {text}")
        elif not (nested and head == "-"):  # a bullet holding only a list is its list
            lines.append(indent + head.rstrip(":"))
        for inner in nested:
            lines.extend(_list_lines(inner, indent + "  "))
    return lines


def _item_parts(node: Node, item: Node, number: int) -> tuple[str, list[Node]]:
    """An item's lead (``- term``, ``1.``) and the nodes of its body."""
    from docutils import nodes

    if isinstance(node, nodes.enumerated_list):
        return _enumerator(node, number), list(item.children)
    if isinstance(node, nodes.bullet_list):
        return "-", list(item.children)
    if isinstance(item, nodes.definition_list_item):
        terms = [c for c in item.children if isinstance(c, nodes.term)]
        classifiers = [_inline(c) for c in item.children if isinstance(c, nodes.classifier)]
        term = " ".join(_inline(t) for t in terms).rstrip(":：")
        term += "".join(f" ({c})" for c in classifiers)
        body = [c for c in item.children if isinstance(c, nodes.definition)]
        return f"- {term}:", [n for d in body for n in d.children]
    if isinstance(item, nodes.field):
        name = _inline(item.children[0]).rstrip(":：")
        return f"- {name}:", list(item.children[1].children)
    if isinstance(item, nodes.option_list_item):
        group, description = item.children[0], item.children[1:]
        options = ", ".join(o.astext() for o in group.children)  # "--file=FILE"
        return f"- {options}:", [n for d in description for n in d.children]
    # A docinfo entry docutils recognised by name (author, version, date, ...).
    label = item.tagname.replace("_", " ").capitalize()
    if isinstance(item, nodes.authors):
        return f"- {label}: " + ", ".join(_inline(a) for a in item.children), []
    return f"- {label}: {_inline(item)}", []


def _enumerator(node: Node, number: int) -> str:
    """``3.`` for a numbered item (the Markdown form the answer code reads as an item);
    ``- b.``, ``- (iv)`` for letters and roman numerals, which it would not."""
    n = node.get("start", 1) + number
    kind = node.get("enumtype", "arabic")
    if kind == "arabic":
        return f"{n}."
    label = chr(ord("a") + (n - 1) % 26) if kind.endswith("alpha") else _roman(n)
    if kind.startswith("upper"):
        label = label.upper()
    return f"- {node.get('prefix', '')}{label}{node.get('suffix', '.')}"


def _roman(n: int) -> str:
    out = ""
    for value, letters in (
        (1000, "m"), (900, "cm"), (500, "d"), (400, "cd"), (100, "c"), (90, "xc"),
        (50, "l"), (40, "xl"), (10, "x"), (9, "ix"), (5, "v"), (4, "iv"), (1, "i"),
    ):  # fmt: skip
        count, n = divmod(n, value)
        out += letters * count
    return out


def _line_block(node: Node, indent: str) -> list[str]:
    from docutils import nodes

    lines: list[str] = []
    for child in node.children:
        if isinstance(child, nodes.line_block):
            lines.extend(_line_block(child, indent + "  "))
        elif line := _inline(child):
            lines.append(indent + line)
    return lines


def _admonition(node: Node) -> list[str]:
    """``.. note::`` as "Note: ...", a titled ``.. admonition:: Title`` as "Title: ..."."""
    from docutils import nodes

    title = next((c for c in node.children if isinstance(c, nodes.title)), None)
    label = _inline(title) if title is not None else node.tagname.capitalize()
    body = [b for c in node.children if c is not title for b in _blocks(c)]
    if not body or body[0].startswith(("```", "-", "|")) or re.match(r"\d+\. ", body[0]):
        return [f"{label}:", *body]  # a lead-in line before a list, a table or code
    return [f"{label}: {body[0]}", *body[1:]]


def _table_blocks(node: Node) -> list[str]:
    """A grid, simple, CSV or list table as Markdown rows: the header row, the ``|---|``
    separator, then the rows, as a Markdown table reads; cells spanning rows repeat their
    text in each row, so every row stands alone with its header. A title goes before."""
    from docutils import nodes

    blocks: list[str] = []
    for child in node.children:
        if isinstance(child, nodes.title):
            blocks.append(_inline(child))
        elif isinstance(child, nodes.tgroup):
            cols = int(child.get("cols", 0))
            head = [r for t in child.children if isinstance(t, nodes.thead) for r in t.children]
            body = [r for t in child.children if isinstance(t, nodes.tbody) for r in t.children]
            grid = _grid(head + body, cols)
            lines: list[str] = []
            if head:
                columns = zip(*grid[: len(head)], strict=True)  # header rows, merged
                header = [" ".join(filter(None, column)) for column in columns]
                lines += [row_line(header), "|" + "---|" * len(header)]
            lines += table_lines(grid[len(head) :])
            blocks.append("\n".join(lines))
    return [block for block in blocks if block]


def _grid(rows: list[Node], cols: int) -> list[list[str]]:
    carried: dict[int, tuple[str, int]] = {}  # column -> (text, rows still to span)
    grid: list[list[str]] = []
    for row in rows:
        entries = iter(row.children)
        cells: list[str] = []
        while len(cells) < cols:
            column = len(cells)
            if column in carried:
                text, left = carried.pop(column)
                cells.append(text)
                if left > 1:
                    carried[column] = (text, left - 1)
                continue
            entry = next(entries, None)
            if entry is None:
                cells.append("")
                continue
            text = _one_line(entry.children).replace("|", "\\|")
            for k in range(int(entry.get("morecols", 0)) + 1):
                cells.append(text if k == 0 else "")
                if entry.get("morerows"):
                    carried[column + k] = (cells[-1], int(entry["morerows"]))
        grid.append(cells[:cols])
    return grid
