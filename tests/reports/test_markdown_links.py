"""Link and image syntax from data is shown literally in the Markdown report; other text is unchanged."""

from __future__ import annotations

import re

from lsrep.reports.format import md_cell, md_text


def test_link_and_image_syntax_is_neutralised():
    for render in (md_cell, md_text):
        for hostile in ("[click](javascript:alert(1))", "![](http://evil.example/p.png)", "[x] (http://e/)",
                        "[a][ref]", "[ref]: http://evil.example/"):
            out = render(hostile)
            assert not re.search(r"(?<!\\)[\[\]]", out), out  # every bracket escaped: no link can form
        assert render("57.1% [33.9, 79.7]") == "57.1% [33.9, 79.7]"
