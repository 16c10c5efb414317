#!/usr/bin/env python3
"""Real-browser test of timetrack's live page: headless Chromium, driven by Selenium.

Starts `timetrack serve` on a new database, opens the page in two browser windows, adds a project and starts it in
one, and checks that the other shows it appear and tick; stopping and deleting it in the second shows in the first; a
project added by another process (the CLI) shows in both; a name that is markup shows as text and runs nothing; a
duplicate name is refused with its message. Then what other web pages could send to the server, sent by hand: a
cross-origin form POST, a `no-cors` fetch, a DNS-rebinding page's reads and deletes, all refused, changing nothing.

Also: corrections in a project's history dialog, the week chart against `timetrack report`, the page driven by the
keyboard alone, axe-core's accessibility rules (no serious or critical violation), and a phone's width.

Usage: live_page_test.py PATH_TO_TIMETRACK [--screenshots DIRECTORY]   (writes the README's pictures there)
"""
import argparse
from datetime import datetime, timedelta
import http.client
import json
import os
import re
import sqlite3
import subprocess
import sys
import tempfile
import time

from axe_selenium_python import Axe
from selenium import webdriver
from selenium.common.exceptions import NoAlertPresentException
from selenium.webdriver.chrome.service import Service
from selenium.common.exceptions import StaleElementReferenceException
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import WebDriverWait

XSS = "<script>alert(1)</script>"


def browser():
    options = webdriver.ChromeOptions()
    for flag in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=900,600"):
        options.add_argument(flag)
    options.binary_location = "/usr/bin/chromium"
    return webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)


def start_server(timetrack, storage):
    """`timetrack serve` on a free port, on `storage` (`["--db", PATH]` or `["--database", URL]`); and its page's URL."""
    server = subprocess.Popen(
        [timetrack, "serve", "--port", "0", *storage], stdout=subprocess.PIPE, text=True
    )
    deadline = time.time() + 60
    while time.time() < deadline:
        line = server.stdout.readline()
        match = re.search(r"serving (http://127\.0\.0\.1:\d+/)", line)
        if match:
            return server, match.group(1)
    server.kill()
    sys.exit("the server did not start")


def row(driver, name):
    """The table row whose name cell shows exactly `name`, or None."""
    for candidate in driver.find_elements(By.CSS_SELECTOR, "#projects tr"):
        if candidate.find_element(By.CSS_SELECTOR, ".name").text == name:
            return candidate
    return None


def send(url, method, path, headers, body=None):
    """The status of a raw request to the server at `url`, with exactly `headers` (a Host among them)."""
    port = int(re.search(r":(\d+)/", url).group(1))
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    connection.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
    for name, value in headers.items():
        connection.putheader(name, value)
    data = body.encode() if body is not None else b""
    connection.putheader("Content-Length", str(len(data)))
    connection.endheaders(data)
    status = connection.getresponse().status
    connection.close()
    return status


def check_uninvited_requests(url):
    """What other pages could make a browser send: each is refused, and the project list does not change."""
    host = re.search(r"http://([^/]+)/", url).group(1)
    before = send(url, "GET", "/api/projects", {"Host": host})
    assert before == 200, before
    evil = "http://evil.example"
    form = send(url, "POST", "/api/projects", {"Host": host, "Origin": evil,
                "Content-Type": "application/x-www-form-urlencoded"}, "name=pwned")
    assert form == 403, f"cross-origin form POST answered {form}"
    # A browser that withholds Origin (a privacy setting) still cannot send JSON across origins without asking.
    no_cors = send(url, "POST", "/api/projects/1/start", {"Host": host, "Content-Type": "text/plain"})
    assert no_cors == 415, f"no-cors fetch answered {no_cors}"
    json_from_elsewhere = send(url, "POST", "/api/projects", {"Host": host, "Origin": evil,
                               "Content-Type": "application/json"}, json.dumps({"name": "pwned"}))
    assert json_from_elsewhere == 403, f"a JSON POST from another origin answered {json_from_elsewhere}"
    rebound = "attacker.example:" + host.split(":")[-1]
    for method, path in (("GET", "/api/projects"), ("DELETE", "/api/projects/1")):
        status = send(url, method, path, {"Host": rebound})
        assert status == 421, f"{method} {path} for Host {rebound} answered {status}"
    print("ok: a cross-origin form POST 403, a text/plain POST 415, JSON from another origin 403, a rebound Host 421")


def in_row(driver, name, action):
    """`action(row)` on the row named `name` (None if there is none), found again whenever the page re-rendered its
    rows meanwhile: every event redraws the table, so a row held across two calls may be gone."""
    for _ in range(100):
        try:
            found = row(driver, name)
            return action(found) if found is not None else None
        except StaleElementReferenceException:
            time.sleep(0.02)
    raise AssertionError(f"the row {name!r} kept being re-rendered")


def elapsed(driver, name):
    return in_row(driver, name, lambda found: found.find_element(By.CSS_SELECTOR, ".elapsed").text)


def row_class(driver, name):
    return in_row(driver, name, lambda found: found.get_attribute("class")) or ""


def click(driver, name, button):
    in_row(driver, name, lambda found: found.find_element(By.CSS_SELECTOR, "button." + button).click())


def press(driver, key, shift=False):
    """Ctrl (+ Shift) + key, with the focus off the name field (where Ctrl+Z edits the text)."""
    driver.execute_script("document.activeElement && document.activeElement.blur()")
    chord = ActionChains(driver).key_down(Keys.CONTROL)
    if shift:
        chord = chord.key_down(Keys.SHIFT)
    chord = chord.send_keys(key)
    if shift:
        chord = chord.key_up(Keys.SHIFT)
    chord.key_up(Keys.CONTROL).perform()


def wait_for(driver, condition, what, timeout=60):
    """Waits until `condition()` holds; a generous deadline, since what is sure to come can take seconds on a busy
    machine, and the wait ends as soon as it does."""
    return WebDriverWait(driver, timeout, ignored_exceptions=[StaleElementReferenceException]).until(
        lambda _: condition(), message=f"timed out waiting for {what}"
    )


def open_live(driver, url):
    """Opens the page at `url` and waits until its event stream is live."""
    driver.get(url)
    wait_for(driver, lambda: driver.find_element(By.ID, "connection").text == "live", "the event stream")


def add(driver, name):
    """Adds a project through the page's form."""
    driver.find_element(By.ID, "name").send_keys(name)
    driver.find_element(By.ID, "add-button").click()


def check_future_start_is_clamped(timetrack, database, driver):
    """A running activity that starts after the server's now (its clock was set back) adds nothing yet: the page
    shows what `timetrack list` shows, the finished hour, not the hour minus the gap."""
    subprocess.run([timetrack, "add", "Future", "--db", database], check=True, capture_output=True)
    with sqlite3.connect(database) as connection:
        (project,) = connection.execute("SELECT id FROM project WHERE name = 'Future'").fetchone()
        now = time.time()
        connection.execute("INSERT INTO activity (projectId, startedAt, stoppedAt) VALUES (?, ?, ?)",
                           (project, now - 7200, now - 3600))
        connection.execute("INSERT INTO activity (projectId, startedAt) VALUES (?, ?)", (project, now + 600))
    connection.close()
    wait_for(driver, lambda: "running" in row_class(driver, "Future"), "the future activity")
    listed = subprocess.run([timetrack, "list", "--db", database], check=True, capture_output=True, text=True).stdout
    assert re.search(r"Future\s+1:00:00", listed), listed
    wait_for(driver, lambda: elapsed(driver, "Future") == "1:00:00", "the page to show 1:00:00 as list does")
    subprocess.run([timetrack, "delete", "Future", "--db", database], check=True, capture_output=True)
    wait_for(driver, lambda: row(driver, "Future") is None, "the deletion")


def check_token_link(timetrack, directory, driver):
    """A server started with a token, opened by its link (`#token=…`): the page goes live, takes the token out of
    the address bar, and its changes carry it."""
    server, url = start_server(timetrack, ["--db", os.path.join(directory, "token.sqlite"), "--token", "a-token-of-16-or-more"])
    try:
        open_live(driver, url + "#token=a-token-of-16-or-more")
        assert "#token" not in driver.current_url, driver.current_url
        add(driver, "Behind a token")
        wait_for(driver, lambda: row(driver, "Behind a token") is not None, "the project added behind the token")
    finally:
        server.terminate()
        server.wait(timeout=10)


def set_value(driver, element_id, value):
    """Sets an input's value as typing would (a datetime-local field reads typed keys in the browser's locale)."""
    driver.execute_script(
        "const input = document.getElementById(arguments[0]); input.value = arguments[1];"
        "input.dispatchEvent(new Event('input', { bubbles: true }));", element_id, value)


def history_rows(driver):
    return driver.execute_script(
        "return [...document.querySelectorAll('#activities tr')].map(r => r.querySelector('.duration').textContent)")


def check_history(writer, watcher):
    """An activity added by hand in one window's history shows in the other's; an edit reaches both; an edit against
    the rules shows its message there and changes nothing."""
    for driver in (writer, watcher):
        click(driver, "Reading", "history")
        wait_for(driver, lambda: driver.find_element(By.ID, "history").is_displayed(), "the history dialog")
    # The browser's local time is the machine's, as Python reads it; one now, so that durations are whole.
    now = datetime.now().replace(microsecond=0)
    def local(hours_ago):
        return (now - timedelta(hours=hours_ago)).strftime("%Y-%m-%dT%H:%M:%S")
    set_value(writer, "activity-start", local(2))
    set_value(writer, "activity-stop", local(1))
    writer.find_element(By.ID, "activity-save").click()
    for driver in (writer, watcher):
        wait_for(driver, lambda: history_rows(driver) == ["1:00:00"], "the activity added by hand")
    writer.find_element(By.CSS_SELECTOR, "#activities button.edit").click()
    set_value(writer, "activity-stop", local(3))
    writer.find_element(By.ID, "activity-save").click()
    wait_for(writer, lambda: "stops after it starts" in writer.find_element(By.ID, "history-error").text, "the refusal")
    assert history_rows(watcher) == ["1:00:00"]
    set_value(writer, "activity-stop", local(1.5))
    writer.find_element(By.ID, "activity-save").click()
    for driver in (writer, watcher):
        wait_for(driver, lambda: history_rows(driver) == ["0:30:00"], "the edit in both windows")
    for driver in (writer, watcher):
        driver.find_element(By.ID, "history-close").click()


def check_week(timetrack, database, driver):
    """The week chart's bars are the day totals `timetrack report --week --json` gives in the browser's time zone."""
    zone = driver.execute_script("return Intl.DateTimeFormat().resolvedOptions().timeZone")
    printed = subprocess.run([timetrack, "report", "--week", "--json", "--tz", zone, "--db", database],
                             check=True, capture_output=True, text=True).stdout
    expected = {day["date"]: day["total"] for day in json.loads(printed)["days"]}
    bars = ("return Object.fromEntries([...document.querySelectorAll('#week-chart rect')]"
            ".map(bar => [bar.dataset.date, Number(bar.dataset.seconds)]))")
    wait_for(driver, lambda: driver.execute_script(bars) == expected, f"the week's bars to be {expected}")
    # The activity of check_history, two hours ago, falls in this week unless this is Monday before 2 a.m.
    if (datetime.now() - timedelta(hours=2)).isocalendar()[:2] == datetime.now().isocalendar()[:2]:
        assert sum(expected.values()) >= 1800, expected
    return expected


def check_accessibility(driver):
    """axe-core's rules, on the page and with the history dialog open: no violation of the serious or critical kind."""
    axe = Axe(driver)
    axe.inject()
    found = [(v["impact"], v["id"], [n["target"] for n in v["nodes"]]) for v in axe.run()["violations"]]
    click(driver, "Reading", "history")
    wait_for(driver, lambda: driver.find_element(By.ID, "history").is_displayed(), "the history dialog")
    found += [(v["impact"], v["id"], [n["target"] for n in v["nodes"]]) for v in axe.run()["violations"]]
    driver.find_element(By.ID, "history-close").click()
    grave = [violation for violation in found if violation[0] in ("serious", "critical")]
    assert not grave, grave
    return found


def check_keyboard(driver):
    """Add, start, stop and undo with the keyboard alone: Tab reaches every control, a key press acts, and the focus
    stays on the row's button when the change redraws the table."""
    def active(attribute):
        return driver.execute_script(f"return document.activeElement && document.activeElement.{attribute}")

    def press(*keys):
        ActionChains(driver).send_keys(*keys).perform()

    driver.execute_script("document.activeElement && document.activeElement.blur()")
    press(Keys.TAB)
    assert active("id") == "name", active("id")
    press("Keyboard", Keys.ENTER)
    wait_for(driver, lambda: row(driver, "Keyboard") is not None, "the project added from the keyboard")
    for _ in range(60):
        target = driver.execute_script(
            "const b = document.activeElement; const r = b && b.closest('#projects tr');"
            "return r && b.dataset.place === 'toggle' ? r.querySelector('.name').textContent : null")
        if target == "Keyboard":
            break
        press(Keys.TAB)
    else:
        raise AssertionError("Tab never reached the Start button of the new project")
    outline = driver.execute_script("return getComputedStyle(document.activeElement).outlineStyle")
    assert outline != "none", "the focused button shows no outline"
    press(Keys.ENTER)
    wait_for(driver, lambda: "running" in row_class(driver, "Keyboard"), "the start from the keyboard")
    wait_for(driver, lambda: active("textContent") == "Stop", "the focus to stay on the row's button, now Stop")
    press(Keys.ENTER)
    wait_for(driver, lambda: "stopped" in row_class(driver, "Keyboard"), "the stop from the keyboard")
    ActionChains(driver).key_down(Keys.CONTROL).send_keys("z").key_up(Keys.CONTROL).perform()
    wait_for(driver, lambda: "running" in row_class(driver, "Keyboard"), "the stop undone by Ctrl+Z")
    press(Keys.ENTER)
    wait_for(driver, lambda: "stopped" in row_class(driver, "Keyboard"), "the stop again")


def check_phone_width(driver):
    """At a phone's width (375 px) nothing scrolls sideways, and every row's buttons are on screen."""
    driver.set_window_size(375, 740)
    try:
        wait_for(driver, lambda: driver.execute_script("return window.innerWidth") <= 375, "the narrow window")
        wide = driver.execute_script("return document.documentElement.scrollWidth - window.innerWidth")
        assert wide <= 0, f"the page is {wide} px wider than the phone"
        off = driver.execute_script(
            "return [...document.querySelectorAll('#projects button')].filter(b => b.getBoundingClientRect().right > "
            "window.innerWidth).length")
        assert off == 0, f"{off} buttons lie past the right edge"
    finally:
        driver.set_window_size(900, 600)


def take_screenshots(timetrack, directory, driver, pictures):
    """The README's pictures, of a tracker with a week of sample activities: the page, a history, a phone."""
    database = os.path.join(directory, "pictures.sqlite")
    os.makedirs(pictures, exist_ok=True)
    def shoot(name):
        assert driver.save_screenshot(os.path.join(pictures, name)), f"could not write {name} in {pictures}"
    def run(*arguments):
        subprocess.run([timetrack, *arguments, "--db", database], check=True, capture_output=True)
    now = datetime.now()
    for name in ("Writing", "Reading", "Exercise"):
        run("add", name)
    for days_ago, name, hours in [(1, "Writing", 2.5), (1, "Reading", 1), (2, "Writing", 3), (3, "Exercise", 0.75),
                                  (4, "Writing", 1.5), (4, "Reading", 2), (5, "Exercise", 1)]:
        start = (now - timedelta(days=days_ago)).replace(hour=9, minute=0, second=0, microsecond=0)
        stop = start + timedelta(hours=hours)
        run("log", name, "--from", start.strftime("%Y-%m-%d %H:%M"), "--to", stop.strftime("%Y-%m-%d %H:%M"))
    run("start", "Writing")
    server, url = start_server(timetrack, ["--db", database])
    try:
        open_live(driver, url)
        wait_for(driver, lambda: len(driver.find_elements(By.CSS_SELECTOR, "#week-chart rect")) == 7, "the chart")
        time.sleep(1.2)
        driver.set_window_size(900, 1000)
        shoot("timetrack.png")
        click(driver, "Writing", "history")
        wait_for(driver, lambda: len(history_rows(driver)) >= 4, "the history")
        shoot("timetrack-history.png")
        driver.find_element(By.ID, "history-close").click()
        driver.set_window_size(375, 740)
        time.sleep(0.5)
        shoot("timetrack-phone.png")
    finally:
        driver.set_window_size(900, 600)
        server.terminate()
        server.wait(timeout=10)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("timetrack")
    parser.add_argument("--screenshots", help="a directory to write the README's pictures to")
    arguments = parser.parse_args()

    with tempfile.TemporaryDirectory() as directory:
        database = os.path.join(directory, "timetrack.sqlite")
        server, url = start_server(arguments.timetrack, ["--db", database])
        writer, watcher = browser(), browser()
        try:
            for driver in (writer, watcher):
                open_live(driver, url)

            # Added and started in one window...
            add(writer, "Writing")
            wait_for(writer, lambda: row(writer, "Writing") is not None, "the new project in the writer")
            click(writer, "Writing", "start")

            # ...it appears, running, in the other, and its timer ticks there.
            wait_for(watcher, lambda: row(watcher, "Writing") is not None, "the project in the other window")
            wait_for(watcher, lambda: "running" in row_class(watcher, "Writing"), "it to run")
            first = elapsed(watcher, "Writing")
            wait_for(watcher, lambda: elapsed(watcher, "Writing") != first, "the timer to tick")
            print(f"ok: added and started in one window, running and ticking in the other ({first} → later)")

            # Stopped and deleted from the other window: the first one follows.
            click(watcher, "Writing", "stop")
            wait_for(writer, lambda: "stopped" in row_class(writer, "Writing"), "the stop to arrive")
            stopped_at = elapsed(writer, "Writing")
            time.sleep(1.5)  # longer than a tick: a timer that still ran would have moved
            assert elapsed(writer, "Writing") == stopped_at, "a stopped timer ticked"
            click(watcher, "Writing", "delete")
            wait_for(writer, lambda: row(writer, "Writing") is None, "the deletion to arrive")
            print(f"ok: stopped (at {stopped_at}, no longer ticking) and deleted in the other window, and it followed")

            # The delete can be undone, and the project comes back everywhere with its time.
            wait_for(watcher, lambda: watcher.find_element(By.ID, "undo").is_displayed(), "the undo offer")
            watcher.find_element(By.ID, "undo-button").click()
            for driver in (writer, watcher):
                wait_for(driver, lambda: elapsed(driver, "Writing") == stopped_at, "the undone delete")
            click(watcher, "Writing", "delete")
            wait_for(writer, lambda: row(writer, "Writing") is None, "the deletion to arrive again")
            print(f"ok: the delete was undone in both windows ({stopped_at} kept), then deleted again")

            # Another process: the command line.
            subprocess.run([arguments.timetrack, "add", "Reading", "--db", database], check=True, capture_output=True)
            for driver in (writer, watcher):
                wait_for(driver, lambda: row(driver, "Reading") is not None, "the CLI's project")
            last = watcher.find_element(By.ID, "last-change")
            wait_for(watcher, lambda: last.is_displayed() and last.text.startswith("Last change: Add Reading, by timetrack add"),
                     "the page to say the CLI made the last change")
            print(f"ok: a project added by the CLI showed in both windows, which say so: {last.text!r}")

            # Undo and redo take back the last change, whoever made it (here the CLI), from a button or the keyboard,
            # and every window follows.
            undo_button = writer.find_element(By.ID, "undo-last")
            wait_for(writer, lambda: undo_button.text == "Undo Add Reading", "the undo button to name the CLI's add")
            undo_button.click()
            for driver in (writer, watcher):
                wait_for(driver, lambda: row(driver, "Reading") is None, "the undone add")
            press(watcher, "z", shift=True)
            for driver in (writer, watcher):
                wait_for(driver, lambda: row(driver, "Reading") is not None, "the redone add")
            press(watcher, "z")
            wait_for(writer, lambda: row(writer, "Reading") is None, "the add undone from the keyboard")
            press(writer, "z", shift=True)
            wait_for(watcher, lambda: row(watcher, "Reading") is not None, "the add redone from the keyboard")
            wait_for(watcher, lambda: watcher.find_element(By.ID, "redo-last").get_attribute("disabled") is not None,
                     "nothing left to redo")
            assert not watcher.find_element(By.ID, "last-change").is_displayed(), "this server's own change was named"
            print("ok: undo and redo, by button and by Ctrl+Z / Ctrl+Shift+Z, reached both windows")

            # Markup in a name is text.
            add(writer, XSS)
            wait_for(watcher, lambda: row(watcher, XSS) is not None, "the markup-named project")
            for driver in (writer, watcher):
                try:
                    driver.switch_to.alert
                    sys.exit("FAIL: a project name ran a script")
                except NoAlertPresentException:
                    pass
                assert driver.execute_script("return document.querySelectorAll('#projects script').length") == 0
            print("ok: the name <script>alert(1)</script> shows as text and runs nothing")

            # A refused action shows its message and changes nothing.
            add(writer, "READING")
            wait_for(writer, lambda: "already exists" in writer.find_element(By.ID, "error").text, "the error")
            assert len(watcher.find_elements(By.CSS_SELECTOR, "#projects tr")) == 2
            print("ok: a duplicate name is refused with a message")

            # Renamed in a dialog: a taken name is refused there and changes nothing; Enter renames, every window
            # follows, and the undo button names the rename and takes it back.
            click(writer, "Reading", "rename")
            field = writer.find_element(By.ID, "rename-name")
            wait_for(writer, lambda: field.is_displayed(), "the rename dialog")
            field.clear()
            field.send_keys(XSS.upper(), Keys.ENTER)
            wait_for(writer, lambda: "already exists" in writer.find_element(By.ID, "rename-error").text,
                     "the rename's refusal")
            assert field.is_displayed() and row(watcher, "Reading") is not None
            field.clear()
            field.send_keys("Reading list", Keys.ENTER)
            for driver in (writer, watcher):
                wait_for(driver, lambda: row(driver, "Reading list") is not None, "the renamed project")
            assert row(watcher, "Reading") is None and not field.is_displayed()
            undo_button = watcher.find_element(By.ID, "undo-last")
            wait_for(watcher, lambda: undo_button.text == "Undo Rename Reading", "the undo button to name the rename")
            undo_button.click()
            for driver in (writer, watcher):
                wait_for(driver, lambda: row(driver, "Reading") is not None, "the undone rename")
            print("ok: a rename from a dialog (a taken name refused in it) reached both windows, and was undone")

            check_history(writer, watcher)
            print("ok: an activity added by hand and edited in one window's history showed in the other's; a stop "
                  "before the start was refused with its message")
            week = check_week(arguments.timetrack, database, watcher)
            print(f"ok: the week chart's bars are what timetrack report --week --json gives: {week}")
            minor = check_accessibility(watcher)
            print(f"ok: axe-core finds no serious or critical violation (lesser ones: {minor or 'none'})")
            check_keyboard(writer)
            print("ok: added, started, stopped and undone with the keyboard alone; the focus stayed on the row's button")
            check_phone_width(watcher)
            print("ok: at 375 px wide nothing scrolls sideways and every button is on screen")

            check_future_start_is_clamped(arguments.timetrack, database, watcher)
            print("ok: an activity starting after the server's now shows what timetrack list shows (1:00:00)")

            check_token_link(arguments.timetrack, directory, watcher)
            open_live(watcher, url)
            print("ok: opened by its link, a server with a token goes live, hides the token and takes changes")

            count = len(watcher.find_elements(By.CSS_SELECTOR, "#projects tr"))
            check_uninvited_requests(url)
            time.sleep(0.5)  # a window: a change that got through would show in the page by now
            assert len(watcher.find_elements(By.CSS_SELECTOR, "#projects tr")) == count, "an uninvited request changed data"

            if arguments.screenshots:
                take_screenshots(arguments.timetrack, directory, writer, arguments.screenshots)
                print(f"pictures: {arguments.screenshots}")
        finally:
            writer.quit()
            watcher.quit()
            server.terminate()
            server.wait(timeout=10)
    print("browser test passed")


if __name__ == "__main__":
    main()
