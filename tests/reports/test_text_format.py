"""Free report text: `code` spans rendered, only what would be read as HTML escaped."""

from __future__ import annotations

from lsrep.reports.format import md_cell, md_text, prose


def test_prose_renders_code_spans_and_markdown_keeps_comparisons_readable():
    assert str(prose("use `disable = [\"<m>\"]` & see <b>")) == (
        'use <code>disable = [&#34;&lt;m&gt;&#34;]</code> &amp; see &lt;b&gt;')
    assert md_text('p < 0.05, `disable = ["<m>"]`, <script>x</script>') == (
        'p < 0.05, `disable = ["<m>"]`, &lt;script>x&lt;/script>')
    assert md_cell("<0.001 (Holm <0.001)") == "<0.001 (Holm <0.001)"
    assert md_cell("a|b") == "a\\|b"
