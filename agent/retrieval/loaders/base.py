"""What every loader shares: the error type, text decoding with encoding detection, and
Markdown-style sections (the other loaders write ``#`` headings and reuse the splitter)."""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path

from agent.retrieval.types import Section

# The fix for a damaged file: the program that made it can usually write it again.
RESAVE_PDF = "; open it and save or export it again as PDF"
RESAVE_DOCX = "; open it in Word or LibreOffice and save it again as .docx"


class LoadError(Exception):
    """A file could not be read; the message is meant for the user."""


# Korean shared drives hold CP949 (a superset of EUC-KR) text from older Windows tools.
_KOREAN = "cp949"
# A CP949 decode is trusted when most non-ASCII characters are Hangul syllables or jamo:
# Latin-1 or Shift-JIS bytes also decode as CP949 now and then, but into Hanja soup.
_HANGUL_SHARE = 0.8


def _hangul_share(text: str) -> float:
    wide = [c for c in text if ord(c) > 0x7F and not c.isspace()]
    if not wide:
        return 0.0
    hangul = sum(1 for c in wide if "HANGUL" in unicodedata.name(c, ""))
    return hangul / len(wide)


def _detected(data: bytes) -> tuple[str | None, list[str]]:
    """The text when charset-normalizer is sure of one encoding, and the encodings it
    weighed. Sure means: little chaos, and no other candidate that reads the bytes
    differently (Latin-1 text also decodes as CP1250, with "crčme" for "crème")."""
    from charset_normalizer import from_bytes

    matches = [m for m in from_bytes(data) if not m.encoding.startswith("utf_16")]
    names = [m.encoding for m in matches[:4]]
    if not matches or matches[0].chaos > 0.1:
        return None, names
    best = str(matches[0])
    if all(str(other) == best for other in matches[1:3]):
        return best, names
    return None, names


def decode_text(data: bytes, path: Path, declared: str | None = None) -> str:
    """``data`` as text: UTF-8 first, then the ``declared`` charset (an HTML meta tag),
    then CP949/EUC-KR when the result reads as Korean, then an encoding the detector is
    sure of. Anything still ambiguous is refused, naming the encodings tried."""
    if b"\x00" in data[:8192]:
        raise LoadError("binary content, not text (is the extension right?)")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        first_bad = exc.start
    tried = ["UTF-8"]
    if declared:
        tried.append(declared)
        try:
            return data.decode(declared)
        except (LookupError, UnicodeDecodeError):
            pass
    tried.append("CP949/EUC-KR")
    try:
        korean = data.decode(_KOREAN)
        if _hangul_share(korean) >= _HANGUL_SHARE:
            return korean
    except UnicodeDecodeError:
        pass
    text, weighed = _detected(data)
    if text is not None:
        return text
    tried += [name for name in weighed if name != _KOREAN]
    raise LoadError(
        f"not UTF-8 text (byte {first_bad}) and its encoding is unclear "
        f"(tried {', '.join(tried)}); convert it first, e.g. "
        f"`iconv -f CP949 -t UTF-8 {path.name} > {path.stem}.utf8{path.suffix}`"
    )


MD_HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")


def markdown_sections(text: str, *, page: int | None = None, under: str = "") -> list[Section]:
    """Split Markdown at headings, keeping the heading path (``A > B``) of each part.

    Code fences are respected so a ``#`` comment inside one is not a heading. ``under``
    prefixes every heading path (an HWP section, a sheet); ``page`` goes on every part.
    """
    sections: list[Section] = []
    path: list[tuple[int, str]] = []
    buf: list[str] = []
    in_fence = False

    def flush() -> None:
        body = "\n".join(buf).strip()
        # A heading with no text of its own (a chapter title right before a subsection)
        # lives on in its subsections' heading paths; alone it would be an empty chunk.
        if body and not (path and body == path[-1][1]):
            heading = " > ".join([under] * bool(under) + [h for _, h in path])
            sections.append(Section(text=body, heading=heading, page=page))
        buf.clear()

    for line in text.splitlines():
        if line.lstrip().startswith(("```", "~~~")):
            in_fence = not in_fence
        match = None if in_fence else MD_HEADING.match(line)
        if match:
            flush()
            level, title = len(match.group(1)), match.group(2).strip()
            path = [(lvl, h) for lvl, h in path if lvl < level] + [(level, title)]
            # The heading stays in the text: it is often the best keyword match.
            buf.append(title)
        else:
            buf.append(line)
    flush()
    return sections


def title_from_markdown(text: str, fallback: str) -> str:
    for line in text.splitlines():
        match = MD_HEADING.match(line)
        if match and len(match.group(1)) == 1:
            return match.group(2).strip()
    return fallback


def row_line(cells: list[str]) -> str:
    """A table row as a Markdown row, ``| a | b |``: the extractive answer quotes such a
    line whole, as one row (agent/answers/sentences.py), instead of running rows together."""
    return "| " + " | ".join(cells) + " |"


def table_lines(rows: list[list[str]]) -> list[str]:
    """A table's rows as Markdown rows, empty rows dropped (HWP, slides)."""
    return [row_line(cells) for cells in rows if any(c.strip() for c in cells)]


# Office files saved with a password are not ZIP packages but OLE compound files
# ("EncryptedPackage" inside): say so, instead of "corrupt".
OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"


def refuse_locked_office(data: bytes, kind: str, app: str) -> None:
    """Raise the password-protected error for an OOXML file (DOCX, XLSX, PPTX) that is one."""
    if data.startswith(OLE_MAGIC):
        raise LoadError(
            f"password-protected (encrypted) {kind}; open it in {app}, remove the password "
            f"(File > Info > Protect), save a copy and ingest that"
        )


def corrupt(kind: str, exc: Exception, fix: str) -> LoadError:
    """The error for a damaged file, naming what the library said and how to repair it."""
    detail = str(exc) if isinstance(exc, LoadError) else f"{type(exc).__name__}: {exc}"
    return LoadError(f"corrupt or unreadable {kind} ({detail}){fix}")
