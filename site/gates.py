"""Entry script of the page "Gates that decide what to keep"."""
from ui.app import launch
from ui.pages.gates import GatesPage

launch(GatesPage)
