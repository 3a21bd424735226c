"""The inspector (/inspector) in a real browser: Debian's headless Chromium
driven by Selenium through Debian's chromedriver (nothing downloaded).

A person searches, opens an entity, sees each field's provenance and the
competing value of a contradiction, corrects a field and sees the snapshot
and its provenance change, looks at the snapshot as of an earlier
observation, the graph (drawn by the vendored cytoscape) and the timeline;
signs in with a token when the gateway requires one, and never sees another
user's memory. Screenshots go to $NEOTOMA_ARTIFACTS (default
target/artifacts/inspector). The browser fixture is conftest's.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any, Iterator

import httpx2 as httpx
import psycopg
import pytest
from conftest import DATABASE, admin_dsn, create_token, new_user, single_database
from selenium import webdriver
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support import expected_conditions as ec
from selenium.webdriver.support.ui import Select, WebDriverWait

ARTIFACTS = Path(os.environ.get("NEOTOMA_ARTIFACTS", Path(__file__).resolve().parents[2] / "target" / "artifacts")) / "inspector"


def shot(driver: webdriver.Chrome, name: str) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    assert driver.save_screenshot(str(ARTIFACTS / f"{name}.png"))


def javascript_errors(driver: webdriver.Chrome) -> list[Any]:
    """Errors of the pages' scripts (not HTTP statuses the test asked for)."""
    return [e for e in driver.get_log("browser") if e["level"] == "SEVERE" and e.get("source") != "network"]


def seed(user: str) -> None:
    """Ada with two sources disagreeing on her name, a company she is part
    of, and an invoice with dates (timeline events)."""
    with psycopg.connect(admin_dsn(DATABASE), autocommit=True) as conn:
        conn.execute("SELECT set_config('neotoma.user_id', %s, false)", (user,))
        conn.execute("""SELECT neotoma.store('{"entities": [{"entity_type": "person", "name": "Ada Lovelace",
                        "email": "ada@example.com"}, {"entity_type": "company", "name": "Analytical Engines"}]}')""")
        conn.execute("""SELECT neotoma.store('{"entities": [{"entity_type": "person", "name": "Augusta Ada King",
                        "email": "ada@example.com"}]}')""")
        conn.execute("""SELECT neotoma.create_relationship(jsonb_build_object('relationship_type', 'PART_OF',
                        'source_entity_id', (SELECT id FROM neotoma.entities WHERE entity_type = 'person' AND user_id = %s),
                        'target_entity_id', (SELECT id FROM neotoma.entities WHERE entity_type = 'company' AND user_id = %s)))""",
                     (user, user))
        conn.execute("""SELECT neotoma.store('{"entities": [{"entity_type": "invoice", "invoice_number": "INV-7",
                        "invoice_date": "2025-03-04", "amount_due": 120, "currency": "EUR", "date_due": "2025-04-03"}]}')""")


def wait(driver: webdriver.Chrome) -> WebDriverWait:
    return WebDriverWait(driver, 20)


@single_database
def test_a_person_finds_inspects_and_corrects_an_entity(start_gateway: Any, browser: webdriver.Chrome) -> None:
    user = new_user()
    seed(user)
    g = start_gateway("--user-id", user)  # --no-auth: the pages open directly
    d = browser
    d.get(f"{g.base}/inspector")
    assert d.current_url.endswith("/inspector/overview")
    assert "Augusta Ada King" in d.find_element(By.CSS_SELECTOR, "ul.recent").text
    assert "operators" in d.find_element(By.TAG_NAME, "main").text  # no server metrics for a user
    shot(d, "00-overview")
    d.find_element(By.LINK_TEXT, "Entities").click()
    wait(d).until(ec.url_contains("/inspector/entities"))
    types = d.find_element(By.CSS_SELECTOR, "ul.types").text
    assert "person" in types and "invoice" in types
    shot(d, "01-entities")

    # Search, by keyboard: focus the search box, type, press Enter.
    box = d.find_element(By.ID, "search")
    box.send_keys("Augusta", Keys.ENTER)
    wait(d).until(ec.url_contains("search=Augusta"))
    rows = d.find_elements(By.CSS_SELECTOR, "table.entities tbody tr")
    assert len(rows) == 1 and "person" in rows[0].text
    rows[0].find_element(By.TAG_NAME, "a").click()
    wait(d).until(ec.presence_of_element_located((By.CSS_SELECTOR, "table.snapshot")))
    shot(d, "02-entity")

    # Each field: its value, where it came from, and the competing value.
    name = d.find_element(By.CSS_SELECTOR, "tr[data-field=name]")
    assert "Augusta Ada King" in name.find_element(By.CLASS_NAME, "value").text
    assert name.find_element(By.CLASS_NAME, "competing").text == "Ada Lovelace"
    assert "100" in name.text and "F3" in name.text
    source_link = name.find_element(By.CSS_SELECTOR, "a[href*='/inspector/sources/']").get_attribute("href")
    entity_url = d.current_url
    assert len(d.find_elements(By.CSS_SELECTOR, "ol.history li")) == 2
    assert "PART_OF Analytical Engines" in d.find_element(By.CSS_SELECTOR, "ul.relationships").text

    # A correction wins at once, with its own provenance (priority 1000).
    d.find_element(By.ID, "field").send_keys("name")
    d.find_element(By.ID, "value").send_keys("Ada King, Countess of Lovelace", Keys.ENTER)
    wait(d).until(ec.url_contains("corrected=name"))
    name = d.find_element(By.CSS_SELECTOR, "tr[data-field=name]")
    assert name.find_element(By.CLASS_NAME, "value").text == "Ada King, Countess of Lovelace"
    assert "1000" in name.text
    assert name.find_element(By.CSS_SELECTOR, "a").get_attribute("href") != source_link
    assert "Corrected name." in d.find_element(By.CSS_SELECTOR, "p.notice").text
    assert len(d.find_elements(By.CSS_SELECTOR, "ol.history li")) == 3
    shot(d, "03-corrected")
    with psycopg.connect(admin_dsn(DATABASE), autocommit=True) as conn:
        row = conn.execute("SELECT snapshot->>'name' FROM neotoma.entity_snapshots WHERE user_id = %s AND entity_type = 'person'",
                           (user,)).fetchone()
        assert row == ("Ada King, Countess of Lovelace",)
        assert conn.execute("SELECT (neotoma.verify()->>'ok')::boolean").fetchone() == (True,)

    # The snapshot as of the first observation: the first name again.
    d.find_elements(By.CSS_SELECTOR, "ol.history li a")[-1].click()
    wait(d).until(ec.url_contains("at="))
    name = d.find_element(By.CSS_SELECTOR, "tr[data-field=name]")
    assert name.find_element(By.CLASS_NAME, "value").text == "Ada Lovelace"
    shot(d, "04-as-of")
    # The date slider, by keyboard: one step later is the second source's name.
    slider = d.find_element(By.ID, "asof-slider")
    assert slider.get_attribute("value") == "0" and slider.get_attribute("max") == "2"
    slider.send_keys(Keys.ARROW_RIGHT)
    wait(d).until(lambda drv: "Augusta Ada King" in drv.find_element(By.CSS_SELECTOR, "tr[data-field=name] .value").text)
    assert d.find_element(By.ID, "asof-slider").get_attribute("value") == "1"

    # Valid time: roles stored with intervals get a second slider, over the
    # instants a value starts or stops holding in the world.
    with psycopg.connect(admin_dsn(DATABASE), autocommit=True) as conn:
        conn.execute("SELECT set_config('neotoma.user_id', %s, false)", (user,))
        conn.execute("""SELECT neotoma.store('{"entities": [{"entity_type": "person", "email": "ada@example.com",
                        "role": "translator"}], "valid_from": "1842-01-01", "valid_to": "1843-09-01"}')""")
        conn.execute("""SELECT neotoma.store('{"entities": [{"entity_type": "person", "email": "ada@example.com",
                        "role": "author"}], "valid_from": "1843-09-01"}')""")
    d.get(entity_url)
    assert d.find_element(By.CSS_SELECTOR, "tr[data-field=role] .value").text == "author"
    valid = d.find_element(By.ID, "valid-slider")
    assert valid.get_attribute("max") == "1" and valid.get_attribute("value") == "1"
    valid.send_keys(Keys.ARROW_LEFT)
    wait(d).until(ec.url_contains("valid_at="))
    wait(d).until(lambda drv: drv.find_element(By.CSS_SELECTOR, "tr[data-field=role] .value").text == "translator")
    assert "True in the world at 1842-01-01" in d.find_element(By.TAG_NAME, "main").text
    shot(d, "04b-valid-time")

    # A bad correction (no field) is refused with the action's error code,
    # and nothing changes.
    d.get(entity_url)
    d.execute_script("document.getElementById('field').removeAttribute('required')")
    d.find_element(By.ID, "value").send_keys("nobody", Keys.ENTER)
    error = wait(d).until(ec.presence_of_element_located((By.CSS_SELECTOR, "p.error")))
    assert "VALIDATION_ERROR" in error.text
    name = d.find_element(By.CSS_SELECTOR, "tr[data-field=name]")
    assert name.find_element(By.CLASS_NAME, "value").text == "Ada King, Countess of Lovelace"

    # The graph: both entities drawn, a click opens the other.
    d.get(entity_url)
    d.find_element(By.LINK_TEXT, "graph").click()
    wait(d).until(ec.url_contains("/inspector/graph/"))
    wait(d).until(lambda drv: drv.execute_script("return window.inspectorGraph && window.inspectorGraph.nodes().length"))
    labels = d.execute_script("return window.inspectorGraph.nodes().map(n => n.data('label'))")
    assert "Analytical Engines" in labels and len(labels) == 2
    assert d.execute_script("return window.inspectorGraph.edges().map(e => e.data('label'))") == ["PART_OF"]
    shot(d, "05-graph")
    # Filtered by another relationship type: the entity alone.
    d.find_element(By.ID, "type").send_keys("REFERS_TO", Keys.ENTER)
    wait(d).until(ec.url_contains("type=REFERS_TO"))
    wait(d).until(lambda drv: drv.execute_script("return window.inspectorGraph && window.inspectorGraph.nodes().length"))
    assert d.execute_script("return window.inspectorGraph.nodes().length") == 1
    d.back()
    wait(d).until(lambda drv: drv.execute_script("return window.inspectorGraph && window.inspectorGraph.nodes().length == 2"))
    company = d.execute_script("return window.inspectorGraph.nodes().filter(n => !n.hasClass('center'))[0].id()")
    d.execute_script("window.inspectorGraph.getElementById(arguments[0]).emit('tap')", company)
    wait(d).until(ec.url_contains(company))
    assert "Analytical Engines" in d.find_element(By.TAG_NAME, "h1").text

    # The timeline: the invoice's events by month, newest first, and
    # where Ada's roles started and ended in the world.
    d.find_element(By.LINK_TEXT, "Timeline").click()
    wait(d).until(ec.url_contains("/inspector/timeline"))
    months = [h.text for h in d.find_elements(By.CSS_SELECTOR, "main h2")]
    assert months == ["2025-04", "2025-03", "1843-09", "1842-01"]
    shot(d, "06-timeline")
    d.find_element(By.ID, "event_type").send_keys("InvoiceDue", Keys.ENTER)
    wait(d).until(ec.url_contains("event_type=InvoiceDue"))
    assert [h.text for h in d.find_elements(By.CSS_SELECTOR, "main h2")] == ["2025-04"]

    # The sources, and the page of the first observation's.
    d.find_element(By.LINK_TEXT, "Sources").click()
    wait(d).until(ec.url_contains("/inspector/sources"))
    listed = [a.get_attribute("href") for a in d.find_elements(By.CSS_SELECTOR, "table.sources a")]
    assert source_link in listed
    d.get(source_link)
    assert "structured" in d.find_element(By.CSS_SELECTOR, "table.source").text
    runs = d.find_elements(By.CSS_SELECTOR, "table.runs tbody tr")
    assert len(runs) == 1 and "completed" in runs[0].text
    assert javascript_errors(d) == []


@single_database
def test_sign_in_and_isolation(start_gateway: Any, browser: webdriver.Chrome) -> None:
    alice, bob = new_user(), new_user()
    seed(alice)
    with psycopg.connect(admin_dsn(DATABASE), autocommit=True) as conn:
        conn.execute("SELECT set_config('neotoma.user_id', %s, false)", (bob,))
        conn.execute("""SELECT neotoma.store('{"entities": [{"entity_type": "person", "name": "Bob Secret"}]}')""")
        bobs = conn.execute("SELECT id FROM neotoma.entities WHERE user_id = %s", (bob,)).fetchone()[0]
    g = start_gateway(auth=True)

    # No page without signing in, from a browser or anything else.
    for path in ["/inspector/entities", f"/inspector/entities/{bobs}", "/inspector/timeline",
                 f"/inspector/graph/{bobs}", "/inspector/sources/x"]:
        r = httpx.get(g.base + path, follow_redirects=False)
        assert r.status_code == 303 and r.headers["location"] == "/inspector/login", path
    r = httpx.post(f"{g.base}/inspector/entities/{bobs}/correct", data={"field": "name", "value": "x"})
    assert r.status_code == 303 and r.headers["location"] == "/inspector/login"

    d = browser
    d.get(f"{g.base}/inspector/entities")
    assert d.current_url.endswith("/inspector/login")
    d.find_element(By.ID, "token").send_keys("ntm_wrong", Keys.ENTER)
    error = wait(d).until(ec.presence_of_element_located((By.CSS_SELECTOR, "p.error")))
    assert "not right" in error.text
    d.find_element(By.ID, "token").send_keys(create_token(alice), Keys.ENTER)
    wait(d).until(ec.url_contains("/inspector/overview"))
    d.get(f"{g.base}/inspector/entities")
    shot(d, "07-signed-in")
    body = d.find_element(By.TAG_NAME, "main").text
    assert "Augusta Ada King" in body and "Bob Secret" not in body
    d.find_element(By.ID, "search").send_keys("Bob Secret", Keys.ENTER)
    wait(d).until(ec.url_contains("search="))
    assert d.find_elements(By.CSS_SELECTOR, "table.entities tbody tr") == []
    # Bob's entity by its id: not found for Alice.
    d.get(f"{g.base}/inspector/entities/{bobs}")
    assert "ENTITY_NOT_FOUND" in d.find_element(By.CSS_SELECTOR, "p.error").text
    d.get(f"{g.base}/inspector/graph/{bobs}")
    assert "Bob Secret" not in d.page_source
    # Filtering by type, with counts.
    d.get(f"{g.base}/inspector/entities")
    Select(d.find_element(By.ID, "type")).select_by_value("company")
    d.find_element(By.CSS_SELECTOR, "form.search button").click()
    wait(d).until(ec.url_contains("type=company"))
    rows = d.find_elements(By.CSS_SELECTOR, "table.entities tbody tr")
    assert len(rows) == 1 and "Analytical Engines" in rows[0].text
    assert re.search(r"company\s+1", d.find_element(By.CSS_SELECTOR, "ul.types").text)

    # Signing out ends the session: the cookie no longer opens pages.
    cookie = d.get_cookie("neotoma_inspector")
    assert cookie and cookie["httpOnly"] and cookie["sameSite"] == "Strict"
    d.find_element(By.CSS_SELECTOR, "header form button").click()
    wait(d).until(ec.url_contains("/inspector/login"))
    r = httpx.get(f"{g.base}/inspector/entities", cookies={"neotoma_inspector": cookie["value"]}, follow_redirects=False)
    assert r.status_code == 303
    # A write posted from another site is refused even with a session.
    d.find_element(By.ID, "token").send_keys(create_token(alice), Keys.ENTER)
    wait(d).until(ec.url_contains("/inspector/overview"))
    d.get(f"{g.base}/inspector/entities")
    session = d.get_cookie("neotoma_inspector")["value"]
    ada = d.find_element(By.CSS_SELECTOR, "table.entities tbody a").get_attribute("href").rsplit("/", 1)[1]
    r = httpx.post(f"{g.base}/inspector/entities/{ada}/correct", cookies={"neotoma_inspector": session},
                   headers={"origin": "http://evil.example"}, data={"entity_type": "person", "field": "name", "value": "pwned"})
    assert r.status_code == 403
    assert javascript_errors(d) == []


@single_database
def test_schema_promotion_merge_delete_and_restore(start_gateway: Any, browser: webdriver.Chrome) -> None:
    user = new_user()
    with psycopg.connect(admin_dsn(DATABASE), autocommit=True) as conn:
        conn.execute("SELECT set_config('neotoma.user_id', %s, false)", (user,))
        conn.execute("""SELECT neotoma.store('{"entities": [{"entity_type": "person", "name": "Grace Hopper",
                        "nickname": "Amazing Grace"}, {"entity_type": "person", "name": "Alan Turing", "nickname": "Prof"},
                        {"entity_type": "person", "name": "G. Hopper"}]}')""")
        conn.execute("""SELECT neotoma.store('{"workspace": "work", "entities": [{"entity_type": "person", "name": "Ada at work"}]}')""")
        ids = dict(conn.execute("SELECT snapshot->>'name', entity_id FROM neotoma.entity_snapshots WHERE user_id = %s", (user,)).fetchall())
    g = start_gateway("--user-id", user)
    d = browser

    # A stored file opens through its signed URL from its source page.
    with psycopg.connect(admin_dsn(DATABASE), autocommit=True) as conn:
        conn.execute("SELECT set_config('neotoma.user_id', %s, false)", (user,))
        stored = conn.execute("""SELECT neotoma.store(jsonb_build_object('file_content', 'aGVsbG8gaW5zcGVjdG9y',
                                  'mime_type', 'text/plain', 'original_filename', 'hello.txt'))->>'source_id'""").fetchone()[0]
    d.get(f"{g.base}/inspector/sources")
    assert "hello.txt" in d.find_element(By.CSS_SELECTOR, "table.sources").text
    d.get(f"{g.base}/inspector/sources/{stored}")
    file_url = d.find_element(By.LINK_TEXT, "Open the file").get_attribute("href")
    assert httpx.get(file_url).content == b"hello inspector"

    # Workspaces: the default one in context, another chosen by its name.
    d.get(f"{g.base}/inspector/entities")
    assert "Ada at work" not in d.find_element(By.CSS_SELECTOR, "table.entities").text
    Select(d.find_element(By.ID, "workspace")).select_by_value("work")
    d.find_element(By.CSS_SELECTOR, "form.search button").click()
    wait(d).until(ec.url_contains("workspace=work"))
    names = [r.text for r in d.find_elements(By.CSS_SELECTOR, "table.entities tbody tr")]
    assert len(names) == 1 and "Ada at work" in names[0]

    # A field stored outside the schema waits for promotion; one click
    # promotes it into the user's schema and the snapshots gain it.
    d.get(f"{g.base}/inspector/schema")
    row = d.find_element(By.CSS_SELECTOR, "table.candidates tr[data-field=nickname]")
    assert "2" in row.text and "Amazing Grace" in row.text
    shot(d, "08-schema")
    row.find_element(By.TAG_NAME, "button").click()
    wait(d).until(ec.url_contains("promoted=nickname"))
    assert d.find_elements(By.CSS_SELECTOR, "table.candidates tr[data-field=nickname]") == []
    d.get(f"{g.base}/inspector/entities/{ids['Grace Hopper']}")
    assert d.find_element(By.CSS_SELECTOR, "tr[data-field=nickname] .value").text == "Amazing Grace"

    # Merge the duplicate into Grace: its observations count for her.
    d.find_element(By.ID, "from").send_keys(ids["G. Hopper"], Keys.ENTER)
    notice = wait(d).until(ec.presence_of_element_located((By.CSS_SELECTOR, "p.notice")))
    assert notice.text == "Merged."
    assert "G. Hopper" in d.find_element(By.CSS_SELECTOR, "ol.history").text

    # Delete hides Alan from the agents' reads; restore brings him back.
    d.get(f"{g.base}/inspector/entities/{ids['Alan Turing']}")
    d.find_element(By.CSS_SELECTOR, "form[action$='/delete'] button").click()
    wait(d).until(ec.presence_of_element_located((By.CSS_SELECTOR, "p.error")))
    assert "Deleted at" in d.find_element(By.CSS_SELECTOR, "p.error").text
    d.get(f"{g.base}/inspector/entities?search=Turing")
    assert d.find_elements(By.CSS_SELECTOR, "table.entities tbody tr") == []
    d.get(f"{g.base}/inspector/entities/{ids['Alan Turing']}")
    d.find_element(By.CSS_SELECTOR, "form[action$='/restore'] button").click()
    wait(d).until(ec.presence_of_element_located((By.CSS_SELECTOR, "p.notice")))
    assert d.find_elements(By.CSS_SELECTOR, "p.error") == []
    d.get(f"{g.base}/inspector/entities?search=Turing")
    assert len(d.find_elements(By.CSS_SELECTOR, "table.entities tbody tr")) == 1
    with psycopg.connect(admin_dsn(DATABASE), autocommit=True) as conn:
        assert conn.execute("SELECT (neotoma.verify()->>'ok')::boolean").fetchone() == (True,)
    assert javascript_errors(d) == []

