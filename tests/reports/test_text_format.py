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


def test_ranks_are_shared_while_intervals_overlap():
    from lsrep.reports.quality import ranks

    from lsrep.stats import Estimate

    def e(value, lo, hi):
        return Estimate(value, (lo, hi), 0.95, 10, 5, "probe", "test")

    nan = float("nan")
    assert ranks([e(0.85, 0.8, 0.9), e(0.7, 0.5, 0.85), e(0.45, 0.3, 0.6), e(0.1, 0.0, 0.2)]) == ["1=", "1=", "2", "4"]
    assert ranks([e(0.5, 0.4, 0.6), e(nan, nan, nan)]) == ["1", "—"]
