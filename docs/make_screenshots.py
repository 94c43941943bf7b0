"""Screenshots of the three kinds of report.html, for the documentation.

    python docs/make_screenshots.py [OUT_DIR]   (default: docs/)

Renders the self-tests' example runs (selftests/reportdata.py) and photographs the top of each page
in headless Chromium with JavaScript off: docs/report-conformant.png, report-not-conformant.png and
report-inconclusive.png.  Needs Playwright (a dev dependency) and a Chromium on PATH
(``apt-get install chromium``) or in $PETSTORE_CHROMIUM; Playwright's own browser download is not needed.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WIDTH, HEIGHT = 1280, 2000


def make_screenshots(out_dir: Path = ROOT / "docs", width: int = WIDTH, height: int = HEIGHT) -> list[Path]:
    sys.path.insert(0, str(ROOT / "selftests"))
    sys.path.insert(0, str(ROOT / "src"))
    from playwright.sync_api import sync_playwright

    import reportdata  # type: ignore[import-not-found]
    from petstore_contract.reporting import html

    executable = reportdata.chromium_path()
    if executable is None:
        raise SystemExit("no chromium found: apt-get install chromium, or set PETSTORE_CHROMIUM")
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, args=["--no-sandbox"])
        context = browser.new_context(java_script_enabled=False, viewport={"width": width, "height": height})
        page = context.new_page()
        for name, make in reportdata.SCREENSHOT_RUNS.items():
            source = Path(tmp) / f"{name}.html"
            source.write_text(html.render(make()), encoding="utf-8")
            page.goto(source.as_uri())
            target = out_dir / f"report-{name}.png"
            page.screenshot(path=str(target))
            written.append(target)
        browser.close()
    return written


if __name__ == "__main__":
    for path in make_screenshots(Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "docs"):
        print(path)
