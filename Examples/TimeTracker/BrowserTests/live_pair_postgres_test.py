#!/usr/bin/env python3
"""Real-browser test of two timetrack servers sharing one PostgreSQL database: a live pair.

Starts a private PostgreSQL cluster (initdb in a temporary directory, as `nobody` when run as root), two
`timetrack serve --database postgres://…` on two ports, and opens each server's page in a browser. A project added in
the page of one appears in the page of the other; started there, it runs in the first; a project added by the
command line, pointed at the same database, appears in both; deleted in one page, it goes from the other. Skipped,
saying so, where PostgreSQL is not installed.

Usage: live_pair_postgres_test.py PATH_TO_TIMETRACK
"""
import argparse
import glob
import os
import shutil
import socket
import subprocess
import sys
import tempfile


from live_page_test import add, browser, click, open_live, row, row_class, start_server, wait_for

USER = "statehouse"


def postgres_binaries():
    """The folder of the newest installed PostgreSQL's programs, or None."""
    for folder in sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=lambda path: int(path.split("/")[-2]), reverse=True):
        if all(os.path.exists(os.path.join(folder, program)) for program in ("initdb", "pg_ctl")):
            return folder
    return None


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Cluster:
    """A private cluster in `directory`, trusting local connections; stopped and removed by `stop()`."""

    def __init__(self, binaries, directory):
        self.binaries, self.directory = binaries, directory
        self.as_server_user = ["runuser", "-u", "nobody", "--"] if os.geteuid() == 0 else []
        if os.geteuid() == 0:
            shutil.chown(directory, "nobody", "nogroup")
        self.data = os.path.join(directory, "data")
        self.run("initdb", "-D", self.data, "-U", USER, "-A", "trust", "-E", "UTF8", "--locale=C", "--no-sync")
        self.port = free_port()
        options = f"-p {self.port} -c listen_addresses=127.0.0.1 -c unix_socket_directories='{directory}' -c fsync=off"
        self.run("pg_ctl", "-D", self.data, "-w", "-t", "120", "-l", os.path.join(directory, "server.log"),
                 "-o", options, "start")

    @property
    def url(self):
        return f"postgres://{USER}@127.0.0.1:{self.port}/postgres?sslmode=disable"

    def run(self, program, *arguments):
        # Its own session, so that the server is in no process group of this test's; no inherited descriptors.
        subprocess.run(["setsid", "--wait"] + self.as_server_user + [os.path.join(self.binaries, program), *arguments],
                       check=True, capture_output=True, close_fds=True)

    def stop(self):
        try:
            self.run("pg_ctl", "-D", self.data, "-m", "immediate", "-w", "stop")
        except subprocess.CalledProcessError:
            pass


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("timetrack")
    arguments = parser.parse_args()
    binaries = postgres_binaries()
    if binaries is None:
        print("skipped: PostgreSQL is not installed (apt-get install postgresql)")
        return

    with tempfile.TemporaryDirectory() as directory:
        cluster = Cluster(binaries, directory)
        servers, drivers = [], []
        try:
            for _ in range(2):
                servers.append(start_server(arguments.timetrack, ["--database", cluster.url]))
            drivers = [browser(), browser()]
            one, other = drivers
            for driver, (_, url) in zip(drivers, servers):
                open_live(driver, url)

            add(one, "Shared")
            wait_for(other, lambda: row(other, "Shared") is not None, "the project added through the other server")
            click(other, "Shared", "start")
            wait_for(one, lambda: "running" in row_class(one, "Shared"), "the start made through the other server")
            print("ok: added through one server and started through the other, each page shows what the other did")

            subprocess.run([arguments.timetrack, "add", "From the CLI", "--database", cluster.url],
                           check=True, capture_output=True)
            for driver in drivers:
                wait_for(driver, lambda: row(driver, "From the CLI") is not None, "the CLI's project")
            print("ok: a project added by the command line on the same database showed in both pages")

            click(one, "From the CLI", "delete")
            wait_for(other, lambda: row(other, "From the CLI") is None, "the deletion made through the other server")
            print("ok: deleted through one server, gone from the other's page")
        finally:
            for driver in drivers:
                driver.quit()
            for server, _ in servers:
                server.terminate()
                server.wait(timeout=10)
            cluster.stop()
    print("browser test on PostgreSQL passed")


if __name__ == "__main__":
    main()
