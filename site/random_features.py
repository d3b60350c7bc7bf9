"""Entry script of the page "Random features that approximate softmax"."""
from ui.app import launch
from ui.pages.random_features import RandomFeaturesPage

launch(RandomFeaturesPage)
