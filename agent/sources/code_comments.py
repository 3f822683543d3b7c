"""Comments and docstrings of source files, for ``git --code-comments``: the prose a
team writes next to its code, without the code itself."""

from __future__ import annotations

import re

CODE_GLOBS = ("*.py", "*.js", "*.ts", "*.go", "*.java", "*.kt", "*.rs", "*.c", "*.h", "*.cpp")

_PY_DOC = re.compile(r'("""|\'\'\')(.*?)\1', re.DOTALL)
_HASH = re.compile(r"^\s*#(?!!)\s?(.*)$", re.MULTILINE)
_SLASHES = re.compile(r"^\s*//+\s?(.*)$", re.MULTILINE)
_BLOCK = re.compile(r"/\*+(.*?)\*/", re.DOTALL)


def comments_text(name: str, data: bytes) -> str:
    text = data.decode("utf-8", "replace")
    parts: list[str] = []
    if name.endswith(".py"):
        parts += [m.group(2).strip() for m in _PY_DOC.finditer(text)]
        parts += [m.group(1).strip() for m in _HASH.finditer(text)]
    else:
        parts += [
            re.sub(r"^\s*\*\s?", "", m.group(1), flags=re.MULTILINE).strip()
            for m in _BLOCK.finditer(text)
        ]
        parts += [m.group(1).strip() for m in _SLASHES.finditer(text)]
    return "\n\n".join(p for p in parts if p)
