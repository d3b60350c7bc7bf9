"""Two config.json files pasted as model A and model B on the live hybrid page (issue 38), as a
user does: the "Hugging Face config.json" tab, the text into the box, "as model A" or "as model
B", "Read config.json". Each slot keeps its own model (B replaced A before: one custom slot),
named by its file; Nemotron-H's "time_step_limit": [0.0, Infinity] is read (it was a
LongNumber traceback in the console and no change); the verdict names the dtype it counted; both
models come back from the page's own link. (tests/ui/test_hybrid_two_pasted.py pastes all 25
published files without a browser.)
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.conftest import deep_text as _deep_text
from tests.e2e.conftest import open_page, painted, shot, snap

pytestmark = pytest.mark.e2e

PUBLISHED = Path(__file__).resolve().parents[1] / "sim" / "hf_configs" / "published"
A_FILE = PUBLISHED / "gpt-oss-120b.config.json"  # MXFP4: fits one H100 as shipped
B_FILE = PUBLISHED / "nemotron-h-56b-base-8k.config.json"  # holds Infinity


def paste(page, path: Path, slot: str) -> None:
    page.get_by_role("tab", name="Hugging Face config.json").click()
    box = page.get_by_placeholder('{"model_type": "jamba", …}')
    box.fill(path.read_text())
    page.get_by_role("button", name=f"as model {slot}", exact=True).click()
    page.get_by_role("button", name="Read config.json", exact=True).click()


def deep_text(page) -> str:
    """The page's text (shadow roots too), white space folded: "<b>B</b> name" reads "B name"."""
    return " ".join(_deep_text(page).split())


def wait_text(page, words: str, timeout: int = 30_000) -> None:
    page.wait_for_function(
        r"""(words) => { const out = []; const walk = (n) => { if (n.nodeType === 3)
          out.push(n.textContent); if (n.shadowRoot) walk(n.shadowRoot);
          for (const c of n.childNodes || []) walk(c); };
          walk(document.querySelector('#lab-app'));
          return out.join(' ').replace(/\s+/g, ' ').includes(words); }""",
        arg=words, timeout=timeout)


def test_two_pasted_configs_side_by_side_and_in_the_link(context, server):
    visit = open_page(context, f"{server.url}hybrid.html")
    page = visit.page
    paste(page, A_FILE, "A")
    wait_text(page, "Read GptOssForCausalLM, 116.8B parameters")
    paste(page, B_FILE, "B")
    wait_text(page, "Read NemotronHForCausalLM, ")
    wait_text(page, "B NemotronHForCausalLM")
    painted(page)
    text = deep_text(page)
    assert "it is now model B (custom model B)" in text
    # A kept its own model: both names in the verdict, the readout and the layer strips
    assert "A GptOssForCausalLM, 116.8B parameters fits: " in text and "as shipped in MXFP4 and bf16" in text
    assert "B NemotronHForCausalLM, " in text
    assert "not read" not in text and "Kept the previous settings" not in text
    search = page.evaluate("location.search")
    assert "model_a=custom" in search and "model_b=custom" in search and "hf_b=" in search
    page.get_by_role("tab", name="Hugging Face config.json").scroll_into_view_if_needed()
    snap(page, "hybrid-two-pasted-box.png")
    page.evaluate("window.scrollTo(0, 0)")
    painted(page)
    shot(page, "hybrid-two-pasted")
    assert visit.problems() == []  # no console error (the LongNumber traceback), no CSP report

    # the page's own link brings both back, each with its weights
    again = open_page(context, f"{server.url}hybrid.html{search}")
    painted(again.page)
    text = deep_text(again.page)
    assert "A GptOssForCausalLM, 116.8B parameters fits: " in text and "B NemotronHForCausalLM, " in text
    assert "Ignored" not in text
    assert again.problems() == []
