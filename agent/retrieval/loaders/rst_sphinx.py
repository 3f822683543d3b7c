"""What Sphinx and Korean writing add to reStructuredText, read without Sphinx.

Team documentation in ``.rst`` is mostly a Sphinx site: ``:ref:`Deploying <deploy>```,
``:doc:`guide``` and ``.. versionadded:: 2.0`` are everywhere, and docutils alone knows
none of them (an unknown role stays in the text, colons and backticks and all; an unknown
directive's text is dropped). Korean adds markup docutils does not recognise at all: a
particle follows the closing backticks with no space (````make deploy``를``), where
reStructuredText wants one. :func:`unmarked` takes such leftover markup out of the text;
:func:`register_sphinx_directives` teaches docutils the directives that carry prose.
"""

from __future__ import annotations

import re
from typing import Any, ClassVar

# :ref:`x`, :py:func:`x`: a role docutils does not know, left in the text as written.
_ROLE = re.compile(r":(?:[A-Za-z][\w.+-]*:)+`([^`]+)`")
_LITERAL = re.compile(r"``(\S(?:.*?\S)?)``")
_STRONG = re.compile(r"\*\*(\S(?:.*?\S)?)\*\*")
_INTERPRETED = re.compile(r"`([^`\s](?:[^`]*[^`\s])?)`_{0,2}")


def _shown(target: str) -> str:
    """What Sphinx shows for a cross-reference: the title of ``Title <target>``, the last
    part of ``~pkg.mod.func``, the target of ``!name``."""
    # "Title <target>": by string ends, not a pattern (a lazy group before "\s*<" backtracks
    # quadratically on a long run of spaces).
    if target.endswith(">") and "<" in target:
        title = target[: target.rindex("<")].rstrip()
        if title and ">" not in target[target.rindex("<") + 1 : -1]:
            return title
    if target.startswith("~"):
        return target[1:].rsplit(".", 1)[-1]
    return target.lstrip("!")


def unmarked(text: str) -> str:
    """``text`` without the markup docutils left in it: unknown roles, and literals, strong
    text and references whose closing mark a Korean particle follows."""
    text = _ROLE.sub(lambda m: _shown(m.group(1)), text)
    text = _LITERAL.sub(r"\1", text)
    text = _STRONG.sub(r"\1", text)
    return _INTERPRETED.sub(lambda m: _shown(m.group(1)), text)


# Directives whose text is prose, with the label Sphinx puts before it ("{}": the version).
_LABELLED = {
    "versionadded": "New in version {}",
    "versionchanged": "Changed in version {}",
    "deprecated": "Deprecated since version {}",
    "versionremoved": "Removed in version {}",
    "seealso": "See also",
}
# Directives whose content is plain body text (``.. only:: html`` holds ordinary prose).
_PASSTHROUGH = ("only", "glossary", "hlist", "centered", "tab", "group-tab")


def register_sphinx_directives() -> None:
    """Teach docutils the Sphinx directives that hold prose, so their text is kept. The
    rest (``toctree``, ``autoclass``, ``literalinclude``: never a file read) stay unknown
    and are dropped with docutils' other complaints."""
    from docutils import nodes
    from docutils.parsers.rst import Directive, directives

    class Labelled(Directive):  # type: ignore[misc]  # docutils has no hints
        """An admonition titled with its label: "New in version 2.0: ..."."""

        required_arguments = 0
        optional_arguments = 2
        final_argument_whitespace = True
        has_content = True
        label: ClassVar[str] = ""

        def run(self) -> list[Any]:
            words = list(self.arguments)
            version = words.pop(0) if "{}" in self.label and words else ""
            node = nodes.admonition()
            node += nodes.title(text=self.label.format(version).strip())
            if words:  # "versionadded:: 2.0 The --dry-run option.", "seealso:: zipfile"
                node += nodes.paragraph(text=" ".join(words))
            self.state.nested_parse(self.content, self.content_offset, node)
            return [node]

    class Passthrough(Directive):  # type: ignore[misc]
        """The directive's argument (``centered``'s text) and content as body text."""

        optional_arguments = 1
        final_argument_whitespace = True
        has_content = True

        def run(self) -> list[Any]:
            node = nodes.container()
            if self.arguments and self.name == "centered":
                node += nodes.paragraph(text=self.arguments[0])
            self.state.nested_parse(self.content, self.content_offset, node)
            return [node]

    for name, label in _LABELLED.items():
        directives.register_directive(name, type(name, (Labelled,), {"label": label}))
    for name in _PASSTHROUGH:
        directives.register_directive(name, Passthrough)
