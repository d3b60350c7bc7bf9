"""The lesson pages, in order, each declared once here. build.py makes one HTML page per entry
in PAGES, whose entry script is ``site/<module name>.py`` and whose explanation is
``assets/texts/<slug>.html``; the page's class in ``ui.pages.<module>`` takes its slug and title
from its entry (``ui.page.Page.__init_subclass__`` reads ``info_of``), so neither is written twice.
Nothing here imports a page: the navigation and the build read PAGES without loading them."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class PageInfo:
    slug: str  # the HTML file name and the URL of the page
    module: str  # ui.pages.<module>, and site/<module>.py
    title: str
    summary: str  # one line for the index page
    short: str  # the label in the navigation bar


PAGES = (
    PageInfo("running-sum", "running_sum", "Running sum: attention without the softmax",
             "Fold every key and value into one fixed-size state and get the same answer.",
             "Running sum"),
    PageInfo("fixed-state", "fixed_state", "What a fixed state can't hold",
             "Write more pairs than the state has room for and watch recall break down.",
             "Fixed state"),
    PageInfo("gates", "gates", "Gates that decide what to keep",
             "Decay gates and the delta rule: forgetting and overwriting, side by side.",
             "Gates"),
    PageInfo("hybrid", "hybrid", "Hybrid models and their cache",
             "A few attention layers among many linear ones: only those grow a cache.",
             "Hybrid models"),
    PageInfo("chunkwise", "chunkwise", "How these train fast: the chunkwise-parallel form",
             "Masked matrices inside a chunk, one state carried between chunks: the same outputs.",
             "Chunkwise"),
    PageInfo("random-features", "random_features", "Random features that approximate softmax",
             "Performer's FAVOR+: softmax weights from m random features, closer as m grows.",
             "Random features"),
    PageInfo("state-space", "state_space", "State space models: from S4 to Mamba to Mamba-2",
             "A step size Δ per token decides what the state takes in and what it keeps.",
             "SSMs"),
)


def info_of(module: str) -> PageInfo | None:
    """The entry of the page module ``module`` (``"ui.pages.gates"``), or None for any other."""
    return next((p for p in PAGES if f"ui.pages.{p.module}" == module), None)


def page_class(info: PageInfo):
    """The Page subclass defined in ``ui.pages.<info.module>`` (the one that took ``info``'s slug)."""
    import importlib  # noqa: PLC0415

    module = importlib.import_module(f"ui.pages.{info.module}")
    found = [c for c in vars(module).values()
             if isinstance(c, type) and c.__module__ == module.__name__
             and vars(c).get("slug") == info.slug]
    if len(found) != 1:
        raise LookupError(f"ui/pages/{info.module}.py: expected one Page with slug {info.slug!r}")
    return found[0]
