"""The console's Overnight, Mind and Health pages (issue 44) over HTTP on a real Postgres
and a real LanceDB cortex: each renders for a logged-in user with that user's data in it
(brief, runs, RAPTOR tree and blocks, weights, emotion, predictions and calibration,
principles, intentions, processes, queues, recall latency, rows) and nothing of a second
user's; user text is escaped; no session gets the login page. The installation's figures
(Health, the night runs, the cortex's error text) are an operator token's only."""

from __future__ import annotations

import json
import random
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import psycopg
import pytest

from agent.config import Settings

PAGES = ("/ui/overnight", "/ui/mind", "/ui/health")
EVIL = "<script>alert(1)</script>"


def marks(user: str) -> dict[str, str]:
    """Text only this user's rows hold, one per kind of row a page shows."""
    return {k: f"{user}-{k}-marker" for k in (
        "brief", "block", "cluster", "goal", "prediction", "principle", "intention",
        "emotion")}


def seed_user(conn: psycopg.Connection[Any], handle: str, cortex_rows: list[dict[str, Any]],
              run_id: int, dim: int, rng: random.Random) -> Any:
    """One user's rows for every page, each holding the user's markers."""
    m = marks(handle)
    uid = conn.execute("INSERT INTO users (handle) VALUES (%s) ON CONFLICT (handle) DO UPDATE "
                       "SET handle = EXCLUDED.handle RETURNING user_id", (handle,)).fetchone()[0]
    sid = conn.execute("INSERT INTO sessions (user_id) VALUES (%s) RETURNING session_id",
                       (uid,)).fetchone()[0]
    now = datetime.now(UTC)
    conn.execute("INSERT INTO night_briefs (run_id, user_id, content) VALUES (%s, %s, %s)",
                 (run_id, uid, f"Good morning {handle}: {m['brief']} {EVIL}"))
    blocks = []
    for i in range(3):
        bid = str(uuid.uuid4())
        prose = {"anterior_margin": "", "posterior_margin": "",
                 "live_zones": [{"start": 0, "content": f"{m['block']} {i} {EVIL}"}],
                 "dead_zone_summaries": []}
        conn.execute(
            "INSERT INTO holographic_blocks (block_id, prose, flux_metrics, salience_scores, "
            "coherence_gain, ties_merge_weight, session_id, user_id, run_id, arc_start_time, "
            "arc_end_time) VALUES (%s, %s, '{}', '{}', 0.5, 0.5, %s, %s, %s, %s, %s)",
            (bid, json.dumps(prose), sid, uid, run_id, now - timedelta(hours=3 - i),
             now - timedelta(hours=2 - i)))
        blocks.append(bid)

    def vec() -> list[float]:
        return [rng.random() for _ in range(dim)]

    branch = f"{handle}-branch"
    cortex_rows.append({"cluster_id": branch, "level": 1, "parent_cluster_id": f"{handle}-trunk",
                        "centroid": vec(), "summary_vector": vec(),
                        "summary_text": f"{m['cluster']} branch {EVIL}", "summarizer": "test",
                        "member_ids": json.dumps(blocks), "member_count": 3, "leaf_count": 3,
                        "run_id": run_id, "created_at": now})
    cortex_rows.append({"cluster_id": f"{handle}-trunk", "level": 2, "parent_cluster_id": None,
                        "centroid": vec(), "summary_vector": vec(),
                        "summary_text": f"{m['cluster']} trunk", "summarizer": "test",
                        "member_ids": json.dumps([branch]), "member_count": 1, "leaf_count": 3,
                        "run_id": run_id, "created_at": now})
    gid = conn.execute("INSERT INTO goals (name, weight, source, user_id) VALUES "
                       "(%s, 0.4, 'promotion', %s) RETURNING goal_id",
                       (m["goal"], uid)).fetchone()[0]
    conn.execute("INSERT INTO goals_history (goal_id, old_weight, new_weight, reason, changed_at)"
                 " VALUES (%s, 0.2, 0.4, 'test', %s)", (gid, now - timedelta(days=1)))
    for i in range(5):
        conn.execute("INSERT INTO emotional_state (user_id, valence, energy, openness, label, "
                     "detector, created_at) VALUES (%s, %s, %s, 0.5, %s, 'test', %s)",
                     (uid, -0.5 + i / 5, 0.2 + i / 10, m["emotion"] if i == 4 else None,
                      now - timedelta(hours=5 - i)))
    for i, (status, confidence) in enumerate((("correct", 0.3), ("wrong", 0.35),
                                              ("correct", 0.75), ("pending", 0.5))):
        settled = None if status == "pending" else now - timedelta(hours=i)
        conn.execute("INSERT INTO predictions (user_id, statement, confidence, made_by, status, "
                     "settled_at, detector) VALUES (%s, %s, %s, 'agent', %s, %s, 'test')",
                     (uid, f"{m['prediction']} {i} {EVIL}", confidence, status, settled))
    conn.execute("INSERT INTO principles (user_id, statement, detector) VALUES (%s, %s, 'test')",
                 (uid, f"{m['principle']} {EVIL}"))
    conn.execute("INSERT INTO intentions (user_id, session_id, kind, content) "
                 "VALUES (%s, %s, 'plan', %s)", (uid, sid, f"{m['intention']} {EVIL}"))
    for i in range(6):
        conn.execute("INSERT INTO recall_log (session_id, query, verdict, latency_ms, created_at)"
                     " VALUES (%s, %s, 'weak_match', %s, %s)",
                     (sid, f"{handle} query {i}", 10.0 + i, now - timedelta(minutes=30 * i)))
    return uid


def seed_pages(settings: Settings, db_url: str, users: tuple[str, ...] = ("alice", "bob")
               ) -> dict[str, Any]:
    """Every user's rows for the three pages (marks(user) in each), a finished night-cycle
    run, a RAPTOR tree in the real LanceDB cortex (a node over several users' blocks
    too), a heartbeat and a waiting message."""
    from agent.cortex.lance import CLUSTERS, LanceCortex

    rng = random.Random(7)
    rows: list[dict[str, Any]] = []
    with psycopg.connect(db_url, autocommit=True) as conn:
        run_id = conn.execute(
            "INSERT INTO night_cycle_runs (status, stage, finished_at, checkpoints) VALUES "
            "('done', 10, now(), %s) RETURNING run_id",
            (json.dumps({"stages": {"1": {"turns": 40, "seconds": 1.25, "note": "text"},
                                    "8": {"clusters": 4, "seconds": 3.5}}}),)).fetchone()[0]
        uids = {h: seed_user(conn, h, rows, run_id, settings.embedding.universal_dim, rng)
                for h in users}
        conn.execute("INSERT INTO process_heartbeats (name, pid, host, state) "
                     "VALUES ('loop', 4242, 'testhost', 'running')")
        conn.execute("INSERT INTO inbox (session_id, content, status) "
                     "SELECT session_id, 'waiting', 'pending' FROM sessions LIMIT 1")
    # a node over every user's blocks: shown to none of them
    mixed = [json.loads(r["member_ids"])[0] for r in rows if r["level"] == 1]
    rows.append({**rows[0], "cluster_id": "mixed", "summary_text": "mixed-cluster-marker",
                 "member_ids": json.dumps(mixed), "parent_cluster_id": None})
    LanceCortex.from_settings(settings).upsert(CLUSTERS, rows, "cluster_id")
    return {"uids": uids, "run_id": run_id}


@pytest.fixture
def seeded(settings: Settings, db_url: str) -> dict[str, Any]:
    return seed_pages(settings, db_url)


@pytest.fixture
def http(settings: Settings, db_url: str, seeded: dict[str, Any]) -> Iterator[Any]:
    from fastapi.testclient import TestClient

    from agent.commands.serve import build_app
    from agent.runtime import Runtime

    api = Runtime(settings).memory_api(db_url, "alice", channel="api", app="cogd-test-console")
    try:
        with TestClient(build_app(settings, db_url, api)) as client:
            yield client
    finally:
        api.close()


def login(http: Any, db_url: str, handle: str, operator: bool = False) -> None:
    """Log in as `handle` with a new token (`operator`: an operator token)."""
    from agent.services.access.tokens import create

    with psycopg.connect(db_url, autocommit=True) as conn:
        uid = conn.execute("SELECT user_id FROM users WHERE handle = %s", (handle,)).fetchone()[0]
        token = create(conn, uid, handle, "console-test", "tester", operator)["token"]
    http.cookies.clear()
    got = http.post("/ui/login", data={"token": token}, follow_redirects=False)
    assert got.status_code == 303, got.text


def test_each_page_shows_its_users_data_and_none_of_the_others(http: Any, db_url: str) -> None:
    for me, other in (("alice", "bob"), ("bob", "alice")):
        login(http, db_url, me, operator=True)  # every page, Health too
        seen = ""
        for path in PAGES:
            page = http.get(path)
            assert page.status_code == 200, (path, page.text[:500])
            assert page.headers["content-type"].startswith("text/html")
            seen += page.text
            for theirs in marks(other).values():
                assert theirs not in page.text, (me, path, theirs)
            assert "mixed-cluster-marker" not in page.text  # a node with both users' blocks
            assert EVIL not in page.text
            if path != "/ui/health":  # user text there is none; elsewhere escaped
                assert "&lt;script&gt;" in page.text
            assert f"{other} query" not in page.text  # recall_log's text never shown
        for kind, mine in marks(me).items():
            assert mine in seen, (me, kind)


def test_overnight_draws_the_tree_and_opens_a_nodes_blocks(http: Any, db_url: str) -> None:
    import re
    import xml.etree.ElementTree as ET

    login(http, db_url, "alice", operator=True)
    page = http.get("/ui/overnight").text
    drawn = re.search(r"<svg .*?</svg>", page, re.S)
    assert drawn is not None
    root = ET.fromstring(drawn.group(0))
    links = [a.attrib["href"] for a in root.iter("{http://www.w3.org/2000/svg}a")]
    assert sorted(links) == ["#cluster-alice-branch", "#cluster-alice-trunk"]
    for href in links:  # each link opens an entry on the page, with the blocks' text
        assert f'id="{href[1:]}"' in page
    entry = page.split('id="cluster-alice-branch"', 1)[1].split("</details>", 1)[0]
    assert entry.count("alice-block-marker") == 3
    assert "run " in page and "clustering" in page and "3.50" in page  # stage 8's seconds
    assert "note" not in page.split("Night-cycle runs", 1)[1].split("</section>", 1)[0]


def test_mind_and_health_charts_have_the_data(http: Any, db_url: str) -> None:
    import re
    import xml.etree.ElementTree as ET

    login(http, db_url, "alice", operator=True)
    mind = http.get("/ui/mind").text
    charts = [ET.fromstring(s) for s in re.findall(r"<svg .*?</svg>", mind, re.S)]
    titles = [c.findtext("{http://www.w3.org/2000/svg}title") for c in charts]
    assert titles == ["Identity weights", "Goal weights", "Emotional state", "Calibration"]
    goal_series = [g.attrib["data-name"] for g in charts[1].iter("{http://www.w3.org/2000/svg}g")]
    assert "alice-goal-marker" in goal_series and "bob-goal-marker" not in goal_series
    bins = [c for c in charts[3].iter("{http://www.w3.org/2000/svg}circle")
            if c.attrib.get("class") == "bin"]
    assert len(bins) == 2  # three settled predictions in two confidence buckets
    health = http.get("/ui/health").text
    assert "testhost" in health and "4242" in health
    assert re.search(r"<th>inbox pending</th><td>1</td>", health)
    latency = ET.fromstring(re.findall(r"<svg .*?</svg>", health, re.S)[0])
    assert [g.attrib["data-name"] for g in latency.iter("{http://www.w3.org/2000/svg}g")
            ] == ["p50", "p95"]
    assert re.search(r"<th>memories</th><td>\d+</td>", health)


def test_the_installations_figures_are_an_operator_tokens_only(http: Any, db_url: str
                                                                ) -> None:
    """As GET /v1/status: an ordinary token gets no Health page (403, no figure) and no
    Health entry, and its Overnight page has its own brief and tree but no night runs;
    an operator token (of the same user) sees them."""
    login(http, db_url, "bob")
    health = http.get("/ui/health")
    assert health.status_code == 403
    assert health.headers["content-type"].startswith("text/html")
    assert "Health needs an operator token" in health.text
    for figure in ("testhost", "4242", "inbox pending", "<svg", "memories</th>"):
        assert figure not in health.text, figure
    assert "Content-Security-Policy" in health.headers
    over = http.get("/ui/overnight")
    assert over.status_code == 200 and marks("bob")["brief"] in over.text
    assert 'href="#cluster-bob-branch"' in over.text  # his tree
    assert "Night-cycle runs" not in over.text and "clustering" not in over.text
    assert "3.50" not in over.text
    assert http.get("/ui/mind").status_code == 200
    for path in ("/ui/timeline", "/ui/overnight", "/ui/mind"):
        assert 'href="/ui/health"' not in http.get(path).text, path
    login(http, db_url, "bob", operator=True)
    over = http.get("/ui/overnight").text
    assert "Night-cycle runs" in over and "clustering" in over and "3.50" in over
    assert 'href="/ui/health"' in over
    assert http.get("/ui/health").status_code == 200


def test_the_cortexs_error_text_is_an_operator_tokens_only(settings: Settings, db_url: str,
                                                           seeded: dict[str, Any]) -> None:
    """A cortex that cannot be read (a broken clusters table): the rest of the page shows;
    an operator reads the error (the cortex's path and the store's answer), any other
    token one fixed line."""
    import shutil

    from fastapi.testclient import TestClient

    from agent.commands.serve import build_app
    from agent.cortex.lance import CLUSTERS, cortex_uri
    from agent.runtime import Runtime

    table = Path(cortex_uri(settings)) / f"{CLUSTERS}.lance"
    shutil.rmtree(table)
    (table / "_versions").mkdir(parents=True)
    (table / "_versions" / "1.manifest").write_bytes(b"not a manifest")
    api = Runtime(settings).memory_api(db_url, "alice", channel="api", app="cogd-test-console")
    try:
        with TestClient(build_app(settings, db_url, api)) as http:
            login(http, db_url, "bob")
            page = http.get("/ui/overnight")
            assert page.status_code == 200 and marks("bob")["brief"] in page.text
            line = page.text.split('id="cortex-error">', 1)[1].split("</p>", 1)[0]
            assert line == "The cortex cannot be read now."
            assert cortex_uri(settings) not in page.text and "LanceDB" not in page.text
            login(http, db_url, "bob", operator=True)
            page = http.get("/ui/overnight")
            line = page.text.split('id="cortex-error">', 1)[1].split("</p>", 1)[0]
            assert line.startswith("The cortex cannot be read now: cannot open the LanceDB")
            assert cortex_uri(settings) in line
    finally:
        api.close()


def test_without_a_session_each_page_sends_the_login_page(http: Any) -> None:
    http.cookies.clear()
    for path in PAGES:
        got = http.get(path, follow_redirects=False)
        assert got.status_code == 303 and got.headers["location"].startswith("/ui/login")


def test_empty_installation_pages_say_so(settings: Settings, db_url: str, tmp_path: Path
                                         ) -> None:
    from fastapi.testclient import TestClient

    from agent.commands.serve import build_app
    from agent.runtime import Runtime

    api = Runtime(settings).memory_api(db_url, "carol", channel="api", app="cogd-test-console")
    try:
        with psycopg.connect(db_url, autocommit=True) as conn:
            conn.execute("INSERT INTO users (handle) VALUES ('carol')")
        with TestClient(build_app(settings, db_url, api)) as http:
            login(http, db_url, "carol", operator=True)
            over = http.get("/ui/overnight")
            assert over.status_code == 200
            assert "No morning brief for you yet" in over.text and "no RAPTOR levels" in over.text
            mind = http.get("/ui/mind")
            assert mind.status_code == 200 and "no settled predictions yet" in mind.text
            assert http.get("/ui/health").status_code == 200
    finally:
        api.close()
