"""The document model (core.views.blocks): every block type written as Markdown and as
HTML, exactly, with what a user typed escaped both ways."""

from __future__ import annotations

from workbench.core.views.blocks import (
    Block,
    Code,
    Figure,
    Heading,
    LineBreak,
    Note,
    Paragraph,
    Table,
    html_document,
    markdown_document,
    with_code,
)

#: Console input can hold HTML, Rich markup and Markdown's own characters.
TYPED = "<b>x</b> & [/bold] a_b *c* |d|"
SVG = '<svg xmlns="http://www.w3.org/2000/svg" width="2"><text>t</text></svg>'


def test_a_heading_at_each_level():
    assert (
        Heading(TYPED, level=1).markdown()
        == r"# &lt;b&gt;x&lt;/b&gt; &amp; \[/bold\] a_b \*c\* \|d\|"
    )
    assert Heading("Settings").markdown() == "## Settings"
    assert Heading("The KV cache", level=3).markdown() == "### The KV cache"
    assert Heading(TYPED, level=1).html() == (
        "<h1>&lt;b&gt;x&lt;/b&gt; &amp; [/bold] a_b *c* |d|</h1>"
    )
    assert Heading("Settings").html() == "<h2>Settings</h2>"
    assert Heading("The KV cache", level=3).html() == "<h3>The KV cache</h3>"


def test_a_paragraph_in_each_style_with_code_and_a_line_break():
    assert Paragraph(TYPED).markdown() == r"&lt;b&gt;x&lt;/b&gt; &amp; \[/bold\] a_b \*c\* \|d\|"
    assert Paragraph(TYPED).html() == "<p>&lt;b&gt;x&lt;/b&gt; &amp; [/bold] a_b *c* |d|</p>"
    assert Paragraph("a < b", style="caption").html() == '<p class="caption">a &lt; b</p>'
    assert Paragraph("a < b", style="caption").markdown() == "a &lt; b"
    meta = Paragraph(("Generated from ", Code("runs/<x>"), "."), style="meta")
    assert meta.markdown() == "Generated from `runs/<x>`."  # a code span shows as typed
    assert meta.html() == '<p class="meta">Generated from <code>runs/&lt;x&gt;</code>.</p>'
    lines = Paragraph(("Source: <s>", LineBreak(), "Translation: 茶"))
    assert lines.markdown() == "Source: &lt;s&gt;  \nTranslation: 茶"
    assert lines.html() == "<p>Source: &lt;s&gt;<br>Translation: 茶</p>"


def test_only_the_workbenchs_own_backticks_become_code():
    parts = with_code("press F6 in `workbench tui` to save one")
    assert parts == ("press F6 in ", Code("workbench tui"), " to save one")
    assert Paragraph(parts).markdown() == "press F6 in `workbench tui` to save one"
    assert Paragraph(parts).html() == "<p>press F6 in <code>workbench tui</code> to save one</p>"
    typed = Paragraph("a `b` c")  # a user's backticks: text, escaped
    assert typed.markdown() == r"a \`b\` c"
    assert typed.html() == "<p>a `b` c</p>"


def test_a_note():
    assert Note(TYPED).markdown() == (
        r"> **Note:** &lt;b&gt;x&lt;/b&gt; &amp; \[/bold\] a_b \*c\* \|d\|"
    )
    assert Note(TYPED).html() == (
        '<p class="note"><strong>Note:</strong> &lt;b&gt;x&lt;/b&gt; &amp; [/bold] a_b *c* |d|</p>'
    )


def test_a_table_keyed_numeric_marked_and_judged():
    table = Table(["Run", "BLEU"], [[TYPED, "1.50"], ["b", ""]], row_classes=["best", ""])
    assert table.markdown() == "\n".join(
        [
            "| Run | BLEU |",
            "| --- | --- |",
            r"| &lt;b&gt;x&lt;/b&gt; &amp; \[/bold\] a_b \*c\* \|d\| | 1.50 |",
            "| b |   |",
        ]
    )
    assert table.html() == "\n".join(
        [
            "<table>",
            "<thead><tr><th>Run</th><th>BLEU</th></tr></thead>",
            "<tbody>",
            '<tr class="best"><td>&lt;b&gt;x&lt;/b&gt; &amp; [/bold] a_b *c* |d|</td>'
            '<td class="num">1.50</td></tr>',
            "<tr><td>b</td><td></td></tr>",
            "</tbody></table>",
        ]
    )
    keyed = Table(["", ""], [["epochs", "2"]], numeric=False, judgement=True)
    assert keyed.markdown() == "|  |  |\n| --- | --- |\n| epochs | 2 |"
    assert keyed.html() == "\n".join(
        [
            "<table>",
            "<tbody>",
            '<tr><th scope="row">epochs</th>'
            '<td class="judgement" contenteditable="true">2</td></tr>',
            "</tbody></table>",
        ]
    )


def test_a_figure_linked_in_markdown_and_inline_in_html():
    figure = Figure("loss.svg", SVG, alt="Loss <curves>", caption="Loss per *epoch*.")
    assert figure.markdown() == "![Loss &lt;curves&gt;](loss.svg)\n\n*Loss per \\*epoch\\*.*"
    assert figure.html() == (
        '<figure>\n<svg width="2"><text>t</text></svg>\n'
        '<figcaption class="caption">Loss per *epoch*.</figcaption></figure>'
    )
    shot = Figure("s.svg", SVG, alt="Runs pane", caption="Runs pane", css_class="shot", png="s.png")
    assert shot.markdown() == "![Runs pane](s.svg)\n\n*Runs pane* ([PNG](s.png))"
    assert shot.html().startswith('<figure class="shot">\n<svg width="2">')
    bare = Figure("b.svg", SVG, alt="B")
    assert (bare.markdown(), bare.html()) == (
        "![B](b.svg)",
        '<figure>\n<svg width="2"><text>t</text></svg>\n</figure>',
    )
    missing = Figure("gone.svg", None, alt="Gone", caption="Not drawn.")
    assert (missing.markdown(), missing.html()) == ("", "")


def test_a_document_is_its_blocks_in_order_both_ways():
    blocks: list[Block] = [
        Heading(f"Report: {TYPED}", level=1),
        Note("first"),
        Note("second"),
        Figure("gone.svg", None, alt="Gone"),  # nothing to show: no blank lines for it
        Paragraph("end"),
    ]
    assert markdown_document(blocks) == (
        r"# Report: &lt;b&gt;x&lt;/b&gt; &amp; \[/bold\] a_b \*c\* \|d\|"
        "\n\n> **Note:** first\n\n> **Note:** second\n\nend\n"
    )
    page = html_document(blocks)
    assert "<title>Report: &lt;b&gt;x&lt;/b&gt; &amp; [/bold] a_b *c* |d|</title>" in page
    body = page.split("<body>\n", 1)[1]
    assert body == (
        "<h1>Report: &lt;b&gt;x&lt;/b&gt; &amp; [/bold] a_b *c* |d|</h1>\n"
        '<p class="note"><strong>Note:</strong> first</p>\n'
        '<p class="note"><strong>Note:</strong> second</p>\n'
        "<p>end</p>\n</body>\n</html>\n"
    )
