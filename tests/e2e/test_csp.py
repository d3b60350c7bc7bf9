"""The Content-Security-Policy: in every page's <head> before anything it governs, sent by
serve.py as a header, and actually watched: a violation in a page fails the test that made it
(conftest.watch), and every page goes live under the policy (conftest.open_page, used by
test_site.test_page_goes_live_steps_and_plays for each page)."""

from __future__ import annotations

import re
import urllib.request

import pytest

from build import content_security_policy
from tests.e2e.conftest import PAGE_SLUGS, watch

pytestmark = pytest.mark.e2e


@pytest.mark.parametrize("name", ["index.html", *(f"{slug}.html" for slug in PAGE_SLUGS)])
def test_every_page_carries_the_policy_and_the_server_sends_it(server, name):
    with urllib.request.urlopen(f"{server.url}{name}") as response:
        header = response.headers["Content-Security-Policy"]
        text = response.read().decode()
    head = text[:text.index("</head>")]
    metas = re.findall(r'<meta http-equiv="Content-Security-Policy" content="([^"]*)">', text)
    assert metas == [content_security_policy()]
    first_fetch = re.search(r"<(script|link|style)\b", head)
    assert head.index("Content-Security-Policy") < first_fetch.start()
    # the header is the same policy plus what only a header can carry
    assert header == content_security_policy(header=True)
    assert header.startswith(metas[0] + "; ") and "frame-ancestors" in header
    assert "frame-ancestors" not in metas[0]  # ignored (with a console error) in a <meta>


def test_a_violation_is_reported(context, server):
    """The watch that the other tests rely on sees a violation: an inline script, refused."""
    page = context.new_page()
    visit = watch(page)
    page.goto(server.url)
    with page.expect_console_message(lambda m: "CSP violation: script-src-elem" in m.text):
        page.evaluate("""() => { const s = document.createElement("script");
                                 s.textContent = "window.ranInline = true"; document.head.append(s); }""")
    assert page.evaluate("window.ranInline === undefined")
    assert any("CSP violation: script-src-elem" in e for e in visit.console_errors), visit.console_errors
