"""The Python ↔ browser contract (ui/contract.py) is stated once: written into every page by
``ui.app.prerender``, read by the shell (assets/js/), and no role class or frame binding name is
spelt out in the shell's JavaScript; every role and binding the shell asks for exists."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from ui import contract as c

ROOT = Path(__file__).resolve().parents[2]
SHELL = {p.name: p.read_text() for p in sorted((ROOT / "assets" / "js").glob("*.js"))}


def test_the_contract_is_json_with_one_class_per_role():
    data = json.loads(json.dumps(c.contract()))
    classes = list(data["roles"].values())
    assert len(classes) == len(set(classes)) == len(c.ROLES)
    assert all(cls.startswith("lab-") for cls in classes)
    assert data["frames"]["source"] == "lab-frames" and data["view_prefix"] == "lab-view-"
    assert c.role("controls") == "lab-controls"
    with pytest.raises(KeyError, match="no role 'control': the roles are main_view"):
        c.role("control")


def test_no_role_class_or_binding_name_is_spelt_out_in_the_shell():
    names = [*(cls for cls, _ in c.ROLES.values()), c.VIEW_PREFIX, c.VEIL_NAME, c.CELL_TEXT_NAME, c.FRAMES["source"],
             c.FRAMES["alt"], f'"{c.FRAMES["data_prefix"]}"']
    found = [(f, n) for f, text in SHELL.items() for n in names if n in text]
    assert found == []


def test_every_role_and_binding_the_shell_asks_for_is_in_the_contract():
    code = "\n".join(SHELL.values())
    roles = set(re.findall(r'hasRole\([^,()]+, "(\w+)"\)', code)) | set(re.findall(r"roles\(\)\.(\w+)", code))
    roles |= set(re.findall(r"\br\.(\w+)", SHELL["arrange.js"]))
    bindings = set(re.findall(r"frameBindings\(\)\.(\w+)", code)) | set(re.findall(r"\bnames\.(\w+)", SHELL["player.js"]))
    for group in re.findall(r"const \{([^}]*)\} = frameBindings\(\)", code):
        bindings |= {part.split(":")[0].strip() for part in group.split(",")}
    assert len(roles) >= 6 and roles <= set(c.ROLES), roles - set(c.ROLES)
    assert len(bindings) >= 6 and bindings <= set(c.FRAMES), bindings - set(c.FRAMES)


def test_every_role_is_one_a_page_gives_a_model():
    """No dead role: each role the contract names is put on a model (or a link) by ui/, as role(name)."""
    code = "\n".join(p.read_text() for p in (ROOT / "ui").rglob("*.py") if p.name != "contract.py")
    unused = [name for name in c.ROLES if f'role("{name}")' not in code and f"role('{name}')" not in code]
    assert unused == []  # by name (tests/ui/test_roles.py: the classes on the built pages)
    # the named views are marked through Page.view_class (VIEW_PREFIX + a name the page names)
    assert re.search(r'self\.view_class\("\w+"\)', code) and f'name="{c.VEIL_NAME}"' in code
    assert "name=CELL_TEXT_NAME" in code


def test_prerender_writes_the_contract_beside_the_link():
    from ui.app import prerender  # noqa: PLC0415
    from ui.pages import PAGES, page_class  # noqa: PLC0415

    ahead = prerender(page_class(PAGES[0]))
    assert ahead["contract"] == c.contract()
    assert set(ahead) >= {"doc", "link", "contract", "csv", "t_max"}
