#!/usr/bin/env python3
"""Measures timetrack as a user meets it, each number beside a baseline taken in the same run.

1. Action → page: the time from sending an action to the moment an open page's event stream carries its effect,
   over 200 actions (median, p99), against the plain round trip of a request to the same server.
   a. through the page's own server;  b. written by another process (a second server on the same database).
2. CLI → views: `timetrack add` run as a separate process, to the moment an open page and a running `timetrack watch`
   show the project, over 200 adds with random pauses, against the CLI's own run time (start to exit).
3. Idle wake-ups: context switches per second of an idle `serve` (one page open) and an idle `watch` (output to a
   pipe), over 60 s, summed over all their threads (/proc/PID/task/*/status).
4. `timetrack list` on 1,000 projects with 100,000 activities, against the sqlite3 shell running the same query.
5. The server's memory (RSS) with 100 open pages, against the same server with none.
6. Fan-out: an action's round trip on 1,000 projects with 0, 10 and 100 open pages (each change is encoded once).
7. Lock stall: `GET /api/projects` while another process holds the database's write lock and 8 POSTs wait for it,
   against the same GETs with the database free.

Usage: measure.py PATH_TO_TIMETRACK [--only SECTION]   (build it with -c release first; SECTION is one of latency,
       cli, idle, memory, list, fan-out, lock: one section alone, for comparing with an older build)
"""
import http.client
import json
import os
import random
import re
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time

ACTIONS = 200


def start_server(timetrack, database, *options):
    server = subprocess.Popen([timetrack, "serve", "--port", "0", "--db", database, *options], stdout=subprocess.PIPE,
                              text=True)
    while True:
        match = re.search(r"serving http://127\.0\.0\.1:(\d+)/", server.stdout.readline())
        if match:
            return server, int(match.group(1))


class Page:
    """An open page: a raw connection to the event stream."""

    def __init__(self, port):
        self.socket = socket.create_connection(("127.0.0.1", port))
        self.socket.sendall(b"GET /api/events HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n")
        self.buffer = b""

    def wait_for(self, needle, timeout=10):
        """Reads events until one contains `needle`; returns when it arrived."""
        deadline = time.perf_counter() + timeout
        while True:
            while b"\n\n" in self.buffer:
                event, self.buffer = self.buffer.split(b"\n\n", 1)
                if needle in event:
                    return time.perf_counter()
            self.socket.settimeout(max(0.001, deadline - time.perf_counter()))
            chunk = self.socket.recv(65536)
            if not chunk:
                raise RuntimeError("stream closed")
            self.buffer += chunk


def request(port, method, path, body=None):
    connection = http.client.HTTPConnection("127.0.0.1", port)
    connection.request(method, path, body=json.dumps(body) if body is not None else None,
                       headers={"Content-Type": "application/json"})
    response = connection.getresponse()
    data = response.read()
    connection.close()
    return response.status, data


def percentile(values, fraction):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(fraction * (len(ordered) - 1))))]


def summary(values):
    return f"median {statistics.median(values) * 1000:.2f} ms, p99 {percentile(values, 0.99) * 1000:.2f} ms"


def action_latency(port_to_act, port_to_watch, label):
    page = Page(port_to_watch)
    page.wait_for(b"projects")
    latencies, round_trips = [], []
    for index in range(ACTIONS):
        # A random pause, so that actions land at every phase of the other process's polling, not just after a poll.
        time.sleep(random.uniform(0, 0.3))
        name = f"{label}-{index}-{random.randrange(1 << 30)}"
        sent = time.perf_counter()
        status, _ = request(port_to_act, "POST", "/api/projects", {"name": name})
        answered = time.perf_counter()
        assert status == 201, status
        arrived = page.wait_for(json.dumps(name).encode())
        latencies.append(arrived - sent)
        round_trips.append(answered - sent)
    page.socket.close()
    return latencies, round_trips


def drain(page):
    """Reads a page's stream until it closes, as a browser does, so that the server never waits for it."""
    def read():
        try:
            while page.socket.recv(1 << 20):
                pass
        except OSError:
            pass
    threading.Thread(target=read, daemon=True).start()


def fan_out(timetrack, database):
    server, port = start_server(timetrack, database)
    try:
        for count in (0, 10, 100):
            pages = [Page(port) for _ in range(count)]
            for page in pages:
                page.wait_for(b"projects")
                drain(page)
            round_trips = []
            for index in range(30):
                name = f"fan-{count}-{index}"
                sent = time.perf_counter()
                status, _ = request(port, "POST", "/api/projects", {"name": name})
                round_trips.append(time.perf_counter() - sent)
                assert status == 201, status
            print(f"  {count:3d} open pages: action round trip {summary(round_trips)}")
            for page in pages:
                page.socket.close()
    finally:
        server.terminate()
        server.wait()


def lock_stall(timetrack, database):
    server, port = start_server(timetrack, database, "--lock-timeout", "120")
    try:
        def gets():
            times = []
            for _ in range(100):
                sent = time.perf_counter()
                status, _ = request(port, "GET", "/api/projects")
                times.append(time.perf_counter() - sent)
                assert status == 200, status
            return times
        free = gets()
        holder = sqlite3.connect(database, isolation_level=None)
        holder.execute("BEGIN IMMEDIATE")
        writers = [threading.Thread(target=request, args=(port, "POST", "/api/projects", {"name": f"waiting {i}"}))
                   for i in range(8)]
        for writer in writers:
            writer.start()
        time.sleep(0.5)  # the writes are queued by now
        locked = gets()
        holder.execute("ROLLBACK")
        holder.close()
        for writer in writers:
            writer.join()
        print(f"  free database:               {summary(free)}")
        print(f"  locked, 8 writes waiting:     {summary(locked)} (x{statistics.median(locked) / statistics.median(free):.2f} "
              "of free at the median)")
    finally:
        server.terminate()
        server.wait()


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as status:
        return int(next(line for line in status if line.startswith("VmRSS:")).split()[1])


def seed(database, projects=1000, activities=100_000):
    connection = sqlite3.connect(database)
    now = time.time()
    connection.executemany(
        "INSERT INTO project (id, name, nameKey, created) VALUES (?, ?, ?, ?)",
        [(i, f"Project {i}", f"project {i}", now) for i in range(1, projects + 1)],
    )
    connection.executemany(
        "INSERT INTO activity (projectId, startedAt, stoppedAt) VALUES (?, ?, ?)",
        [(1 + i % projects, now - 3600 - i, now - i) for i in range(activities)],
    )
    connection.commit()
    connection.close()


def timed(command, runs=7):
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run(command, check=True, capture_output=True)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def context_switches(pid):
    """Voluntary and involuntary context switches of every thread of `pid` so far."""
    total = 0
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{task}/status") as status:
                total += sum(int(line.split()[1]) for line in status
                             if line.startswith(("voluntary_ctxt_switches:", "nonvoluntary_ctxt_switches:")))
        except FileNotFoundError:  # a thread that ended meanwhile
            pass
    return total


def idle_wakeups(timetrack, database, seconds=60):
    """Context switches per second of an idle `serve` with one page open, and of an idle `watch`."""
    server, port = start_server(timetrack, database)
    watcher = subprocess.Popen([timetrack, "watch", "--db", database], stdout=subprocess.PIPE)
    threading.Thread(target=lambda: watcher.stdout.read(), daemon=True).start()
    try:
        page = Page(port)
        page.wait_for(b"projects")
        drain(page)
        time.sleep(5)  # both settle: the page connected, the first table printed
        before = {name: context_switches(process.pid) for name, process in (("serve", server), ("watch", watcher))}
        time.sleep(seconds)
        for name, process in (("serve", server), ("watch", watcher)):
            rate = (context_switches(process.pid) - before[name]) / seconds
            print(f"  idle {name}: {rate:.2f} context switches per second over {seconds} s")
        page.socket.close()
    finally:
        for process in (server, watcher):
            process.terminate()
            process.wait()


def cli_latency(timetrack, database):
    """`timetrack add` in a process of its own → an open page and a running `watch`."""
    server, port = start_server(timetrack, database)
    watcher = subprocess.Popen([timetrack, "watch", "--db", database], stdout=subprocess.PIPE, text=True)
    shown, pending, lock = {}, set(), threading.Lock()

    def read_watch():
        for line in watcher.stdout:
            arrived = time.perf_counter()
            with lock:
                for name in [name for name in pending if name in line]:
                    shown[name] = arrived
                    pending.discard(name)

    threading.Thread(target=read_watch, daemon=True).start()
    try:
        page = Page(port)
        page.wait_for(b"projects")
        to_page, to_watch, runs = [], [], []
        for index in range(ACTIONS):
            time.sleep(random.uniform(0, 0.3))
            name = f"cli-{index}-{random.randrange(1 << 30)}"
            with lock:
                pending.add(name)
            started = time.perf_counter()
            subprocess.run([timetrack, "add", name, "--db", database], check=True, capture_output=True)
            runs.append(time.perf_counter() - started)
            to_page.append(page.wait_for(json.dumps(name).encode()) - started)
            deadline = time.perf_counter() + 10
            while time.perf_counter() < deadline:
                with lock:
                    if name in shown:
                        to_watch.append(shown[name] - started)
                        break
                time.sleep(0.0005)
        print(f"CLI add → open page ({ACTIONS} adds):   {summary(to_page)}")
        print(f"CLI add → watch ({ACTIONS} adds):       {summary(to_watch)}")
        print(f"  baseline, the CLI's own run (start to exit): {summary(runs)}")
        page.socket.close()
    finally:
        for process in (server, watcher):
            process.terminate()
            process.wait()


def main():
    timetrack = sys.argv[1]
    only = sys.argv[3] if sys.argv[2:3] == ["--only"] else None

    def runs(section):
        return only is None or only == section

    with tempfile.TemporaryDirectory() as directory:
        database = os.path.join(directory, "timetrack.sqlite")
        subprocess.run([timetrack, "list", "--db", database], check=True, capture_output=True)
        if runs("latency") or runs("memory"):
            server, port = start_server(timetrack, database)
            other, other_port = start_server(timetrack, database)
            try:
                if runs("latency"):
                    latencies, round_trips = action_latency(port, port, "own")
                    print(f"action → page, same server ({ACTIONS} actions): {summary(latencies)}")
                    print(f"  baseline, the request's own round trip:        {summary(round_trips)}")
                    latencies, round_trips = action_latency(other_port, port, "other")
                    print(f"action → page, another process ({ACTIONS} actions): {summary(latencies)}")
                    print(f"  baseline, the request's own round trip:           {summary(round_trips)}")
                if runs("memory"):
                    idle = rss_kib(server.pid)
                    pages = [Page(port) for _ in range(100)]
                    for page in pages:
                        page.wait_for(b"projects")
                    with_pages = rss_kib(server.pid)
                    print(f"server memory: {idle / 1024:.1f} MiB with no page, {with_pages / 1024:.1f} MiB with 100 "
                          f"open pages ({(with_pages - idle) / 100:.0f} KiB per page)")
                    for page in pages:
                        page.socket.close()
            finally:
                server.terminate()
                other.terminate()
                server.wait()
                other.wait()
        if runs("cli"):
            cli_latency(timetrack, database)
        if runs("idle"):
            print("idle wake-ups:")
            idle_wakeups(timetrack, database)

        big = os.path.join(directory, "big.sqlite")
        if runs("list") or runs("fan-out") or runs("lock"):
            subprocess.run([timetrack, "list", "--db", big], check=True, capture_output=True)
            seed(big)
        if runs("list"):
            query = """SELECT project.id, project.name, COALESCE(SUM(activity.stoppedAt - activity.startedAt), 0),
                       MAX(CASE WHEN activity.stoppedAt IS NULL THEN activity.startedAt END)
                       FROM project LEFT JOIN activity ON activity.projectId = project.id
                       GROUP BY project.id ORDER BY project.nameKey, project.id"""
            listing = timed([timetrack, "list", "--db", big])
            listing_json = timed([timetrack, "list", "--json", "--db", big])
            baseline = timed(["sqlite3", big, query])
            print(f"list, 1,000 projects / 100,000 activities: {listing * 1000:.0f} ms (--json "
                  f"{listing_json * 1000:.0f} ms); sqlite3 shell, same query: {baseline * 1000:.0f} ms; "
                  f"ratio {listing / baseline:.1f}x")
        if runs("fan-out"):
            print("fan-out, 1,000 projects:")
            fan_out(timetrack, big)
        if runs("lock"):
            print("GET /api/projects, 100 requests:")
            lock_stall(timetrack, big)


if __name__ == "__main__":
    main()
