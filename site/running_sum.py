"""Entry script of the page "Running sum: attention without the softmax"."""
from ui.app import launch
from ui.pages.running_sum import RunningSumPage

launch(RunningSumPage)
