"""The product (src/petstore_contract) holds no development tool and reads no self-test switch.

Self-test switches come from self-test plugins (selftests/plugins/, loaded with -p) through seams of
the product; mutation testing and the kill matrix live in devtools/, outside the wheel.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "petstore_contract"
SWITCH = re.compile(r"PETSTORE_SELFTEST|SELFTEST_")
TOOLS = re.compile(r"^\s*(import|from)\s+(devtools|cosmic_ray|selftests)\b", re.MULTILINE)


def product_files() -> list[Path]:
    files = [p for p in SRC.rglob("*") if p.is_file() and "__pycache__" not in p.parts]
    assert any(p.name == "expect.py" for p in files)  # the walk found the product
    return files


def test_no_product_file_names_a_selftest_switch() -> None:
    found = []
    for path in product_files():
        text = path.read_text(encoding="utf-8", errors="replace")
        found += [f"{path.relative_to(ROOT)}:{text.count(chr(10), 0, m.start()) + 1}" for m in SWITCH.finditer(text)]
    assert found == [], f"self-test switches in the product (use a plugin in selftests/plugins/): {found}"


def test_no_product_module_imports_a_development_tool() -> None:
    found = [str(p.relative_to(ROOT)) for p in product_files() if p.suffix == ".py" and TOOLS.search(p.read_text())]
    assert found == [], found
    assert not (SRC / "selfcheck").exists()
