""""Your turn": the exercise box every lesson page ends with, and how a typed answer is read.

The numbers, the answer, the usual mistakes and the working come from ``sim.exercises`` (one
generator per page, by the page's slug); the page's ``exercise`` setting is the seed (link key
``ex``), so a course author can link one exercise and a class can each take their own.

Checking happens in Python: in the page built ahead of time the answer field is disabled and
says it is ready once Python has started (nothing can be typed there, so nothing typed is lost
at the takeover); its working is there already, folded in a <details>. The live page builds the box once; a change of any setting, the exercise's
included, keeps the typed text (new numbers only clear the verdict).

Reading: vectors as "1.5, 2.5", "(1.5, 2.5)", "[1.5 2.5]", fractions "10/3", a minus as - or
−; a size with its unit ("48 KiB", "49152 bytes", "49,152 B", "0.05 MB"); a pair number as
"3" or "pair 3". A typed number is right when it is within the exercise's tolerance, or when it
is the answer rounded to the digits typed (within half of the last digit, and 2 % of it).
Nothing a student types makes this raise; anything echoed back is escaped (``ui.fmt.text``).
"""

from __future__ import annotations

import html
import math
import re
from dataclasses import dataclass

import param

from sim import exercises as sim_exercises
from sim.exercises import KIND_BYTES, KIND_NUMBER, Exercise, number_text
from ui.contract import role
from ui.fmt import plain, text

GENERATORS = sim_exercises.GENERATORS  # slug -> generator, stated in sim.exercises
MAX_TYPED = 200  # characters of an answer read at all; a longer one is refused, saying so
MAX_FIELD = 20_000  # characters the field holds (the browser's own cut is 5,000 by default, silently)
ROUNDED_SHARE = 0.02  # a rounded answer may be off by half its last digit, up to 2 % of it
# ... and a size typed with its unit up to 5 %: "4 MB" for 4,096,000 bytes (4.096 MB, 2.3 % off)
# was refused as "not a usual mistake" while "3.906 MiB" was right
ROUNDED_SIZE_SHARE = 0.05
UNITS = {"b": 1, "byte": 1, "bytes": 1, "kb": 10**3, "mb": 10**6, "gb": 10**9, "tb": 10**12,
         "kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40}
_NUMBER = re.compile(r"^[-+]?(\d+\.?\d*|\.\d+)(e[-+]?\d+)?$", re.IGNORECASE)
_SIZE = re.compile(r"^([-+]?[\d.,_ ]*\d\.?\d*(?:e[-+]?\d+)?)\s*([a-z]*)$", re.IGNORECASE)


def exercise_setting() -> param.Integer:
    """The page's exercise number: the seed of its exercise (0 is the lesson's own)."""
    return param.Integer(0, bounds=(0, 2**31 - 1), label="Exercise number",
                         doc="The seed of the 'Your turn' exercise; 0 is the lesson's own")


@dataclass(frozen=True)
class Reading:
    """Typed numbers and how precisely each was typed (half its last digit; 0 for a fraction
    or a whole number of bytes), or ``error``: what is accepted, in words."""

    values: tuple[float, ...] = ()
    half_units: tuple[float, ...] = ()
    error: str = ""


def _one(token: str) -> tuple[float, float] | None:
    """'1.25' → (1.25, 0.005); '10/3' → (3.333…, 0); None if not a number."""
    if "/" in token:
        top, _, bottom = token.partition("/")
        a, b = _one(top), _one(bottom)
        return None if a is None or b is None or b[0] == 0 else (a[0] / b[0], 0.0)
    if not _NUMBER.match(token) or len(token) > 40:
        return None
    mantissa = token.lower().split("e")[0]
    decimals = len(mantissa.split(".")[1]) if "." in mantissa else 0
    x = float(token)
    exponent = int(token.lower().split("e")[1]) if "e" in token.lower() else 0
    if not math.isfinite(x) or exponent - decimals > 308:  # 1e309 reads as inf: not a number
        return None
    return x, 0.5 * 10.0 ** max(exponent - decimals, -400)


def read_vector(typed: str, size: int) -> Reading:
    how = (f"type {size} numbers separated by commas, like “1.5, 2.5” or “(1.5, 2.5)”"
           if size > 1 else "type one number, like “3”")
    s = typed.strip().replace("−", "-").replace("–", "-")
    s = re.sub(r"^[a-zA-Z_ ₀-₉ᵀ]*=", "", s).strip()  # "o = (1.5, 2.5)"
    s = re.sub(r"^(pair|key|k)\s*#?\s*", "", s, flags=re.IGNORECASE) if size == 1 else s
    s = s.strip("()[]{}⟨⟩ ")
    tokens = [t for t in re.split(r"[,;\s]+", s) if t]
    if not tokens:
        return Reading(error=f"Nothing to check yet: {how}.")
    read = [_one(t) for t in tokens]
    if any(r is None for r in read):
        bad = plain(next(t for t, r in zip(tokens, read) if r is None), 30)
        return Reading(error=f"Could not read “{bad}” as a number: {how}.")
    if len(read) != size:
        return Reading(error=f"Expected {size} number{'s' * (size > 1)}, read {len(read)}: "
                             f"{how}.")
    return Reading(tuple(r[0] for r in read), tuple(r[1] for r in read))


def read_size(typed: str) -> Reading:
    how = "type a size with its unit, like “48 KiB”, “49152 bytes” or “0.05 MB”"
    m = _SIZE.match(typed.strip().replace("−", "-"))
    if not m:
        return Reading(error=f"Could not read that as a size: {how}.")
    digits, unit = m.group(1).strip(), m.group(2).lower()
    if re.search(r"\d[ _,]\d{3}", digits) and "." not in digits:  # 49,152 or 49 152
        digits = re.sub(r"[ _,]", "", digits)
    one = _one(digits)
    if one is None:
        return Reading(error=f"Could not read “{plain(digits, 30)}” as a number: {how}.")
    if not unit and one[0] != 0:
        return Reading(error=f"Which unit? {how}.")
    if unit not in UNITS and unit:
        return Reading(error=f"Unknown unit “{plain(unit, 20)}”: use bytes (B), KB, MB, GB (powers of "
                             "1000) or KiB, MiB, GiB (powers of 1024).")
    scale = UNITS.get(unit, 1)
    half = one[1] * scale if scale > 1 else 0.0  # bytes are whole: exact
    return Reading((one[0] * scale,), (half,))


def close(exercise: Exercise, reading: Reading, target: tuple[float, ...]) -> bool:
    """Every typed number within the tolerance of ``target``, or ``target`` rounded to the
    digits typed."""
    for x, half, want in zip(reading.values, reading.half_units, target):
        gap = abs(x - want)
        tol = exercise.tolerance * abs(want) if exercise.kind == KIND_BYTES else exercise.tolerance
        if gap <= tol + 1e-9 * max(1.0, abs(want)):
            continue
        share = ROUNDED_SIZE_SHARE if exercise.kind == KIND_BYTES else ROUNDED_SHARE
        if not (half and gap <= half and gap <= share * abs(want)):
            return False
    return True


@dataclass(frozen=True)
class Feedback:
    verdict: str  # "right", "mistake", "wrong" or "unreadable"
    html: str  # escaped: the typed text appears as text


def check(exercise: Exercise, typed: object) -> Feedback:
    """The verdict on a typed answer, in words; never raises. Every message that quotes what
    was typed quotes a bounded prefix of it (40 characters); an answer longer than MAX_TYPED
    characters is refused with the limit, never cut silently."""
    typed = str(typed)
    shown = text(typed.strip(), 40)
    if len(typed.strip()) > MAX_TYPED:
        return Feedback("unreadable", f"That answer is {len(typed.strip()):,} characters long; "
                                      f"answers are read up to {MAX_TYPED} characters (it begins "
                                      f"“{shown}”).")
    try:
        if exercise.kind == KIND_BYTES:
            reading = read_size(typed)
        else:
            reading = read_vector(typed, len(exercise.answer))
    except (ValueError, OverflowError, ArithmeticError):  # pragma: no cover — a last resort
        reading = Reading(error=f"Could not read “{plain(typed.strip(), 40)}” as numbers.")
    if reading.error:
        return Feedback("unreadable", html.escape(reading.error))
    if close(exercise, reading, exercise.answer):
        return Feedback("right", f"✔ Right: {html.escape(exercise.answer_text)}.")
    for wrong, why in exercise.mistakes:
        if close(exercise, reading, wrong):
            return Feedback("mistake", f"✘ Not quite: {shown} is what you get if you "
                                       f"{html.escape(why)}.")
    what = ("a usual mistake" if exercise.mistakes else "")
    return Feedback("wrong", f"✘ {shown} is not the answer{', nor ' + what if what else ''}. "
                             "Try again, or show the working.")


def unit_hint(exercise: Exercise) -> str:
    if exercise.kind == KIND_BYTES:
        return "a size with its unit, e.g. 48 KiB"
    if exercise.kind == KIND_NUMBER:
        return "a number, e.g. 2"
    return ", ".join(["e.g. 1.5"] + ["2.5"] * (len(exercise.answer) - 1))


def prompt_html(exercise: Exercise) -> str:
    own = ", the lesson’s own" if exercise.seed == 0 and exercise.page == "running-sum" else ""
    return (f"<h3 style='margin:0.3em 0'>Your turn <small style='font-weight:normal'>(exercise "
            f"{number_text(exercise.seed)}{own})</small></h3><p class='lab-ex-prompt' "
            f"style='margin:0.3em 0'>{html.escape(exercise.prompt)}</p>")


def steps_html(exercise: Exercise, shown: int) -> str:
    items = "".join(f"<li>{html.escape(s)}</li>" for s in exercise.steps[:shown])
    return f"<ol class='lab-ex-steps'>{items}</ol>" if shown else ""


BOX_CSS = {"border": "1px solid #8886", "border-radius": "6px", "padding": "4px 8px"}
# The theme's colours where it sets them (dark), GitHub's light ones otherwise.
VERDICT_COLOURS = {"right": "var(--success-text-color, #1a7f37)",
                   "mistake": "var(--warning-text-color, #9a6700)",
                   "wrong": "var(--danger-text-color, #cf222e)", "unreadable": "inherit"}


class ExerciseBox:
    """The exercise on a page: its prompt, an answer field with Check, the verdict in words,
    'Show the working' revealing one step per press, and 'Another exercise' (the next seed).
    Built once per page; the page's ``exercise`` setting picks the numbers."""

    @classmethod
    def for_page(cls, page) -> ExerciseBox | None:
        """The box of a page with an ``exercise`` setting and a generator for its slug."""
        if "exercise" in page.param and page.slug in GENERATORS:
            return cls(page, GENERATORS[page.slug])
        return None

    def __init__(self, page, generator):
        import panel as pn  # noqa: PLC0415

        self.page, self.generator = page, generator
        self.exercise = generator(page.exercise)
        self.shown, self.typed = 0, ""
        self.prompt = pn.pane.HTML(prompt_html(self.exercise), sizing_mode="stretch_width",
                                   margin=(0, 10))
        self.answer = pn.widgets.TextInput(label="Your answer", width=280, max_length=MAX_FIELD,
                                           placeholder=unit_hint(self.exercise))
        self.check_button = pn.widgets.Button(label="Check", color="primary", width=90,
                                              align="end")
        self.working = pn.widgets.Button(label="Show the working", width=170, align="end")
        self.another = pn.widgets.Button(label="Another exercise", width=150, align="end")
        # A page may play its exercise on its plots: ``page.play_exercise(exercise)`` sets the
        # page up and returns the t each step of the working is about (or () to stay put).
        self.playing, self.steps_t = False, ()
        self.plots = pn.widgets.Button(label="Show it on the plots", width=170, align="end",
                                       visible=hasattr(page, "play_exercise"))
        self.plots.on_click(lambda _e: self.show_on_plots())
        page.param.watch(self._other_setting, [n for n in page.settings() if n != "exercise"])
        self.feedback = pn.pane.HTML("", sizing_mode="stretch_width", margin=(0, 10),
                                     styles={"font-weight": "bold"})
        # a line's room at least: the page built ahead of time has its folded working there, and
        # the box keeps its height when Python takes over (an embed's frame too)
        self.steps = pn.pane.HTML("", sizing_mode="stretch_width", margin=(0, 10),
                                  styles={"min-height": "1lh"})
        self.verdict = ""
        self.answer.param.watch(self._typing, "value_input")
        self.answer.param.watch(self._entered, "value")
        self.check_button.on_click(lambda _e: self.check())
        self.working.on_click(lambda _e: self.reveal())
        self.another.on_click(lambda _e: setattr(page, "exercise", page.exercise + 1))
        page.param.watch(self._new_numbers, "exercise")

    # Actions ---------------------------------------------------------------------------------
    def _typing(self, event) -> None:
        self.typed = event.new or ""
        if not self.typed.strip():  # the field cleared: so is the verdict on what it held
            self.clear_verdict()

    def _entered(self, event) -> None:  # Enter, or leaving the field
        self.typed = event.new or ""
        if self.typed.strip():
            self.check()
        else:
            self.clear_verdict()

    def clear_verdict(self) -> None:
        self.verdict = ""
        self.feedback.object = ""

    def check(self) -> Feedback:
        result = check(self.exercise, self.typed or self.answer.value)
        self.verdict = result.verdict
        self.feedback.styles = {"font-weight": "bold", "color": VERDICT_COLOURS[result.verdict]}
        self.feedback.object = f"<p role='status'>{result.html}</p>"
        return result

    def seek(self, t: int) -> None:
        """Frame t on the plots: the browser's player in the live page, else Page.show."""
        (getattr(self.page, "seek_player", None) or self.page.show)(t)

    def show_on_plots(self) -> None:
        self.steps_t = tuple(self.page.play_exercise(self.exercise))
        self.playing = True  # until the student changes a setting
        self.seek(0)

    def _other_setting(self, *_events) -> None:
        self.playing = False

    def reveal(self) -> None:
        n = len(self.exercise.steps)
        self.shown = 0 if self.shown >= n else self.shown + 1
        if self.playing and self.shown and len(self.steps_t) >= self.shown:
            self.seek(self.steps_t[self.shown - 1])  # the plots follow the working
        self.steps.object = steps_html(self.exercise, self.shown)
        self.working.label = ("Show the working" if self.shown == 0 else "Hide the working"
                             if self.shown >= n else f"Next step ({self.shown + 1} of {n})")

    def _new_numbers(self, event) -> None:
        """Another exercise: new prompt, the working hidden; the typed answer stays."""
        try:
            self.exercise = self.generator(event.new)
        except (ValueError, RuntimeError) as err:  # pragma: no cover — generators redraw
            self.page.notice = f"Exercise {event.new} could not be made ({text(err, 120)})."
            return
        self.prompt.object = prompt_html(self.exercise)
        if self.playing:  # the plots show the new numbers too
            self.show_on_plots()
        self.answer.placeholder = unit_hint(self.exercise)
        self.shown = len(self.exercise.steps)
        self.reveal()
        self.verdict = ""
        self.feedback.object = ("<p>New numbers: your answer is kept; press Check to check it "
                                "against them.</p>" if self.typed.strip() else "")

    @property
    def _controls(self) -> tuple:
        """What takes input: disabled in the page built ahead of time, until Python has started."""
        return (self.answer, self.check_button, self.working, self.another, self.plots)

    def ready(self) -> None:
        """Python has taken over the page built ahead of time: the box as the live page builds
        it (the field and its buttons enabled, the working behind its button)."""
        self.answer.placeholder = unit_hint(self.exercise)
        self.steps.object = steps_html(self.exercise, self.shown) if self.shown else ""
        for w in self._controls:
            w.disabled = False
        self.working.visible = True

    # Layout ----------------------------------------------------------------------------------
    def panel(self, ready: bool):
        import panel as pn  # noqa: PLC0415

        if not ready:  # the working can be read before Python: all of it, folded away
            self.answer.placeholder = "ready once Python has started"
            self.working.visible = False
            self.steps.object = ("<details aria-label='The working, step by step'>"
                                 "<summary>Show the working</summary>"
                                 f"{steps_html(self.exercise, len(self.exercise.steps))}</details>")
        from ui.theme import style_widget  # noqa: PLC0415

        for w in self._controls:
            style_widget(w).disabled = not ready
        return pn.Column(self.prompt, pn.FlexBox(self.answer, self.check_button, self.working,
                                                 self.plots, self.another, margin=(0, 5)),
                         self.feedback, self.steps, sizing_mode="stretch_width",
                         styles=BOX_CSS, css_classes=[role("exercise")], margin=(10, 10))
