#!/usr/bin/env python3
"""Real-browser test of timetrack's live page: headless Chromium, driven by Selenium.

Starts `timetrack serve` on a new database, opens the page in two browser windows, adds a project and starts it in
one, and checks that the other shows it appear and tick; stopping and deleting it in the second shows in the first; a
project added by another process (the CLI) shows in both; a name that is markup shows as text and runs nothing; a
duplicate name is refused with its message.

Usage: live_page_test.py PATH_TO_TIMETRACK [--screenshot FILE.png]
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile
import time

from selenium import webdriver
from selenium.common.exceptions import NoAlertPresentException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

XSS = "<script>alert(1)</script>"


def browser():
    options = webdriver.ChromeOptions()
    for flag in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=900,600"):
        options.add_argument(flag)
    options.binary_location = "/usr/bin/chromium"
    return webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)


def start_server(timetrack, database):
    server = subprocess.Popen(
        [timetrack, "serve", "--port", "0", "--db", database], stdout=subprocess.PIPE, text=True
    )
    deadline = time.time() + 30
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


def wait_for(driver, condition, what, timeout=5):
    return WebDriverWait(driver, timeout).until(lambda _: condition(), message=f"timed out waiting for {what}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("timetrack")
    parser.add_argument("--screenshot")
    arguments = parser.parse_args()

    with tempfile.TemporaryDirectory() as directory:
        database = os.path.join(directory, "timetrack.sqlite")
        server, url = start_server(arguments.timetrack, database)
        writer, watcher = browser(), browser()
        try:
            for driver in (writer, watcher):
                driver.get(url)
                wait_for(driver, lambda: driver.find_element(By.ID, "connection").text == "live", "the event stream")

            # Added and started in one window...
            writer.find_element(By.ID, "name").send_keys("Writing")
            writer.find_element(By.ID, "add-button").click()
            wait_for(writer, lambda: row(writer, "Writing") is not None, "the new project in the writer")
            row(writer, "Writing").find_element(By.CSS_SELECTOR, "button.start").click()

            # ...it appears, running, in the other, and its timer ticks there.
            wait_for(watcher, lambda: row(watcher, "Writing") is not None, "the project in the other window")
            wait_for(watcher, lambda: "running" in row(watcher, "Writing").get_attribute("class"), "it to run")
            first = row(watcher, "Writing").find_element(By.CSS_SELECTOR, ".elapsed").text
            wait_for(
                watcher,
                lambda: row(watcher, "Writing").find_element(By.CSS_SELECTOR, ".elapsed").text != first,
                "the timer to tick",
            )
            print(f"ok: added and started in one window, running and ticking in the other ({first} → later)")

            # Stopped and deleted from the other window: the first one follows.
            row(watcher, "Writing").find_element(By.CSS_SELECTOR, "button.stop").click()
            wait_for(writer, lambda: "stopped" in row(writer, "Writing").get_attribute("class"), "the stop to arrive")
            stopped_at = row(writer, "Writing").find_element(By.CSS_SELECTOR, ".elapsed").text
            time.sleep(1.5)
            assert row(writer, "Writing").find_element(By.CSS_SELECTOR, ".elapsed").text == stopped_at, "a stopped timer ticked"
            row(watcher, "Writing").find_element(By.CSS_SELECTOR, "button.delete").click()
            wait_for(writer, lambda: row(writer, "Writing") is None, "the deletion to arrive")
            print(f"ok: stopped (at {stopped_at}, no longer ticking) and deleted in the other window, and it followed")

            # Another process: the command line.
            subprocess.run([arguments.timetrack, "add", "Reading", "--db", database], check=True, capture_output=True)
            for driver in (writer, watcher):
                wait_for(driver, lambda: row(driver, "Reading") is not None, "the CLI's project")
            print("ok: a project added by the CLI showed in both windows")

            # Markup in a name is text.
            writer.find_element(By.ID, "name").send_keys(XSS)
            writer.find_element(By.ID, "add-button").click()
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
            writer.find_element(By.ID, "name").send_keys("READING")
            writer.find_element(By.ID, "add-button").click()
            wait_for(writer, lambda: "already exists" in writer.find_element(By.ID, "error").text, "the error")
            assert len(watcher.find_elements(By.CSS_SELECTOR, "#projects tr")) == 2
            print("ok: a duplicate name is refused with a message")

            if arguments.screenshot:
                subprocess.run([arguments.timetrack, "add", "Writing", "--db", database], check=True, capture_output=True)
                subprocess.run([arguments.timetrack, "start", "Writing", "--db", database], check=True, capture_output=True)
                writer.refresh()
                wait_for(writer, lambda: row(writer, "Writing") is not None, "the page")
                time.sleep(1.2)
                writer.save_screenshot(arguments.screenshot)
                print(f"screenshot: {arguments.screenshot}")
        finally:
            writer.quit()
            watcher.quit()
            server.terminate()
            server.wait(timeout=10)
    print("browser test passed")


if __name__ == "__main__":
    main()
