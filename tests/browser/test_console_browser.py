"""The console in a real headless Chromium (issue 44): `cogd serve` runs for real
(its own process, 127.0.0.1, a real Postgres); the browser logs in with a token through
the form, searches, opens a memory and follows its provenance chain, forgets a memory
after the confirmation and sees it gone, then logs in as a second user and finds none of
the first user's text on any page. Alice's token is an operator's (she sees Health); bob's
is not (Health is a 403 page without a figure, and not in his navigation). Every page is
photographed (tests/browser/conftest.py `screenshot_dir`) and each PNG is checked to be a
real, non-trivial image."""

from __future__ import annotations

import json
import struct
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest

from agent.config import load_settings
from tests.acceptance.test_cli import COGD, run
from tests.acceptance.test_memory_cli import env_for
from tests.conftest import free_port
from tests.integration.test_console_pages import marks, seed_pages

KAYAK = "Alice keeps her kayak in the boathouse by the lake."
PADDLES = "Alice stores her paddles in the garage behind the house."
INSIGHT = "Alice's boating gear is split between the lakeside boathouse and the garage."
BIKE = "Bob keeps his bike behind the bakery."
PAGES = ("timeline", "search", "memory", "overnight", "mind", "health")


@pytest.fixture
def served(db_url: str, tmp_path: Path) -> Iterator[dict[str, Any]]:
    """`cogd serve` on a free port with alice's and bob's tokens and memories: alice's
    insight supersedes two of her memories (a chain to follow), and every page's rows."""
    env = env_for(db_url, tmp_path, COGD_LLM__ROLES__CONSOLIDATION="heuristic")
    tokens = {}
    for user, operator in (("alice", ["--operator"]), ("bob", [])):
        made = run("token", "create", "--user", user, "--name", "browser", "--create-user",
                   "--json", *operator, env=env)
        assert made.returncode == 0, made.stderr
        tokens[user] = json.loads(made.stdout)["token"]
    port = free_port()
    log_path = tmp_path / "serve.log"
    log = log_path.open("w")
    proc = subprocess.Popen([COGD, "serve", "--port", str(port)], env=env, stdout=log,
                            stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            assert proc.poll() is None, log_path.read_text()[-3000:]
            try:
                if httpx.get(f"{base}/healthz", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert time.monotonic() < deadline, "cogd serve did not start"
            time.sleep(0.2)
        ids = {}
        for user, text in (("alice", KAYAK), ("alice", PADDLES), ("bob", BIKE)):
            got = httpx.post(f"{base}/v1/memories", json={"text": text}, timeout=120,
                             headers={"Authorization": f"Bearer {tokens[user]}"})
            assert got.status_code == 201, got.text
            ids[text] = got.json()["memory_id"]
        with psycopg.connect(db_url, autocommit=True) as conn:
            # an insight over the two (what consolidation's merge writes: a new memory that
            # supersedes its sources), findable as the kayak memory was
            insight = conn.execute(
                "INSERT INTO memories (user_id, session_id, memory_type, content, "
                "universal_embedding, native_embedding, native_model, index_text, index_tsv, "
                "index_version, importance) SELECT user_id, session_id, 'insight', %s, "
                "universal_embedding, native_embedding, native_model, %s, index_tsv, "
                "index_version, 0.8 FROM memories WHERE memory_id = %s RETURNING memory_id",
                (INSIGHT, INSIGHT, ids[KAYAK])).fetchone()[0]
            for source in (ids[KAYAK], ids[PADDLES]):
                conn.execute("INSERT INTO memory_links (source_id, target_id, link_type, "
                             "strength) VALUES (%s, %s, 'supersedes', 1.0)", (insight, source))
                conn.execute("UPDATE memories SET status = 'superseded' WHERE memory_id = %s",
                             (source,))
        settings = load_settings(data_dir=tmp_path / "data", database_url=db_url)
        seed_pages(settings, db_url)
        yield {"base": base, "tokens": tokens, "ids": ids, "insight": str(insight)}
    finally:
        proc.terminate()
        proc.wait(60)
        log.close()
    assert "Traceback" not in log_path.read_text()


def shoot(browser: Any, out: Path, name: str) -> Path:
    """The whole page (at most 2400 px of it) as out/name.png, through Chromium's own
    capture (Page.captureScreenshot beyond the viewport)."""
    import base64

    size = browser.execute_cdp_cmd("Page.getLayoutMetrics", {})["cssContentSize"]
    clip = {"x": 0, "y": 0, "width": min(float(size["width"]), 1200.0),
            "height": max(600.0, min(float(size["height"]), 2400.0)), "scale": 1}
    shot = browser.execute_cdp_cmd("Page.captureScreenshot", {
        "format": "png", "captureBeyondViewport": True, "clip": clip})
    path = out / f"{name}.png"
    path.write_bytes(base64.b64decode(shot["data"]))
    return path


def png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR", path
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def log_in(browser: Any, base: str, token: str) -> None:
    from selenium.webdriver.common.by import By

    browser.delete_all_cookies()
    browser.get(f"{base}/ui")
    assert "/ui/login" in browser.current_url  # no session: the login page
    browser.find_element(By.ID, "token").send_keys(token)
    browser.find_element(By.ID, "login").click()
    wait_for(browser, lambda: browser.current_url.endswith("/ui/timeline"))


def wait_for(browser: Any, check: Any, timeout: float = 60) -> None:
    from selenium.webdriver.support.ui import WebDriverWait

    WebDriverWait(browser, timeout).until(lambda _: check())


def search(browser: Any, text: str) -> None:
    from selenium.webdriver.common.by import By

    box = browser.find_element(By.ID, "q")
    box.clear()
    box.send_keys(text)
    browser.find_element(By.ID, "search").click()
    wait_for(browser, lambda: browser.find_elements(By.ID, "results")
             or browser.find_elements(By.ID, "search-error"))


def hits(browser: Any) -> str:
    """The search's results, without the heading that repeats the query."""
    from selenium.webdriver.common.by import By

    return " ".join(e.text for e in browser.find_elements(By.CSS_SELECTOR, "#results .hits"))


def body(browser: Any) -> str:
    from selenium.webdriver.common.by import By

    return str(browser.find_element(By.TAG_NAME, "body").text)


def test_a_user_searches_follows_a_chain_forgets_and_another_user_sees_nothing(
        served: dict[str, Any], browser: Any, screenshot_dir: Path) -> None:
    from selenium.webdriver.common.by import By

    base, ids = served["base"], served["ids"]
    shots: list[Path] = []
    # alice logs in through the form
    browser.get(f"{base}/ui/login")
    shots.append(shoot(browser, screenshot_dir, "login"))
    log_in(browser, base, served["tokens"]["alice"])
    assert browser.find_element(By.ID, "who").text == "alice"
    shots.append(shoot(browser, screenshot_dir, "timeline"))
    # search: the insight comes back with its verdict
    search(browser, "Where does Alice keep her kayak?")
    results = browser.find_element(By.ID, "results").text
    assert INSIGHT in results and "match" in results
    shots.append(shoot(browser, screenshot_dir, "search"))
    # open the insight, follow its chain to a superseded source and its turn
    browser.find_element(By.CSS_SELECTOR, f'#results a[href="/ui/memory/{served["insight"]}"]'
                         ).click()
    wait_for(browser, lambda: browser.find_elements(By.ID, "memory-text"))
    assert browser.find_element(By.ID, "memory-text").text == INSIGHT
    chain = browser.find_element(By.ID, "chain").text
    assert KAYAK in chain and PADDLES in chain
    shots.append(shoot(browser, screenshot_dir, "memory"))
    browser.find_element(By.CSS_SELECTOR, f'#chain a[href="/ui/memory/{ids[KAYAK]}"]').click()
    wait_for(browser, lambda: browser.current_url.endswith(ids[KAYAK]))
    assert browser.find_element(By.ID, "memory-text").text == KAYAK
    assert browser.find_element(By.ID, "memory-status").text == "superseded"
    assert "turn" in browser.find_element(By.ID, "chain").text  # down to the turn
    # forget it: the confirmation names what will go
    browser.find_element(By.ID, "forget").click()
    wait_for(browser, lambda: browser.find_elements(By.ID, "confirm-forget"))
    assert browser.find_element(By.ID, "forget-text").text == KAYAK
    assert browser.find_element(By.ID, "forget-id").text == ids[KAYAK]
    shots.append(shoot(browser, screenshot_dir, "forget"))
    browser.find_element(By.ID, "confirm-forget").click()
    wait_for(browser, lambda: browser.find_elements(By.ID, "forgotten"))
    # ... and it is gone: its page, the timeline, the search
    browser.get(f"{base}/ui/memory/{ids[KAYAK]}")
    gone = body(browser)
    assert KAYAK not in gone and ("no memory" in gone or "no such page" in gone), gone
    browser.get(f"{base}/ui/timeline")
    assert "boathouse" not in body(browser)
    search(browser, "kayak boathouse by the lake")
    assert "boathouse" not in hits(browser) and KAYAK not in body(browser)
    # the other pages, with alice's own data
    mine = marks("alice")
    for page in ("overnight", "mind", "health"):
        browser.get(f"{base}/ui/{page}")
        wait_for(browser, lambda: browser.find_elements(By.TAG_NAME, "main"))
        shots.append(shoot(browser, screenshot_dir, page))
    browser.get(f"{base}/ui/health")
    assert "testhost" in body(browser)  # alice's operator token sees the installation's
    browser.get(f"{base}/ui/overnight")
    assert mine["brief"] in body(browser) and "Night-cycle runs" in body(browser)
    browser.find_element(By.CSS_SELECTOR, 'svg a[href="#cluster-alice-branch"]').click()
    wait_for(browser, lambda: browser.current_url.endswith("#cluster-alice-branch"))
    wait_for(browser, lambda: browser.find_element(By.ID, "cluster-alice-branch")
             .get_attribute("open") is not None)  # the node opens its blocks
    assert mine["block"] in browser.find_element(By.ID, "cluster-alice-branch").text
    # bob logs in: nothing of alice's anywhere
    browser.find_element(By.ID, "logout").click()
    wait_for(browser, lambda: "/ui/login" in browser.current_url)
    log_in(browser, base, served["tokens"]["bob"])
    assert browser.find_element(By.ID, "who").text == "bob"
    alices = [PADDLES, INSIGHT, "boathouse", "kayak", *mine.values()]
    seen = {}
    for page, url in (("timeline", "/ui/timeline"), ("overnight", "/ui/overnight"),
                      ("mind", "/ui/mind"), ("health", "/ui/health"),
                      ("memory", f"/ui/memory/{served['insight']}"),
                      ("memory2", f"/ui/memory/{ids[PADDLES]}")):
        browser.get(base + url)
        seen[page] = browser.page_source
        shots.append(shoot(browser, screenshot_dir, f"bob-{page}"))
    browser.get(f"{base}/ui/timeline")
    search(browser, "Where does Alice keep her kayak and paddles?")
    seen["search"] = hits(browser)  # (the page repeats the query itself)
    assert "garage" not in seen["search"]
    assert BIKE in seen["timeline"]  # bob's own data is there
    # Health is an operator token's: bob's is not (a 403 page, no figure, no nav entry)
    assert "Health needs an operator token" in seen["health"]
    assert "testhost" not in seen["health"] and "inbox pending" not in seen["health"]
    assert 'href="/ui/health"' not in seen["timeline"]
    assert "Night-cycle runs" not in seen["overnight"]
    for page, html in seen.items():
        for text in alices:
            assert text not in html, (page, text)
    # every screenshot is a real picture of a page
    for path in shots:
        width, height = png_size(path)
        assert width >= 800 and height >= 500, (path, width, height)
        assert path.stat().st_size > 8_000, path
    assert {p.stem for p in shots} >= {"login", "forget", *PAGES}
