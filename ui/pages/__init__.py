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
)
