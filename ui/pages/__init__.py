"""The lesson pages, in order. build.py makes one HTML page per entry in PAGES, whose entry
script is ``site/<module name>.py`` and whose explanation is ``assets/texts/<slug>.html``."""

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


def page_class(info: PageInfo):
    """The Page subclass of ``ui.pages.<info.module>`` whose slug is ``info.slug``."""
    import importlib  # noqa: PLC0415

    from ui.page import Page  # noqa: PLC0415

    module = importlib.import_module(f"ui.pages.{info.module}")
    found = [c for c in vars(module).values()
             if isinstance(c, type) and issubclass(c, Page) and c.slug == info.slug]
    if len(found) != 1:
        raise LookupError(f"ui/pages/{info.module}.py: expected one Page with slug {info.slug!r}")
    return found[0]
