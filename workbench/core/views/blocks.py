"""The one document model of the run report and the comparison: a list of blocks, each of
which knows its one Markdown and its one HTML form.

A document is built once, as blocks, and then written twice; so ``report.md`` and
``report.html`` (and ``compare.md`` and ``compare.html``) cannot say different things,
list their sections in different orders or caption a figure two ways. The Markdown links
each figure's SVG file written beside it, so it renders on a code host; the HTML inlines
the same SVG, with its CSS, and loads nothing from anywhere.

Every block escapes its own text: what came from a user or a model (console input,
translations, settings) can hold ``<script>`` or Rich markup like ``[/bold]`` and must
show as typed. Only :class:`Code` spans, the workbench's own command names and paths,
are set as code.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

from workbench.core.views.document import (
    escape_html,
    escape_markdown,
    html_page,
    html_table,
    md_table,
)
from workbench.core.views.svg import inline_svg


class Block(Protocol):
    """A piece of a document: one Markdown form, one HTML form."""

    def markdown(self) -> str:
        """The block as Markdown lines ("" for nothing to show)."""
        ...

    def html(self) -> str:
        """The block as an HTML element ("" for nothing to show)."""
        ...


# --------------------------------------------------------------------------- inline text


@dataclass(frozen=True)
class Code:
    """A command or a path inside a paragraph, set as code."""

    text: str


@dataclass(frozen=True)
class LineBreak:
    """A line break inside a paragraph (``Source: …`` above ``Translation: …``)."""


Inline = str | Code | LineBreak


def with_code(text: str) -> tuple[Inline, ...]:
    """The workbench's own sentence with its ```command``` spans as :class:`Code`.

    Only for text the workbench writes: a user's backtick is text, never code."""
    return tuple(
        Code(part) if n % 2 else part for n, part in enumerate(text.split("`")) if part or n % 2
    )


def _inline_markdown(parts: Sequence[Inline]) -> str:
    out = []
    for part in parts:
        if isinstance(part, Code):
            out.append(f"`{part.text}`")
        elif isinstance(part, LineBreak):
            out.append("  \n")  # two spaces: Markdown's hard line break
        elif part.strip():  # escaping folds whitespace; the spaces around a code span stay
            lead = " " if part[0].isspace() else ""
            trail = " " if part[-1].isspace() else ""
            out.append(f"{lead}{escape_markdown(part)}{trail}")
        else:
            out.append(" " if part else "")
    return "".join(out)


def _inline_html(parts: Sequence[Inline]) -> str:
    out = []
    for part in parts:
        if isinstance(part, Code):
            out.append(f"<code>{escape_html(part.text)}</code>")
        elif isinstance(part, LineBreak):
            out.append("<br>")
        else:
            out.append(escape_html(part))
    return "".join(out)


def _parts(text: str | Sequence[Inline]) -> Sequence[Inline]:
    return (text,) if isinstance(text, str) else text


# --------------------------------------------------------------------------- blocks


@dataclass(frozen=True)
class Heading:
    """A title: level 1 is the document's, 2 a section's, 3 a part of a section."""

    text: str
    level: int = 2

    def markdown(self) -> str:
        """``## text``."""
        return f"{'#' * self.level} {escape_markdown(self.text)}"

    def html(self) -> str:
        """``<h2>text</h2>``, at its level."""
        return f"<h{self.level}>{escape_html(self.text)}</h{self.level}>"


#: How a paragraph reads on the page: plain text, a table's or a section's caption (smaller,
#: grey), or the line under the title saying when and from what the document was made.
ParagraphStyle = Literal["plain", "caption", "meta"]


@dataclass(frozen=True)
class Paragraph:
    """Text, with :class:`Code` spans and :class:`LineBreak` s where it has them."""

    text: str | tuple[Inline, ...]
    style: ParagraphStyle = "plain"

    def markdown(self) -> str:
        """The text, escaped; code in backticks; a break as two spaces and a newline."""
        return _inline_markdown(_parts(self.text))

    def html(self) -> str:
        """``<p>``, classed by its style."""
        cls = "" if self.style == "plain" else f' class="{self.style}"'
        return f"<p{cls}>{_inline_html(_parts(self.text))}</p>"


@dataclass(frozen=True)
class Note:
    """A warning the reader should not miss (a run that did not finish, runs that decode
    differently)."""

    text: str

    def markdown(self) -> str:
        """A quote that starts **Note:**."""
        return f"> **Note:** {escape_markdown(self.text)}"

    def html(self) -> str:
        """A shaded paragraph that starts **Note:**."""
        return f'<p class="note"><strong>Note:</strong> {escape_html(self.text)}</p>'


@dataclass(frozen=True)
class Table:
    """A table of text cells, escaped when written.

    An all-empty header makes a key/value table. The page-only parts: ``row_classes``
    (``best`` marks the best epoch), ``judgement`` (the last cell editable, to fill in)
    and ``numeric`` (numbers right-aligned)."""

    header: Sequence[str]
    rows: Sequence[Sequence[str]]
    row_classes: Sequence[str] = ()
    judgement: bool = False
    numeric: bool = True

    def markdown(self) -> str:
        """A GitHub-flavoured Markdown table."""
        return "\n".join(md_table(self.header, self.rows))

    def html(self) -> str:
        """An HTML table, numbers right-aligned unless ``numeric`` is off."""
        return html_table(
            self.header,
            self.rows,
            self.row_classes or None,
            judgement=self.judgement,
            numeric=self.numeric,
        )


@dataclass(frozen=True)
class Figure:
    """An SVG figure with its caption: the Markdown links ``file`` (written beside it),
    the HTML inlines ``svg``; no SVG, no figure.

    ``alt`` is the short name a Markdown viewer shows when the image does not load;
    ``png`` the same figure as a PNG file, linked from the Markdown only, as the page
    links nothing."""

    file: str
    svg: str | None
    alt: str
    caption: str = ""
    css_class: str = ""
    png: str | None = None

    def markdown(self) -> str:
        """The image linked, then its caption in italics (and the PNG's link)."""
        if not self.svg:
            return ""
        image = f"![{escape_markdown(self.alt)}]({self.file})"
        if not self.caption:
            return image
        png = f" ([PNG]({self.png}))" if self.png else ""
        return f"{image}\n\n*{escape_markdown(self.caption)}*{png}"

    def html(self) -> str:
        """``<figure>`` with the SVG inline and its caption."""
        if not self.svg:
            return ""
        cls = f' class="{self.css_class}"' if self.css_class else ""
        caption = (
            f'<figcaption class="caption">{escape_html(self.caption)}</figcaption>'
            if self.caption
            else ""
        )
        return f"<figure{cls}>\n{inline_svg(self.svg)}\n{caption}</figure>"


# --------------------------------------------------------------------------- documents


def markdown_document(blocks: Sequence[Block]) -> str:
    """The blocks as one Markdown file, a blank line between them."""
    text = "\n\n".join(part for part in (b.markdown() for b in blocks) if part)
    return text + "\n"


def html_document(blocks: Sequence[Block]) -> str:
    """The blocks as one self-contained HTML page, titled by its first heading."""
    title = next((b.text for b in blocks if isinstance(b, Heading) and b.level == 1), "")
    return html_page(title, [b.html() for b in blocks])
