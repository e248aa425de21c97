"""A report opened in Debian's headless Chromium (Playwright drives it; no
network, a new empty profile each time). A missing browser fails, never skips:
`make setup` installs chromium (tools/apt/lab.txt) and Playwright (lab/pyproject.toml)."""
import contextlib
import tempfile
from pathlib import Path

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
        "--disable-component-update", "--disable-sync"]
FIRST_SCREEN = {"width": 1400, "height": 900}


@contextlib.contextmanager
def page_of(html: Path):
    """The report loaded in a 1400 x 900 window (the first screen)."""
    from playwright.sync_api import sync_playwright
    assert Path(CHROMIUM).exists(), f"{CHROMIUM} missing: run make setup (tools/apt/lab.txt installs chromium)"
    with sync_playwright() as p, tempfile.TemporaryDirectory() as profile:
        context = p.chromium.launch_persistent_context(profile, executable_path=CHROMIUM, headless=True, args=ARGS,
                                                       viewport=FIRST_SCREEN, offline=True)
        try:
            page = context.new_page()
            page.goto(Path(html).resolve().as_uri(), wait_until="load")
            yield page
        finally:
            context.close()


def screenshot(html: Path, png: Path) -> Path:
    """The first 1400 x 900 of the report."""
    with page_of(html) as page:
        page.screenshot(path=str(png))
    return png


if __name__ == "__main__":
    import sys
    print(screenshot(Path(sys.argv[1]), Path(sys.argv[2])))
