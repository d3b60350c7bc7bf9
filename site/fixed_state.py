"""Entry script of the page "What a fixed state can't hold"."""
from ui.app import launch
from ui.pages.fixed_state import FixedStatePage

launch(FixedStatePage)
