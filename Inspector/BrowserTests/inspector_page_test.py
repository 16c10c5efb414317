#!/usr/bin/env python3
"""Real-browser test of the Statehouse Inspector's page: headless Chromium, driven by Selenium.

Runs the demo program (a store of to-dos with a redacted password, a container, a redacted container) and opens the
inspector's page: the state tree shows a value the test set; an action dispatched from the test appears in the log
with its diff; keys such as `__proto__` are data; the filter hides the other actions; travelling to an earlier action shows that state; the store jumps
there and resumes; an export imported again replays to the same final state; the containers show their values; a page cut off longer than the log holds shows the store's state again. A
request without the token, with a foreign Host or with a foreign Origin is refused; the redacted password appears
neither in the page nor in any response. Then `timetrack serve --inspect`: a project another process adds appears in
the inspector's page with its diff.

Usage: inspector_page_test.py PATH_TO_DEMO PATH_TO_TIMETRACK [--screenshots DIRECTORY]
"""
import argparse
import http.client
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import urllib.request

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

SECRET = "hunter2-never-shown"


def browser():
    options = webdriver.ChromeOptions()
    for flag in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1200,800"):
        options.add_argument(flag)
    options.binary_location = "/usr/bin/chromium"
    return webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)


class Demo:
    """The demo program, driven through its standard input."""

    def __init__(self, path, *arguments):
        self.process = subprocess.Popen([path, *arguments], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        line = self.process.stdout.readline()
        if not line.startswith("url "):
            sys.exit(f"the demo did not start: {line!r}")
        self.url = line.split(" ", 1)[1].strip()

    def command(self, text):
        self.process.stdin.write(text + "\n")
        self.process.stdin.flush()
        while self.process.stdout.readline().strip() != "ok":
            pass

    def stop(self):
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()


def get(url):
    with urllib.request.urlopen(url, timeout=10) as response:
        return response.read().decode()


def status(url, path, headers):
    """The status of a raw GET to the server at `url`, with exactly `headers` (a Host among them)."""
    port = int(re.search(r":(\d+)/", url).group(1))
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    connection.putrequest("GET", path, skip_host=True, skip_accept_encoding=True)
    for name, value in headers.items():
        connection.putheader(name, value)
    connection.endheaders()
    code = connection.getresponse().status
    connection.close()
    return code


def wait(driver, condition, what, timeout=30):
    WebDriverWait(driver, timeout, poll_frequency=0.05).until(lambda _: condition(), message=what)


def log_rows(driver):
    """The texts of the log's rows: read in one script, since the page redraws the rows as events arrive."""
    return driver.execute_script("return [...document.querySelectorAll('#log li')].map((row) => row.textContent)")


def text(driver, element_id):
    return driver.execute_script(f"return document.getElementById('{element_id}').innerText")


def test_demo(demo_path, screenshots):
    demo = Demo(demo_path)
    driver = browser()
    try:
        url = demo.url
        driver.get(url)
        wait(driver, lambda: "app" in text(driver, "stores"), "the store's tab")
        wait(driver, lambda: text(driver, "connection") == "live", "the feed to connect")

        # An action from the test: in the log within moments, with its diff, and in the tree.
        started = time.time()
        demo.command("add Milk")
        wait(driver, lambda: any("add" in row for row in log_rows(driver)), "the action in the log")
        print(f"an action reached the page {1000 * (time.time() - started):.0f} ms after it was dispatched")
        wait(driver, lambda: '"Milk"' in text(driver, "tree"), "the value in the state tree")
        assert "todos[0]" in text(driver, "diff"), text(driver, "diff")
        demo.command("add Bread")
        demo.command("toggle 1")
        demo.command(f"password {SECRET}")
        demo.command("theme dark")
        wait(driver, lambda: len(log_rows(driver)) == 4, "four actions in the log")
        diff = text(driver, "diff")
        assert "‹redacted›" not in diff and diff, diff  # the password's change shows no diff: both sides are redacted
        wait(driver, lambda: "dark" in text(driver, "containers"), "the container's new value")
        assert "‹redacted›" in text(driver, "containers")

        # Keys are data, `__proto__` among them: shown in the tree, never a prototype of the page's objects.
        demo.command("label __proto__ a 1")
        demo.command("label __proto__ polluted 2")
        demo.command("label user new 7")
        wait(driver, lambda: "polluted" in text(driver, "tree") and "new" in text(driver, "tree"), "the labels")
        assert "__proto__" in text(driver, "tree"), text(driver, "tree")
        assert driver.execute_script("return ({}).polluted === undefined && !('new' in {})"), "Object.prototype changed"
        wait(driver, lambda: len(log_rows(driver)) == 7, "seven actions in the log")

        # The filter hides the other actions.
        driver.find_element(By.ID, "filter").send_keys("toggle")
        wait(driver, lambda: [row.split()[2] for row in log_rows(driver)] == ["toggle"], "only the toggle")
        driver.find_element(By.ID, "filter").clear()
        driver.execute_script("document.getElementById('filter').dispatchEvent(new Event('input'))")
        wait(driver, lambda: len(log_rows(driver)) == 7, "every action again")

        # Travel to the first action: the tree shows that state.
        driver.find_element(By.CSS_SELECTOR, '#log li[data-step="1"] button').click()
        wait(driver, lambda: "after step 1" in text(driver, "state-title"), "the first step")
        wait(driver, lambda: "Bread" not in text(driver, "tree"), "the state after step 1")
        assert "Milk" in text(driver, "tree")
        if screenshots:
            driver.save_screenshot(os.path.join(screenshots, "inspector.png"))

        # Jump the store there, then resume.
        driver.find_element(By.ID, "jump").click()
        wait(driver, lambda: any("travel" in row for row in log_rows(driver)), "the jump in the log")
        overview = json.loads(get(url + "api/stores/app"))
        assert [todo["title"] for todo in overview["state"]["todos"]] == ["Milk"], overview["state"]
        wait(driver, lambda: driver.find_element(By.ID, "resume").is_displayed(), "the resume button")
        driver.find_element(By.ID, "resume").click()
        wait(driver, lambda: len(json.loads(get(url + "api/stores/app"))["state"]["todos"]) == 2, "the live state back")

        # Export, then import: the replay ends in the store's state.
        exported = driver.execute_async_script(
            "const done = arguments[0]; fetch('api/stores/app/export').then((r) => r.text()).then(done);"
        )
        with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as file:
            file.write(exported)
        driver.find_element(By.ID, "import").send_keys(file.name)
        os.unlink(file.name)
        wait(driver, lambda: "app.replay" in text(driver, "stores"), "the replay's tab: " + text(driver, "message"))
        live = json.loads(get(url + "api/stores/app"))["state"]
        replayed = json.loads(get(url + "api/stores/app.replay"))["state"]
        # The jump and the resume are not actions: the replay ends where the actions led, which is the live state.
        assert replayed == live, (replayed, live)

        # Refusals: no token, a foreign Host, a foreign Origin.
        port = re.search(r":(\d+)/", url).group(1)
        token_path = "/" + url.rstrip("/").rsplit("/", 1)[1]
        host = {"Host": f"127.0.0.1:{port}"}
        assert status(url, "/", host) == 401
        assert status(url, "/api/overview", host) == 401
        assert status(url, token_path + "/api/overview", {"Host": f"attacker.example:{port}"}) == 421
        assert status(url, token_path + "/api/overview", {**host, "Origin": "http://attacker.example"}) == 403
        assert status(url, token_path + "/api/overview", host) == 200

        # The redacted password: not in the page, not in any response.
        texts = [driver.page_source, driver.find_element(By.TAG_NAME, "body").text]
        for path in ("api/overview", "api/stores/app", "api/stores/app/export", "api/stores/app.replay"):
            texts.append(get(url + path))
        for step in range(0, 8):
            try:
                texts.append(get(url + f"api/stores/app/states/{step}"))
            except urllib.error.HTTPError:
                pass
        feed = subprocess.run(
            ["curl", "-s", "-N", "--max-time", "2", url + "api/events?since=0"], capture_output=True, text=True
        ).stdout
        assert "event: entry" in feed, feed[:200]
        texts.append(feed)
        for response in texts:
            assert SECRET not in response and "initial-secret" not in response and "key-initial" not in response
        print("inspector page: every check passed")
    finally:
        driver.quit()
        demo.stop()


def test_gap(demo_path):
    """A page cut off for longer than the log holds (a log of 5, a page's buffer of 1) loads the store again rather
    than applying later diffs to a state it no longer has."""
    demo = Demo(demo_path, "5", "1")
    driver = browser()
    try:
        driver.get(demo.url)
        wait(driver, lambda: text(driver, "connection") == "live", "the feed to connect")
        # To-dos appended: a diff the page applies to a state it no longer has leaves holes in the list.
        for _ in range(6):
            demo.command("adds 50")
        server = lambda: json.loads(get(demo.url + "api/stores/app"))["state"]
        page = lambda: driver.execute_script("return view.latest")
        wait(driver, lambda: len(server()["todos"]) == 300, "the store's log to catch up")
        wait(driver, lambda: page() == server(), "the page to show the store's state")
        print("a page cut off longer than the log holds shows the store's state again")
    finally:
        driver.quit()
        demo.stop()


def test_timetrack(timetrack):
    directory = tempfile.mkdtemp()
    database = os.path.join(directory, "tracker.db")
    server = subprocess.Popen(
        [timetrack, "serve", "--port", "0", "--inspect", "--db", database], stdout=subprocess.PIPE, text=True
    )
    driver = browser()
    try:
        deadline = time.time() + 60
        url = None
        while time.time() < deadline and url is None:
            match = re.search(r"store at (http://127\.0\.0\.1:\d+/[0-9a-f]+/)", server.stdout.readline())
            url = match.group(1) if match else None
        assert url, "timetrack printed no inspector address"
        driver.get(url)
        wait(driver, lambda: "timetrack" in text(driver, "stores"), "the tracker's tab")
        wait(driver, lambda: text(driver, "connection") == "live", "the feed to connect")
        subprocess.run([timetrack, "add", "Writing", "--db", database], check=True, capture_output=True)
        wait(driver, lambda: '"Writing"' in text(driver, "tree"), "another process's project")
        wait(driver, lambda: "projects[0]" in text(driver, "diff"), "its diff")
        print("timetrack serve --inspect: another process's change shows with its diff")
    finally:
        driver.quit()
        server.terminate()
        server.wait()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("demo")
    parser.add_argument("timetrack")
    parser.add_argument("--screenshots")
    arguments = parser.parse_args()
    test_demo(arguments.demo, arguments.screenshots)
    test_gap(arguments.demo)
    test_timetrack(arguments.timetrack)


if __name__ == "__main__":
    main()
