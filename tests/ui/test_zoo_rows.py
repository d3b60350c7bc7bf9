"""ui/zoo.py: the one function that makes the zoo's rows, at build time and in the zoo's worker
for a config.json the reader pastes. A pasted file's row is the build's row of the same file
(which tests/site_build/test_zoo.py holds to sim's own figures), marked as the reader's; text
and bytes, with a byte-order mark or not, read alike; a broken file gives one line naming what
is wrong; the module runs without param, Bokeh or Panel (the worker loads numpy and the
project's wheel only); each linear rule's link opens the gates page with no notice."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from sim import hf_config, weights
from sitebuild import ROOT
from sitebuild import zoo as build_zoo
from ui import zoo

PUBLISHED = sorted((ROOT / "tests" / "sim" / "hf_configs" / "published").glob("*.config.json"))


@pytest.fixture(scope="module")
def built() -> dict[str, dict]:
    return {r["id"]: r for r in build_zoo.rows()}


@pytest.mark.parametrize("path", PUBLISHED, ids=lambda p: p.name.removesuffix(".config.json"))
def test_a_pasted_file_is_the_builds_row_marked_as_yours(built, path: Path):
    stem = path.name.removesuffix(".config.json")
    got = zoo.pasted_row(path.read_bytes(), stem, stem)  # a file chosen: its bytes, its name
    assert got["row"]["source"] == "yours"
    assert {**got["row"], "source": "published"} == built[stem]
    assert got["html"] == zoo.row_html({**built[stem], "source": "yours"})
    assert got["html"].startswith(f'<tr id="m-{stem}" ') and 'data-source="yours"' in got["html"]
    assert '<span class="zoo-src">your config.json' in got["html"]


def test_pasted_text_with_a_bom_reads_as_the_file(built):
    path = ROOT / "tests" / "sim" / "hf_configs" / "published" / "gpt-oss-120b.config.json"
    text = "\ufeff" + path.read_text()  # a paste keeps the file's byte-order mark
    as_text = json.loads(zoo.pasted_row_json(text, "gpt-oss-120b", "yours-3"))
    as_bytes = json.loads(zoo.pasted_row_json(b"\xef\xbb\xbf" + path.read_bytes(), "gpt-oss-120b", "yours-3"))
    assert as_text == as_bytes
    assert {**as_text["row"], "source": "published", "id": "gpt-oss-120b"} == built["gpt-oss-120b"]
    assert as_text["html"].startswith('<tr id="m-yours-3" ')


def test_a_paste_without_a_name_is_named_as_the_hybrid_page_names_it():
    path = ROOT / "tests" / "sim" / "hf_configs" / "published" / "qwen3-0.6b.config.json"
    config = json.loads(path.read_text())
    got = zoo.pasted_row(path.read_text())["row"]
    count = weights.parameter_count(config).total
    assert got["name"] == hf_config.model_name(config, "qwen3", count)
    assert got["name"] == f"{config['architectures'][0]}, {count / 1e9:,.1f}B parameters"
    named = ROOT / "tests" / "sim" / "hf_configs" / "published" / "llama-3.3-nemotron-super-49b-v1.config.json"
    assert zoo.pasted_row(named.read_text())["row"]["name"] == "llama_nemotron_super"  # its _name_or_path


@pytest.mark.parametrize("text, words", [
    ("", "config.json: the file is empty; expected a JSON object"),
    ('{"model_type": "qwen3", ', "config.json: not valid JSON ("),
    ("[1, 2]", "config.json: expected an object, got a list"),
    ('{"model_type": "qwen3", "hidden_size": 1024}', "num_hidden_layers: missing"),
    ("x" * (8 * 2**20 + 1), "accepted: at most 8,388,608 bytes"),
    (b"\xff\xfe{}", "config.json: not UTF-8 text"),
], ids=["empty", "cut-short", "a-list", "no-layers", "too-long", "not-utf8"])
def test_a_broken_file_gives_one_line_naming_what_is_wrong(text, words):
    got = json.loads(zoo.pasted_row_json(text))
    assert set(got) == {"error"} and words in got["error"] and "\n" not in got["error"]
    with pytest.raises(ValueError, match=re.escape(words)):
        zoo.pasted_row(text)


def test_the_rows_module_needs_no_param_bokeh_or_panel():
    """The zoo's worker loads numpy and the project's wheel only: ui.zoo, run on a file, imports
    nothing of param, Bokeh or Panel (their wheels are not loaded there)."""
    path = PUBLISHED[0]
    code = ("import sys, json; import ui.zoo as z; r = json.loads(z.pasted_row_json(open(sys.argv[1], 'rb').read()));"
            "assert 'row' in r, r; print(json.dumps(sorted({m.split('.')[0] for m in sys.modules} & "
            "{'param', 'bokeh', 'panel', 'pyviz_comms', 'jinja2'})))")
    out = subprocess.run([sys.executable, "-c", code, str(path)], cwd=ROOT, capture_output=True,
                         text=True, check=True)
    assert json.loads(out.stdout) == []


def test_each_linear_rule_opens_the_gates_page_with_it_compared(built):
    """A rule's link compares it with the rule it extends (the gates page takes 2 to 4): the page
    applies it with no notice; Gated DeltaNet-2 has its link although no file reads it yet."""
    from ui.pages.gates import GatesPage  # noqa: PLC0415
    from ui.urlstate import apply_query  # noqa: PLC0415

    rules = {p["rule"] for r in built.values() for p in r["layers"] if p["rule"]}
    assert rules == {"mamba2", "mamba1", "gated_deltanet", "kda", "retnet"}
    page = GatesPage()
    for rule in sorted(rules | {"gdn2"}):
        link = zoo.gates_link(rule)
        assert apply_query(page, link.split("?", 1)[1]) == [], link
        assert rule in page.rules and len(page.rules) == 2
    assert zoo.gates_link("gdn2") == "gates.html?rules=gated_deltanet,gdn2"
    assert zoo.RULES["Gated DeltaNet-2"] == "gdn2"
