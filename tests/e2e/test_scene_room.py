"""Two presenter scenes that carry their lesson in a room (issue 20, item 2), on the built site
in Chromium with Python held back (scenes are the shell's).

- Running-sum's "outputs" scene (``?present=1&view=outputs``, key 4) shows the output computed
  both ways as a figure, its cell numbers ≥ 16 px, at 1280×720 and 1366×768 with nothing cut:
  it had been the readout alone, 19 px text over an empty lower half of the stage.
- Every gates scene starts at the stage's top: the first thing drawn (text or figure) is within
  TOP_MARGIN_PX of it. The update and time scenes had a 27 px band above their headings (the
  page's 1.33em heading margin, in the presenter's type).
"""

from __future__ import annotations

import pytest

from tests.e2e.conftest import painted, shot
from tests.e2e.test_scenes import (
    FIRST_INK_JS,
    SCENE_JS,
    SCENES,
    TOP_MARGIN_PX,
    assert_scene_fits,
    presenter,
)
from tests.e2e.test_screens import fitted_after

pytestmark = pytest.mark.e2e


# The gate takes the outputs scene by its key at 1280×720 and checks its figure
# (test_scenes.py: SCENE_FIGURES); here by its link and its key, at both sizes.
@pytest.mark.slow
@pytest.mark.parametrize("screen", [(1280, 720), (1366, 768)])
def test_running_sums_outputs_scene_shows_the_outputs_as_a_figure(browser, server, screen):
    """The outputs scene holds the heatmap of o both ways (every pair, the state) with cell
    numbers ≥ 16 px, the page does not scroll, nothing is cut, by its link and by its key."""
    ctx, page, visit = presenter(browser, server, "running-sum", "&view=outputs")
    if screen != (1280, 720):  # a new screen size: fitted again
        count = page.evaluate("lab.state.fitted")
        page.set_viewport_size({"width": screen[0], "height": screen[1]})
        fitted_after(page, count)
    painted(page)
    seen = page.evaluate(SCENE_JS)
    assert [f["title"] for f in seen["figs"]] == ["Output oₜ, both ways"], seen
    assert all(f["inView"] for f in seen["figs"]) and seen["clipped"] == [], seen
    assert seen["scrollH"] <= screen[1] and seen["scrollW"] <= screen[0], seen
    shot(page, f"running-sum-scene-outputs-{screen[0]}x{screen[1]}")
    ctx.close()
    ctx, page, visit = presenter(browser, server, "running-sum")
    page.locator("body").click(position={"x": 5, "y": 2})
    count = page.evaluate("lab.state.fitted")
    page.keyboard.press(str(SCENES["running-sum"].index("outputs") + 1))
    fitted_after(page, count)
    seen = assert_scene_fits(page, "outputs", "running-sum outputs by its key")  # cells ≥ 16 px
    assert seen["cells"] and [f["title"] for f in seen["figs"]] == ["Output oₜ, both ways"], seen
    assert visit.problems() == []
    ctx.close()


# The gate checks every gates scene by its key (test_scenes.py's key walk); here each by its link.
@pytest.mark.slow
@pytest.mark.parametrize("scene", SCENES["gates"])
def test_every_gates_scene_starts_at_the_stages_top(browser, server, scene):
    """No empty band above a gates scene's first heading or text: its first ink is within
    TOP_MARGIN_PX of the stage area's top."""
    ctx, page, visit = presenter(browser, server, "gates", f"&view={scene}")
    page.get_by_role("button", name="Step", exact=True).click()
    painted(page)
    first = page.evaluate(FIRST_INK_JS)
    shot(page, f"gates-scene-{scene}-top-1280x720")
    assert 0 <= first["gap"] <= TOP_MARGIN_PX, (scene, first)
    assert visit.problems() == []
    ctx.close()
