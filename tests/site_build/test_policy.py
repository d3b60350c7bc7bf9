"""sitebuild.policy: the Content-Security-Policy, its directives, README's copy, the pages."""

from __future__ import annotations

import pytest

from sitebuild import ROOT, policy


def test_the_policy_refuses_by_default_and_allows_only_the_site_itself():
    directives = dict(d.split(" ", 1) for d in policy.content_security_policy().split("; "))
    assert len(directives) == len(policy.CSP)  # each directive once
    assert directives["default-src"] == "'none'" and directives["object-src"] == "'none'"
    assert directives["script-src"] == "'self' 'unsafe-eval'"  # no inline script, no other host
    assert all("http" not in v and "*" not in v for v in directives.values())
    assert "frame-ancestors" not in directives  # a <meta> cannot carry it
    header = policy.content_security_policy(header=True)
    assert header == policy.content_security_policy() + "; frame-ancestors *"


def test_csp_is_one_policy_that_readme_shows(tmp_path):
    """The policy is policy.CSP; README's "Hosting" shows it as the build writes it, and the page
    writer puts it first in every page's <head> and refuses what it would block."""
    readme = (ROOT / "README.md").read_text()
    assert f"\n{policy.content_security_policy()}\n" in readme
    assert f"\nContent-Security-Policy: {policy.content_security_policy(header=True)}\n" in readme
    for directive, value, _ in (*policy.CSP, *policy.CSP_HEADER_ONLY):
        assert f"| `{directive} {value}` |" in readme

    page = '<!doctype html><html><head>\n<meta charset="utf-8">\n<script src="a.js"></script>{}</head></html>'
    (tmp_path / "ok.html").write_text(page.format('<script id="d" type="application/json">{"a": 1}</script>'))
    policy.add_content_security_policy(tmp_path)
    text = (tmp_path / "ok.html").read_text()
    assert text.index("Content-Security-Policy") < text.index("<script")
    for bad in ("<script>alert(1)</script>", '<button onclick="go()">x</button>'):
        (tmp_path / "ok.html").write_text(page.format(bad))
        with pytest.raises(SystemExit, match="ok.html: an inline"):
            policy.add_content_security_policy(tmp_path)
    (tmp_path / "ok.html").write_text(text)  # already has one: not added twice
    with pytest.raises(SystemExit, match="ok.html: it already has a Content-Security-Policy"):
        policy.add_content_security_policy(tmp_path)
