"""Entry script of the page "How these train fast: the chunkwise-parallel form"."""
from ui.app import launch
from ui.pages.chunkwise import ChunkwisePage

launch(ChunkwisePage)
