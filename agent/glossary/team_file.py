"""A team's own glossary file (``TEAMRAG_GLOSSARY``): pairs it adds, or corrects.

TOML::

    [terms]
    "인수인계" = "handover"
    "에러 버짓" = ["error budget", "error allowance"]

or CSV with a header ``ko,en`` (more English spellings as more rows). A Korean term the
file names replaces every pair mined or shipped for it: the file is the team's word.
"""

from __future__ import annotations

import csv
import io
import tomllib
from pathlib import Path

from agent.retrieval.types import TermPair

ORIGIN = "team file"


class GlossaryFileError(Exception):
    """The glossary file cannot be read; the message names the file and the fix."""


def read_team_file(path: Path) -> list[TermPair]:
    try:
        text = path.read_text(encoding="utf-8-sig")
    except OSError as exc:
        raise GlossaryFileError(
            f"cannot read the glossary file {path} (TEAMRAG_GLOSSARY): {exc.strerror or exc}; "
            "fix the path or unset TEAMRAG_GLOSSARY"
        ) from exc
    if path.suffix.lower() == ".csv":
        return _csv(path, text)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise GlossaryFileError(
            f"{path} (TEAMRAG_GLOSSARY) is not valid TOML: {exc}; write a [terms] table of "
            '"한국어" = "English" lines, or use a .csv file with a ko,en header'
        ) from exc
    terms = data.get("terms")
    if not isinstance(terms, dict):
        raise GlossaryFileError(
            f"{path} (TEAMRAG_GLOSSARY) has no [terms] table; "
            'add one with "한국어" = "English" lines'
        )
    pairs: list[TermPair] = []
    for ko, en in terms.items():
        for english in [en] if isinstance(en, str) else en if isinstance(en, list) else []:
            if isinstance(english, str) and english.strip():
                pairs.append(TermPair(ko.strip(), english.strip(), ORIGIN, 1.0))
    return pairs


def _csv(path: Path, text: str) -> list[TermPair]:
    reader = csv.DictReader(io.StringIO(text))
    if not reader.fieldnames or not {"ko", "en"} <= {f.strip() for f in reader.fieldnames}:
        raise GlossaryFileError(
            f"{path} (TEAMRAG_GLOSSARY) needs a header row naming the columns ko and en"
        )
    return [
        TermPair(row["ko"].strip(), row["en"].strip(), ORIGIN, 1.0)
        for row in reader
        if (row.get("ko") or "").strip() and (row.get("en") or "").strip()
    ]
