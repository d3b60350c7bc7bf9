"""Entry script of the page "State space models: from S4 to Mamba to Mamba-2"."""
from ui.app import launch
from ui.pages.state_space import StateSpacePage

launch(StateSpacePage)
