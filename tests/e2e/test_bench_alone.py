"""bench/boot.py --alone, in Chromium: the bare page of a page's worker, with nothing drawn,
restores the page's snapshot and goes live adopting the page's own document (its ids match),
as the page itself would; else the bench's "least a page's live could be" would time another
path (a document made anew)."""

from __future__ import annotations

from bench import boot


def test_a_pages_worker_alone_goes_live_from_the_snapshot_adopting_its_document(context, server, site):
    slug = "hybrid"
    bare = boot.alone_page((site / f"{slug}.html").read_text(), slug)
    context.route(f"{server.url}bench-alone-{slug}.html",
                  lambda r: r.fulfill(content_type="text/html", body=bare))
    context.route(f"{server.url}{boot.ALONE_SCRIPT}",
                  lambda r: r.fulfill(content_type="text/javascript", body=boot.ALONE_JS))
    page = context.new_page()
    page.goto(f"{server.url}bench-alone-{slug}.html")
    page.wait_for_function("window.lab.state.live || !!window.lab.state.failed", timeout=90_000)
    assert page.evaluate("window.lab.state.failed") is None
    timings = page.evaluate("window.lab.timings")
    assert "adopt" in timings["python"] and "json" not in timings["python"], timings["python"]
    assert {"worker", "heap", "bundle", "restored", "python"} <= set(timings["worker"]), timings["worker"]
    assert 0 < timings["worker"]["restored"] < timings["live"]
