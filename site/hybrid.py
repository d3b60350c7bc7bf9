"""Entry script of the page "Hybrid models and their cache"."""
from ui.app import launch
from ui.pages.hybrid import HybridPage

launch(HybridPage)
