"""PageState: every knob of a page plus the token position t, with no widgets.

A page's picture is a pure function of its settings and t: the state precomputes the whole run
for the current settings (cheap at lesson sizes) and the views show step t of it. So jumping to t
and stepping t times give the same picture by construction, and Back is free.
"""

from __future__ import annotations

import param


class PageState(param.Parameterized):
    """Base for every page's state. Subclasses add knobs and override ``recompute``."""

    t = param.Integer(0, bounds=(0, None), doc="Tokens processed so far (the timeline position)")
    t_max = param.Integer(1, bounds=(1, None), precedence=-1, doc="Last reachable t for these settings")
    playing = param.Boolean(False, precedence=-1, doc="Whether Play is advancing t")
    speed = param.Number(8.0, bounds=(0.5, 60.0), step=0.5, doc="Steps per second while playing")
    seed = param.Integer(0, bounds=(0, 2**31 - 1), doc="Seed of every random draw on the page")
    notice = param.String("", precedence=-1, doc="A message for the user (bad link values, warnings)")

    # Parameters that never travel in a link (derived or transient).
    url_exclude: tuple[str, ...] = ("name", "t_max", "playing", "notice")

    def step(self) -> None:
        if self.t < self.t_max:
            self.t += 1
        else:
            self.playing = False

    def back(self) -> None:
        self.playing = False
        if self.t > 0:
            self.t -= 1

    def reset(self) -> None:
        self.playing = False
        self.t = 0

    def jump(self, t: int) -> None:
        self.t = max(0, min(int(t), self.t_max))

    def toggle_play(self) -> None:
        if not self.playing and self.t >= self.t_max:
            self.t = 0
        self.playing = not self.playing

    def set_t_max(self, t_max: int) -> None:
        """Change the reachable range, keeping t inside it."""
        t_max = max(1, int(t_max))
        with param.parameterized.batch_call_watchers(self):
            self.t_max = t_max
            self.param.t.bounds = (0, t_max)
            if self.t > t_max:
                self.t = t_max

    def csv(self) -> str:
        """The page's current data as CSV text (override per page)."""
        return ""
