"""The web console (issue 44): cogd serve's own app on a real Postgres, driven over HTTP
as a browser would (form posts, the session cookie), without a browser: login with a
token, the session cookie's attributes, the login page for a request without a session,
CSRF on every action, escaping, the timeline and its search, a memory's page and chain,
forget, and one user's session seeing none of another user's memories."""

from __future__ import annotations

import hashlib
import re
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import psycopg
import pytest

from agent.config import Settings
from tests.integration.console_client import console_app, csrf_of, fresh, login

LOCKER = "My locker code is 4512."


def _cookie_header(response: Any) -> str:
    cookies = [v for k, v in response.headers.multi_items() if k == "set-cookie"]
    assert len(cookies) == 1, cookies
    return cookies[0]


def test_login_with_a_token_sets_a_strict_cookie_and_logout_or_revoking_ends_it(
        settings: Settings, db_url: str) -> None:
    from fastapi.testclient import TestClient

    from agent.db.connect import connect
    from agent.services.access.tokens import revoke

    with console_app(settings, db_url) as (http, _, tokens):
        # no session: a page sends the browser to the login form, an action gets it (401)
        for path in ("/ui", "/ui/timeline", "/ui/memory/" + str(uuid.uuid4())):
            got = http.get(path, follow_redirects=False)
            assert got.status_code == 303, (path, got.status_code)
            assert got.headers["location"].startswith("/ui/login?next=/ui")
        form = http.get("/ui/login")
        assert form.status_code == 200 and 'name="token"' in form.text
        assert "csrf" not in form.text  # logged out: no session, no CSRF secret
        refused = http.post("/ui/logout", data={"csrf": "x"}, follow_redirects=False)
        assert refused.status_code == 401 and 'name="token"' in refused.text
        # a bad token: the form again with the error, and no cookie
        for token, error in (("cogd_nottoken", "unknown or revoked token"),
                             ("", "enter a token")):
            bad = http.post("/ui/login", data={"token": token}, follow_redirects=False)
            assert bad.status_code == 401 and error in bad.text
            assert "set-cookie" not in bad.headers and not http.cookies
        # the token alone logs in (a script's form post)
        ok = http.post("/ui/login", data={"token": tokens["alice"]}, follow_redirects=False)
        assert ok.status_code == 303 and ok.headers["location"] == "/ui/timeline"
        cookie = _cookie_header(ok)
        attrs = {a.strip().split("=")[0].lower(): a.strip() for a in cookie.split(";")[1:]}
        assert "httponly" in attrs and attrs["samesite"].lower() == "samesite=strict"
        assert attrs["path"] == "Path=/ui" and "secure" not in attrs  # plain http here
        secret = cookie.split(";")[0].split("=", 1)[1]
        with psycopg.connect(db_url) as conn:  # a console page marks its token used
            conn.execute("UPDATE api_tokens SET last_used_at = now() - interval '1 hour'")
        page = http.get("/ui/timeline")
        assert page.status_code == 200 and '<span class="who" id="who">alice</span>' in page.text
        with psycopg.connect(db_url) as conn:
            used = dict(conn.execute(
                "SELECT u.handle, t.last_used_at > now() - interval '1 minute' "
                "FROM api_tokens t JOIN users u USING (user_id)").fetchall())
        assert used["alice"] is True and used.get("bob") is not True, used
        for name in ("Content-Security-Policy", "X-Frame-Options", "Cache-Control"):
            assert name in page.headers
        assert "script-src 'self'" in page.headers["Content-Security-Policy"]
        with psycopg.connect(db_url) as conn:
            rows = conn.execute("SELECT secret_hash, csrf_secret, ended_by FROM "
                                "console_sessions").fetchall()
        assert rows == [(hashlib.sha256(secret.encode()).hexdigest(), csrf_of(page.text),
                         None)]  # only the secret's hash is kept
        assert http.get("/ui/login", follow_redirects=False).headers["location"] == (
            "/ui/timeline")  # logged in already
        # logout is an action: without its CSRF field it is refused and changes nothing
        assert http.post("/ui/logout", data={}).status_code == 403
        assert http.get("/ui/timeline", follow_redirects=False).status_code == 200
        out = http.post("/ui/logout", data={"csrf": csrf_of(page.text)},
                        follow_redirects=False)
        assert out.status_code == 303 and out.headers["location"] == "/ui/login"
        assert 'cogd_console=""' in _cookie_header(out) or "Max-Age=0" in _cookie_header(out)
        http.cookies.set("cogd_console", secret, path="/ui")  # the old cookie, kept anyway
        assert http.get("/ui/timeline", follow_redirects=False).status_code == 303
        # a revoked token ends its sessions
        login(http, tokens["alice"])
        assert http.get("/ui/timeline", follow_redirects=False).status_code == 200
        with connect(db_url, autocommit=True) as conn:
            revoke(conn, tokens["alice"][:12], "tester")
        assert http.get("/ui/timeline", follow_redirects=False).status_code == 303
        assert http.post("/ui/login", data={"token": tokens["alice"]}).status_code == 401
        with psycopg.connect(db_url) as conn:  # the revoke ended the session in its row
            ends = conn.execute("SELECT ended_by, revoked_at IS NOT NULL FROM console_sessions "
                                "ORDER BY created_at").fetchall()
        assert ends == [("logout", True), ("token_revoked", True)]
        # next: a /ui path of this server only
        went = http.post("/ui/login", data={"token": tokens["bob"], "next": "/ui/memory/x"},
                         follow_redirects=False)
        assert went.headers["location"] == "/ui/memory/x"
        fresh(http)
        away = http.post("/ui/login", data={"token": tokens["bob"],
                                            "next": "https://evil.example/ui/"},
                         follow_redirects=False)
        assert away.headers["location"] == "/ui/timeline"
        # a browser's login posted from another site is refused (login CSRF)
        fresh(http)
        cross = http.post("/ui/login", data={"token": tokens["bob"]},
                          headers={"Origin": "https://evil.example"}, follow_redirects=False)
        assert cross.status_code == 403 and "set-cookie" not in cross.headers
        # over https the cookie is Secure
        with TestClient(http.app, base_url="https://testserver") as tls:
            made = tls.post("/ui/login", data={"token": tokens["bob"]},
                            follow_redirects=False)
            assert made.status_code == 303
            assert "secure" in _cookie_header(made).lower()
            page = tls.get("/ui/timeline")  # a browser's same-site action: its own Origin
            out = tls.post("/ui/logout", data={"csrf": csrf_of(page.text)},
                           headers={"Origin": "https://testserver",
                                    "Sec-Fetch-Site": "same-origin"},
                           follow_redirects=False)
            assert out.status_code == 303
        with psycopg.connect(db_url) as conn:
            actions = [r[0] for r in conn.execute(
                "SELECT action FROM audit_log WHERE action LIKE 'console_%' ORDER BY id")]
        assert actions.count("console_login") == 5 and actions.count("console_logout") == 2


def test_the_schema_keeps_a_session_to_its_tokens_user_and_live_token(
        settings: Settings, db_url: str) -> None:
    from agent.db.connect import connect
    from agent.services.access.tokens import revoke

    with console_app(settings, db_url) as (_, _api, tokens), \
            connect(db_url, autocommit=True) as conn:
        ids = dict(conn.execute("SELECT u.handle, t.token_id FROM api_tokens t "
                                "JOIN users u USING (user_id)").fetchall())
        users = dict(conn.execute("SELECT handle, user_id FROM users").fetchall())
        insert = ("INSERT INTO console_sessions (secret_hash, token_id, user_id, csrf_secret, "
                  "expires_at) VALUES (%s, %s, %s, %s, now() + interval '1 hour')")
        with pytest.raises(psycopg.errors.ForeignKeyViolation):  # bob's token, alice's rows
            conn.execute(insert, ("a" * 64, ids["bob"], users["alice"], "c" * 43))
        with pytest.raises(psycopg.errors.CheckViolation, match="ck_console_sessions_hash"):
            conn.execute(insert, ("the secret itself", ids["bob"], users["bob"], "c" * 43))
        revoke(conn, tokens["bob"][:12], "tester")
        with pytest.raises(psycopg.errors.CheckViolation, match="is revoked"):
            conn.execute(insert, ("b" * 64, ids["bob"], users["bob"], "c" * 43))
        assert conn.execute("SELECT count(*) FROM console_sessions").fetchone() == (0,)


def test_search_a_memory_its_chain_and_forget_it_with_csrf(settings: Settings,
                                                           db_url: str) -> None:
    with console_app(settings, db_url) as (http, api, tokens):
        mid = api.remember(LOCKER)["memory_id"]
        api.remember("The train to Porto leaves at 7:15 on Fridays.")
        csrf = login(http, tokens["alice"])
        page = http.get("/ui/timeline").text
        today = datetime.now(UTC).date().isoformat()
        assert f"<h2>{today}</h2>" in page and LOCKER in page and "Porto" in page
        assert page.index("Porto") < page.index(LOCKER)  # newest first
        assert f'href="/ui/memory/{mid}"' in page  # the turn links its memory
        found = http.get("/ui/timeline", params={"q": "What is my locker code?"}).text
        results = found[found.index('id="results"'):found.index('id="days"')]
        assert "strong_match" in results and "4512" in results
        assert f'href="/ui/memory/{mid}"' in results
        assert today in results  # the hit's date
        memory = http.get(f"/ui/memory/{mid}")
        assert memory.status_code == 200
        text = memory.text
        assert f'<p class="text" id="memory-text">{LOCKER}</p>' in text
        assert 'id="importance">' in text and "importance x0.5 on or after" in text
        chain = text[text.index('id="chain"'):text.index('id="links"')]
        assert "turn " in chain and LOCKER in chain  # the memory's turn
        confirm = http.get(f"/ui/memory/{mid}/forget").text
        assert f'<code id="forget-id">{mid}</code>' in confirm and LOCKER in confirm
        assert csrf_of(confirm) == csrf
        # without the CSRF field, with a wrong one, or from another site: 403, kept
        for data, headers in (({}, {}), ({"csrf": "x" * 43}, {}),
                              ({"csrf": csrf[:-1]}, {}),
                              ({"csrf": csrf}, {"Origin": "https://evil.example"}),
                              ({"csrf": csrf}, {"Sec-Fetch-Site": "cross-site"})):
            refused = http.post(f"/ui/memory/{mid}/forget", data=data, headers=headers)
            assert refused.status_code == 403, (data, headers)
            assert api.memory(mid) is not None
        gone = http.post(f"/ui/memory/{mid}/forget", data={"csrf": csrf})
        assert gone.status_code == 200 and 'id="forgotten"' in gone.text
        assert "memories: 1" in gone.text and "4512" not in gone.text
        assert http.get(f"/ui/memory/{mid}").status_code == 404
        assert http.get(f"/ui/memory/{mid}/forget").status_code == 404
        again = http.get("/ui/timeline", params={"q": "What is my locker code?"}).text
        assert "4512" not in again and "Porto" in http.get("/ui/timeline").text
        assert api.memory(mid) is None
        with psycopg.connect(db_url) as conn:
            assert conn.execute("SELECT count(*) FROM memories WHERE memory_id = %s",
                                (mid,)).fetchone() == (0,)
            assert conn.execute("SELECT count(*) FROM day_table WHERE content LIKE "
                                "'%%4512%%'").fetchone() == (0,)
            actor = conn.execute("SELECT actor FROM audit_log WHERE action = 'forget'"
                                 ).fetchone()
        assert actor is not None and actor[0].startswith("console:") and "alice" in actor[0]


def test_pages_show_user_text_as_text(settings: Settings, db_url: str) -> None:
    evil = "<script>alert(1)</script> and <img src=x onerror=alert(2)>"
    with console_app(settings, db_url) as (http, api, tokens):
        mid = api.remember(evil)["memory_id"]
        login(http, tokens["alice"])
        pages = [http.get("/ui/timeline").text,
                 http.get("/ui/timeline", params={"q": evil}).text,
                 http.get(f"/ui/memory/{mid}").text,
                 http.get(f"/ui/memory/{mid}/forget").text]
        for page in pages:
            assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
            assert "<script>alert(1)" not in page and "<img src=x" not in page
            assert "<script" not in page  # the console has no inline script at all
        assert 'value="&lt;script&gt;alert(1)&lt;/script&gt;' in pages[1]  # the search box
        named = http.get("/ui/memory/<img src=x onerror=alert(3)>")  # a 404 names it
        assert named.status_code == 404 and "no memory &lt;img src=x" in named.text
        assert "<img src=x" not in named.text


def test_a_second_users_session_sees_none_of_the_first_users_memories(
        settings: Settings, db_url: str) -> None:
    with console_app(settings, db_url) as (http, api, tokens):
        mid = api.remember(LOCKER)["memory_id"]  # alice's
        api.remember("Bob parks his bike behind the bakery.", user="bob")
        csrf = login(http, tokens["bob"])
        timeline = http.get("/ui/timeline").text
        assert "bakery" in timeline and "4512" not in timeline and "locker" not in timeline
        found = http.get("/ui/timeline", params={"q": "What is my locker code?"}).text
        assert "4512" not in found and mid not in found
        for path in (f"/ui/memory/{mid}", f"/ui/memory/{mid}/forget"):
            got = http.get(path)
            assert got.status_code == 404 and "4512" not in got.text
        assert http.get("/ui/memory/not-a-uuid").status_code == 404
        refused = http.post(f"/ui/memory/{mid}/forget", data={"csrf": csrf})
        assert refused.status_code == 404 and "4512" not in refused.text
        assert api.memory(mid, user="alice") is not None  # still alice's
        login(http, tokens["alice"])
        assert "4512" in http.get(f"/ui/memory/{mid}").text
        assert "bakery" not in http.get("/ui/timeline").text


def test_the_timeline_pages_by_turn_newest_first_grouped_by_day(settings: Settings,
                                                                db_url: str) -> None:
    with console_app(settings, db_url) as (http, _, tokens):
        with psycopg.connect(db_url, autocommit=True) as conn:
            uid = conn.execute("SELECT user_id FROM users WHERE handle = 'alice'").fetchone()
            assert uid is not None
            sid = conn.execute("INSERT INTO sessions (user_id, channel) VALUES (%s, 'import') "
                               "RETURNING session_id", uid).fetchone()
            assert sid is not None
            start = datetime(2026, 10, 1, 9, 0, tzinfo=UTC)
            for i in range(70):  # 35 turns a day over two days
                at = start + timedelta(days=i // 35, minutes=i)
                conn.execute("INSERT INTO day_table (session_id, user_id, role, content, "
                             "created_at) VALUES (%s, %s, 'user', %s, %s)",
                             (sid[0], uid[0], f"note number {i:03d}", at))
        login(http, tokens["alice"])
        first = http.get("/ui/timeline").text
        shown = re.findall(r"note number (\d{3})", first)
        assert shown == [f"{i:03d}" for i in range(69, 19, -1)]  # 50, newest first
        assert first.index("<h2>2026-10-02</h2>") < first.index("<h2>2026-10-01</h2>")
        older = re.search(r'href="(/ui/timeline\?before=[^"]+)" id="older"', first)
        assert older is not None
        second = http.get(older.group(1).replace("&amp;", "&")).text
        assert re.findall(r"note number (\d{3})", second) == [
            f"{i:03d}" for i in range(19, -1, -1)]
        assert 'id="older"' not in second and 'id="newest"' in second
        assert http.get("/ui/timeline", params={"before": "yesterday",
                                                "before_id": "x"}).status_code == 400


def test_an_insights_page_shows_its_sources_and_turns_and_links_without_other_users_text(
        settings: Settings, db_url: str) -> None:
    with console_app(settings, db_url) as (http, api, tokens):
        m1 = api.remember("I swim at the lake on Mondays.")["memory_id"]
        m2 = api.remember("I swim at the lake on Thursdays.")["memory_id"]
        theirs = api.remember("Bob's boat is called Marlin.", user="bob")["memory_id"]
        with psycopg.connect(db_url, autocommit=True) as conn:
            row = conn.execute(
                "INSERT INTO memories (user_id, memory_type, content, importance) "
                "SELECT user_id, 'insight', 'Alice swims at the lake twice a week.', 0.7 "
                "FROM users WHERE handle = 'alice' RETURNING memory_id").fetchone()
            shared = conn.execute(  # made as alice's, then of no user (as a shared fact)
                "UPDATE memories SET user_id = NULL WHERE memory_id = %s RETURNING memory_id",
                (api.remember("The lake closes in November.")["memory_id"],)).fetchone()
            assert row is not None and shared is not None
            insight = str(row[0])
            for source in (m1, m2):
                conn.execute("INSERT INTO memory_links (source_id, target_id, link_type) "
                             "VALUES (%s, %s, 'supersedes')", (insight, source))
                conn.execute("UPDATE memories SET status = 'superseded' WHERE memory_id = %s",
                             (source,))
            conn.execute("INSERT INTO memory_links (source_id, target_id, link_type, strength) "
                         "VALUES (%s, %s, 'related', 0.4), (%s, %s, 'contradicts', 0.9)",
                         (insight, shared[0], insight, theirs))
        login(http, tokens["alice"])
        page = http.get(f"/ui/memory/{insight}").text
        chain = page[page.index('id="chain"'):page.index('id="links"')]
        nodes = re.findall(r'<li class="node depth-(\d)" data-memory="([^"]+)"', chain)
        assert nodes == [("0", insight), ("1", min(m1, m2)), ("1", max(m1, m2))]
        assert "Mondays" in chain and "Thursdays" in chain and chain.count("turn ") == 2
        assert f'href="/ui/memory/{m1}"' in chain and f'href="/ui/memory/{m2}"' in chain
        assert "superseded: no longer decays" not in page  # the insight is active
        links = page[page.index('id="links"'):]
        assert "The lake closes in November. (shared: of no user)" in links
        assert f'href="/ui/memory/{shared[0]}"' not in links  # no page: not alice's
        assert "(another user's memory)" in links and "Marlin" not in page
        assert "this contradicts" in links and "this related" in links
        source = http.get(f"/ui/memory/{m1}").text
        assert 'id="memory-status">superseded' in source and "no longer decays" in source
        assert "held by insight" in source and f'href="/ui/memory/{insight}"' in source
        found = http.get("/ui/timeline", params={"q": "When does the lake close?"}).text
        results = found[found.index('id="results"'):found.index('id="days"')]
        assert "November" in results and f"/ui/memory/{shared[0]}" not in results
        # a memory with many links lists the newest (MAX_LINKS) and says how many in all
        from agent.services.access.console import memory_detail

        with psycopg.connect(db_url) as conn:
            uid = conn.execute("SELECT user_id FROM users WHERE handle = 'alice'").fetchone()
            assert uid is not None
            capped = memory_detail(conn, uuid.UUID(insight), uid[0], max_links=1)
        assert capped is not None and capped["link_count"] == 4
        assert [link["type"] for link in capped["links"]] == ["contradicts"]  # the newest


def test_a_contradiction_is_resolved_from_the_memory_page_with_csrf(settings: Settings,
                                                                     db_url: str) -> None:
    with console_app(settings, db_url) as (http, api, tokens):
        old = api.remember("I live in Berlin.")["memory_id"]
        new = api.remember("I live in Lisbon now.")["memory_id"]
        other_old = api.remember("My bike is red.")["memory_id"]
        other_new = api.remember("My bike is green.")["memory_id"]
        with psycopg.connect(db_url, autocommit=True) as conn:
            links = [conn.execute(
                "INSERT INTO memory_links (source_id, target_id, link_type, strength, metadata) "
                "VALUES (%s, %s, 'contradicts', 0.8, '{\"reason\": \"<b>moved</b>\"}') "
                "RETURNING id", pair).fetchone() for pair in ((new, old), (other_new, other_old))]
        assert links[0] is not None and links[1] is not None
        lid, lid2 = links[0][0], links[1][0]
        csrf = login(http, tokens["bob"])  # bob: not his to resolve
        assert http.post(f"/ui/contradiction/{lid}/resolve",
                         data={"csrf": csrf, "action": "keep-b"}).status_code == 404
        csrf = login(http, tokens["alice"])
        page = http.get(f"/ui/memory/{old}").text
        dispute = page[page.index('id="contradictions"'):page.index('id="chain"')]
        assert f'data-contradiction="{lid}"' in dispute and "Lisbon" in dispute
        assert "&lt;b&gt;moved&lt;/b&gt;" in dispute  # the flagger's reason, as text
        assert 'value="keep-a" class="keep-this"' in dispute  # old is a (the older)
        for data in ({"action": "keep-b"}, {"action": "keep-b", "csrf": "nope"}):
            assert http.post(f"/ui/contradiction/{lid}/resolve", data=data).status_code == 403
        assert api.memory(old)["status"] == "active"
        bad = http.post(f"/ui/contradiction/{lid}/resolve", data={"csrf": csrf,
                                                                  "action": "drop-both"})
        assert bad.status_code == 400 and "action must be" in bad.text
        done = http.post(f"/ui/contradiction/{lid}/resolve",
                         data={"csrf": csrf, "action": "keep-b", "back": f"/ui/memory/{old}"})
        assert done.status_code == 200 and f'id="kept">memory {new}' in done.text
        assert api.memory(old)["status"] == "superseded"
        assert api.memory(new)["status"] == "active"
        assert 'id="contradictions"' not in http.get(f"/ui/memory/{old}").text
        again = http.post(f"/ui/contradiction/{lid}/resolve",
                          data={"csrf": csrf, "action": "keep-a"})
        assert again.status_code == 400 and "already resolved" in again.text
        merged = http.post(f"/ui/contradiction/{lid2}/resolve",
                           data={"csrf": csrf, "action": "merge",
                                 "text": "My bike was red; it is green now."})
        assert merged.status_code == 200
        kept = re.search(r'id="kept">memory ([0-9a-f-]+)', merged.text)
        assert kept is not None
        assert "it is green now" in http.get(f"/ui/memory/{kept.group(1)}").text
        with psycopg.connect(db_url) as conn:
            actors = conn.execute("SELECT actor FROM audit_log WHERE action = "
                                  "'resolve_contradiction' ORDER BY id").fetchall()
        assert len(actors) == 2 and all(a[0].startswith("console:") for a in actors)


def test_the_timeline_keeps_memories_whose_turns_the_night_cleanup_removed(
        settings: Settings, db_url: str) -> None:
    with console_app(settings, db_url) as (http, api, tokens):
        kept = api.remember("The boat club meets on the first Sunday.")["memory_id"]
        with psycopg.connect(db_url, autocommit=True) as conn:
            # the night cycle's cleanup deletes a covered turn: the memory stays (its
            # source_entry_id is set to NULL by the foreign key)
            conn.execute("DELETE FROM day_table WHERE entry_id = (SELECT source_entry_id "
                         "FROM memories WHERE memory_id = %s)", (kept,))
            uid = conn.execute("SELECT user_id FROM users WHERE handle = 'alice'").fetchone()
            assert uid is not None
            sid = conn.execute("INSERT INTO sessions (user_id) VALUES (%s) RETURNING "
                               "session_id", uid).fetchone()
            assert sid is not None
            start = datetime(2026, 10, 1, 9, 0, tzinfo=UTC)
            for i in range(60):  # turns and turn-less insights, interleaved in time
                at = start + timedelta(minutes=i)
                if i % 2:
                    conn.execute("INSERT INTO memories (user_id, memory_type, content, "
                                 "created_at) VALUES (%s, 'insight', %s, %s)",
                                 (uid[0], f"entry number {i:03d}", at))
                else:
                    conn.execute("INSERT INTO day_table (session_id, user_id, role, content, "
                                 "created_at) VALUES (%s, %s, 'user', %s, %s)",
                                 (sid[0], uid[0], f"entry number {i:03d}", at))
        login(http, tokens["alice"])
        first = http.get("/ui/timeline").text
        newest = first[first.index('id="days"'):first.index("<h2>2026-10-01</h2>")]
        assert f'data-memory="{kept}"' in newest and "boat club" in newest
        assert "its turn is no longer in the day table" in newest
        shown = re.findall(r"entry number (\d{3})", first)
        assert shown == [f"{i:03d}" for i in range(59, 10, -1)]  # 49 + the boat club
        assert "insight (consolidation)" in first and "no session (made by" in first
        older = re.search(r'href="(/ui/timeline\?before=[^"]+)" id="older"', first)
        assert older is not None
        second = http.get(older.group(1).replace("&amp;", "&")).text
        assert re.findall(r"entry number (\d{3})", second) == [
            f"{i:03d}" for i in range(10, -1, -1)]
        assert 'id="older"' not in second


def test_a_login_over_a_live_session_ends_that_session(settings: Settings, db_url: str
                                                       ) -> None:
    """One browser, one live session: logging in again (as the same user or another)
    with the cookie of a live session ends it first (`ended_by` 'relogin'), so the old
    secret opens nothing afterwards."""
    with console_app(settings, db_url) as (http, _, tokens):
        login(http, tokens["alice"])
        old = http.cookies.get("cogd_console")
        assert old
        got = http.post("/ui/login", data={"token": tokens["bob"]}, follow_redirects=False)
        assert got.status_code == 303
        assert '<span class="who" id="who">bob</span>' in http.get("/ui/timeline").text
        with psycopg.connect(db_url) as conn:
            ends = conn.execute(
                "SELECT u.handle, s.ended_by FROM console_sessions s JOIN users u "
                "USING (user_id) ORDER BY s.created_at").fetchall()
            how = conn.execute("SELECT details->>'how' FROM audit_log "
                               "WHERE action = 'console_logout'").fetchall()
        assert ends == [("alice", "relogin"), ("bob", None)]
        assert how == [("relogin",)]
        fresh(http)
        http.cookies.set("cogd_console", old, path="/ui")
        assert http.get("/ui/timeline", follow_redirects=False).status_code == 303


def test_head_allow_and_error_pages_of_the_console(settings: Settings, db_url: str) -> None:
    """HEAD answers as GET does (without a session: the login redirect); a 405 keeps its
    Allow header; a service's error on a /ui path is an HTML page (400 with what was wrong,
    503 with a fixed line), a crash a 500 page, each with the console's security headers."""
    from fastapi.testclient import TestClient

    from agent.errors import DatabaseError, InputError

    with console_app(settings, db_url) as (http, _, tokens):
        fresh(http)
        for path in ("/ui", "/ui/timeline", "/ui/health"):
            got = http.head(path, follow_redirects=False)
            assert got.status_code == 303, (path, got.status_code)
            assert got.headers["location"].startswith("/ui/login?next=/ui")
        assert http.head("/ui/login").status_code == 200
        login(http, tokens["alice"])
        page = http.head("/ui/timeline")
        assert page.status_code == 200 and page.content == b""
        assert page.headers["content-type"].startswith("text/html")
        wrong = http.post("/ui/timeline", data={})
        assert wrong.status_code == 405 and wrong.headers["allow"] == "GET, HEAD"
        assert wrong.headers["content-type"].startswith("text/html")

        app = http.app

        @app.get("/ui/test-bad-input")
        def bad_input() -> None:
            raise InputError("limit must be 1-500")

        @app.get("/ui/test-unavailable")
        def unavailable() -> None:
            raise DatabaseError("cannot connect to postgresql://cogd:hunter2@db/cogd")

        @app.get("/ui/test-crash")
        def crash() -> None:
            raise RuntimeError("a secret detail")

        bad = http.get("/ui/test-bad-input")
        assert bad.status_code == 400 and "limit must be 1-500" in bad.text
        down = http.get("/ui/test-unavailable")
        assert down.status_code == 503 and "cannot answer this now" in down.text
        assert "hunter2" not in down.text and "postgresql" not in down.text
        with TestClient(app, raise_server_exceptions=False) as raw:
            crashed = raw.get("/ui/test-crash")
        assert crashed.status_code == 500 and "internal error: RuntimeError" in crashed.text
        assert "a secret detail" not in crashed.text
        for got in (bad, down, crashed, wrong):
            assert got.headers["content-type"].startswith("text/html")
            assert got.headers["cache-control"] == "no-store"
            assert "script-src 'self'" in got.headers["content-security-policy"]
            assert got.headers["x-frame-options"] == "DENY"
