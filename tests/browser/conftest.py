"""A real headless Chromium from Debian's packages (/usr/bin/chromium and its
chromedriver), driven by Selenium: nothing is downloaded at test time (the driver and the
browser are named, so selenium-manager never runs) and the browser talks to nobody but
the test's server (background networking, component updates and sync are off)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
FLAGS = ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--no-first-run", "--window-size=1200,900", "--hide-scrollbars")


@pytest.fixture
def browser(tmp_path: Path) -> Iterator[Any]:
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    for path in (CHROMIUM, CHROMEDRIVER):
        if not os.access(path, os.X_OK):
            # README command 2 on a machine without them: a skip that says what to install.
            # Under CI (COGD_STRICT_SKIPS) this skip is not allow-listed, so it fails the
            # run; .ci/run installs both first
            pytest.skip(f"{path} is missing: apt-get install chromium chromium-driver "
                        "(.ci/run does)")
    os.environ.setdefault("SE_OFFLINE", "true")  # selenium-manager, were it ever asked
    options = Options()
    options.binary_location = CHROMIUM
    for flag in FLAGS:
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={tmp_path / 'chromium-profile'}")
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(120)
    try:
        yield driver
    finally:
        driver.quit()


@pytest.fixture
def screenshot_dir(tmp_path: Path) -> Path:
    """Where the pages' screenshots go: COGD_SCREENSHOT_DIR, else the test's tmp_path."""
    chosen = os.environ.get("COGD_SCREENSHOT_DIR")
    out = Path(chosen) if chosen else tmp_path / "screenshots"
    out.mkdir(parents=True, exist_ok=True)
    return out
