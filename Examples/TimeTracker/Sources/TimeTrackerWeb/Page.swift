import Hummingbird
import NIOCore

/// The live page: static HTML and a script that renders the projects from the event stream.
///
/// Names reach the page only as data and are only ever set as text (`textContent`), never as HTML; the
/// Content-Security-Policy also refuses inline scripts, so a name that is markup stays text twice over.
enum Page {
    static var response: Response {
        Response(
            status: .ok,
            headers: [
                .contentType: "text/html; charset=utf-8",
                .contentSecurityPolicy: "default-src 'self'; style-src 'self' 'unsafe-inline'",
            ],
            body: ResponseBody(byteBuffer: ByteBuffer(string: html))
        )
    }

    static var scriptResponse: Response {
        Response(
            status: .ok,
            headers: [.contentType: "text/javascript; charset=utf-8"],
            body: ResponseBody(byteBuffer: ByteBuffer(string: script))
        )
    }

    static let html = """
        <!doctype html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>timetrack</title>
        <style>
          body { font: 16px/1.5 system-ui, sans-serif; max-width: 44rem; margin: 2rem auto; padding: 0 1rem; color: #222; }
          h1 { font-size: 1.6rem; margin-bottom: .2rem; }
          #connection, #sync { color: #595959; font-size: .85rem; margin-top: 0; }
          form { display: flex; gap: .5rem; margin: 1rem 0; }
          input { flex: 1; font: inherit; padding: .35rem .5rem; }
          button { font: inherit; padding: .3rem .8rem; cursor: pointer; }
          #error { color: #b00020; min-height: 1.5em; margin: 0; }
          #undo { margin: 0; }
          #undo-redo { margin: 0 0 .5rem; }
          #last-change { color: #595959; font-size: .9rem; margin: 0 0 .5rem; }
          button:focus-visible, input:focus-visible { outline: 3px solid #1a5fb4; outline-offset: 2px; }
          table { width: 100%; border-collapse: collapse; }
          th, td { text-align: left; padding: .45rem .4rem; border-bottom: 1px solid #ddd; }
          td.elapsed { font-variant-numeric: tabular-nums; }
          tr.running td.status { color: #0a7a28; font-weight: 600; }
          td.status, td.actions { white-space: nowrap; }
          td.actions { text-align: right; }
          #empty { color: #595959; }
          /* A phone: the status goes (the row's colour and its Stop button say it), and the buttons wrap. */
          @media (max-width: 36rem) {
            body { margin: 1rem auto; }
            th:nth-child(3), td.status { display: none; }
            td.actions { white-space: normal; }
            td.actions button { margin: .15rem 0; padding: .3rem .5rem; }
          }
          dialog form { flex-wrap: wrap; }
          dialog h2 { font-size: 1.1rem; margin: 0 0 .5rem; width: 100%; }
          #week h2 { font-size: 1.2rem; margin: 1.5rem 0 .5rem; }
          #week-chart { width: 100%; height: auto; }
          #week-chart rect { fill: #1a5fb4; }
          #week-chart text { font: 12px system-ui, sans-serif; fill: #444; text-anchor: middle; }
          #rename-error, #history-error { color: #b00020; margin: 0; width: 100%; min-height: 1.5em; }
          #history { max-width: 40rem; width: calc(100% - 2rem); }
          #history label { display: flex; flex-direction: column; font-size: .85rem; }
        </style>
        </head>
        <body>
        <header>
          <h1>timetrack</h1>
          <p id="connection">connecting…</p>
          <p id="sync" role="status" hidden></p>
        </header>
        <main>
        <form id="add">
          <input id="name" name="name" placeholder="New project" aria-label="New project's name" maxlength="200"
                 autocomplete="off" required>
          <button id="add-button" type="submit">Add</button>
        </form>
        <p id="undo-redo">
          <button id="undo-last" disabled aria-keyshortcuts="Control+Z">Undo</button>
          <button id="redo-last" disabled aria-keyshortcuts="Control+Shift+Z">Redo</button>
        </p>
        <p id="last-change" role="status" hidden></p>
        <p id="error" role="alert"></p>
        <p id="undo" role="status" hidden><span id="undo-text"></span> <button id="undo-button">Undo</button></p>
        <table>
          <thead><tr><th>Project</th><th>Elapsed</th><th>Status</th><th></th></tr></thead>
          <tbody id="projects"></tbody>
        </table>
        <p id="empty" hidden>No projects yet.</p>
        <section id="week" aria-labelledby="week-title">
          <h2 id="week-title">This week</h2>
          <svg id="week-chart" viewBox="0 0 700 170" role="img" aria-labelledby="week-title"></svg>
          <table>
            <thead><tr><th>Project</th><th>Today</th><th>This week</th></tr></thead>
            <tbody id="totals"></tbody>
          </table>
        </section>
        <dialog id="history" aria-labelledby="history-title">
          <h2 id="history-title">History</h2>
          <form id="activity-form">
            <label>Start <input id="activity-start" type="datetime-local" step="1" required></label>
            <label>Stop <input id="activity-stop" type="datetime-local" step="1"></label>
            <button id="activity-save" type="submit">Add</button>
            <button id="activity-cancel" type="button" hidden>Cancel edit</button>
            <p id="history-error" role="alert"></p>
          </form>
          <table>
            <thead><tr><th>Start</th><th>Stop</th><th>Duration</th><th></th></tr></thead>
            <tbody id="activities"></tbody>
          </table>
          <p><button id="history-more" type="button" hidden>More</button>
             <button id="history-close" type="button">Close</button></p>
        </dialog>
        <dialog id="rename" aria-labelledby="rename-title">
          <form id="rename-form">
            <h2 id="rename-title">Rename</h2>
            <input id="rename-name" aria-labelledby="rename-title" maxlength="200" autocomplete="off" required>
            <button id="rename-save" type="submit">Rename</button>
            <button id="rename-cancel" type="button">Cancel</button>
            <p id="rename-error" role="alert"></p>
          </form>
        </dialog>
        </main>
        <script src="/app.js"></script>
        </body>
        </html>
        """

    static let script = """
        "use strict";
        // The page shows only what the server's event stream says: actions are sent, and their effect arrives as an
        // event like anyone else's change. Names are set with textContent only.
        let projects = [];
        let clockOffset = 0; // the server's clock minus ours, in seconds

        // A server that listens beyond this machine needs its access token: the link it printed carries it after
        // "#" (never sent to the server, so never in a log); kept for this tab only, and taken out of the address bar.
        const token = (() => {
          const match = location.hash.match(/^#token=(.+)$/);
          if (match) {
            sessionStorage.setItem("timetrack.token", decodeURIComponent(match[1]));
            history.replaceState(null, "", location.pathname);
          }
          return sessionStorage.getItem("timetrack.token");
        })();

        function authorization() { return token ? { Authorization: "Bearer " + token } : {}; }

        function format(seconds) {
          seconds = Math.max(0, Math.floor(seconds));
          const h = Math.floor(seconds / 3600), m = Math.floor(seconds / 60) % 60, s = seconds % 60;
          return h + ":" + String(m).padStart(2, "0") + ":" + String(s).padStart(2, "0");
        }

        function serverNow() { return Date.now() / 1000 + clockOffset; }

        // The rule of ProjectSummary.elapsed(at:): a running activity that starts "in the future" (the server's
        // clock was set back) counts as not started yet, never as negative time taken from the finished ones.
        function elapsed(project) {
          return project.elapsedSeconds + (project.running ? Math.max(0, serverNow() - project.runningSince) : 0);
        }

        // `place` names the button's place in its row, for keepingFocus; by default its class.
        function button(label, className, action, place = className) {
          const element = document.createElement("button");
          element.textContent = label;
          element.className = className;
          element.dataset.place = place;
          element.addEventListener("click", action);
          return element;
        }

        // Every change redraws the rows. A keyboard user's focus stays on the same button of the same row (Start
        // becomes Stop: the same place), rather than falling back to the top of the page.
        function keepingFocus(body, redraw) {
          const focused = document.activeElement;
          const row = focused instanceof HTMLButtonElement ? focused.closest(body + " tr") : null;
          const place = row && { id: row.dataset.id, place: focused.dataset.place };
          redraw();
          if (!place) return;
          const again = document.querySelector(body + ' tr[data-id="' + place.id + '"] button[data-place="' + place.place + '"]');
          if (again) again.focus();
        }

        function cell(className, text) {
          const element = document.createElement("td");
          element.className = className;
          element.textContent = text;
          return element;
        }

        function render() {
          const rows = projects.map(project => {
            const row = document.createElement("tr");
            row.dataset.id = project.id;
            row.className = project.running ? "running" : "stopped";
            row.append(cell("name", project.name), cell("elapsed", format(elapsed(project))));
            const since = project.running
              ? new Date(project.runningSince * 1000).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" })
              : "";
            row.append(cell("status", project.running ? "running since " + since : "stopped"));
            const actions = cell("actions", "");
            actions.append(project.running
              ? button("Stop", "stop", () => send("POST", "/api/projects/" + project.id + "/stop"), "toggle")
              : button("Start", "start", () => send("POST", "/api/projects/" + project.id + "/start"), "toggle"));
            actions.append(" ", button("History", "history", () => openHistory(project)));
            actions.append(" ", button("Rename", "rename", () => rename(project)));
            actions.append(" ", button("Delete", "delete", () => remove(project)));
            row.append(actions);
            return row;
          });
          keepingFocus("#projects", () => document.getElementById("projects").replaceChildren(...rows));
          document.getElementById("empty").hidden = projects.length > 0;
        }

        function tick() {
          for (const row of document.querySelectorAll("#projects tr.running")) {
            const project = projects.find(p => String(p.id) === row.dataset.id);
            if (project) row.querySelector(".elapsed").textContent = format(elapsed(project));
          }
        }

        // A refusal's message goes to `error`: the page's, or the rename dialog's while it is open above the page.
        async function send(method, url, body, error = document.getElementById("error")) {
          try {
            // Every change says it is JSON: the server refuses changes that do not (a page of another origin
            // cannot say so without the browser asking the server first).
            const options = { method, headers: { ...authorization(), "Content-Type": "application/json" } };
            if (body !== undefined) options.body = JSON.stringify(body);
            const response = await fetch(url, options);
            if (response.ok) { error.textContent = ""; return true; }
            const reply = await response.json().catch(() => ({ error: response.statusText }));
            error.textContent = reply.error;
          } catch (failure) {
            error.textContent = "The server cannot be reached.";
          }
          return false;
        }

        // A delete takes a project's whole history: it can be undone for a while (the server keeps it an hour;
        // the page offers it for ten seconds). Undoing is an action like any other: every open page sees it.
        let undoTimer;
        async function remove(project) {
          if (!await send("DELETE", "/api/projects/" + project.id)) return;
          const undo = document.getElementById("undo");
          document.getElementById("undo-text").textContent = "Deleted “" + project.name + "”.";
          document.getElementById("undo-button").onclick = async () => {
            undo.hidden = true;
            await send("POST", "/api/projects/" + project.id + "/restore");
          };
          undo.hidden = false;
          clearTimeout(undoTimer);
          undoTimer = setTimeout(() => { undo.hidden = true; }, 10000);
        }

        // Renaming happens in a dialog, which the table's re-rendering at every event leaves alone.
        const renameDialog = document.getElementById("rename");
        const renameInput = document.getElementById("rename-name");
        let renaming = null;
        function rename(project) {
          renaming = project;
          document.getElementById("rename-title").textContent = "Rename “" + project.name + "”";
          document.getElementById("rename-error").textContent = "";
          renameInput.value = project.name;
          renameDialog.showModal();
          renameInput.select();
        }
        document.getElementById("rename-form").addEventListener("submit", async event => {
          event.preventDefault();
          const error = document.getElementById("rename-error");
          if (await send("PATCH", "/api/projects/" + renaming.id, { name: renameInput.value }, error)) renameDialog.close();
        });
        document.getElementById("rename-cancel").addEventListener("click", () => renameDialog.close());

        // A project's history, in a dialog: its activities newest first, and a form that adds one by hand or edits
        // one. Every open page reloads it at each change, whoever made it. Times are the browser's local time.
        const historyDialog = document.getElementById("history");
        const startInput = document.getElementById("activity-start"), stopInput = document.getElementById("activity-stop");
        let historyProject = null, editing = null, shown = 20;
        function inputValue(seconds) {
          const date = new Date(seconds * 1000), pad = n => String(n).padStart(2, "0");
          return date.getFullYear() + "-" + pad(date.getMonth() + 1) + "-" + pad(date.getDate()) + "T" +
            pad(date.getHours()) + ":" + pad(date.getMinutes()) + ":" + pad(date.getSeconds());
        }
        function shownTime(seconds) {
          return inputValue(seconds).replace("T", " ").slice(0, 16);
        }
        function resetActivityForm() {
          editing = null;
          startInput.value = stopInput.value = "";
          stopInput.disabled = false;
          document.getElementById("activity-save").textContent = "Add";
          document.getElementById("activity-cancel").hidden = true;
        }
        function edit(activity) {
          editing = activity;
          startInput.value = inputValue(activity.startedAt);
          stopInput.value = activity.stoppedAt === undefined ? "" : inputValue(activity.stoppedAt);
          stopInput.disabled = activity.stoppedAt === undefined; // the running one keeps running
          document.getElementById("activity-save").textContent = "Save";
          document.getElementById("activity-cancel").hidden = false;
          startInput.focus();
        }
        async function loadHistory() {
          if (!historyDialog.open || !historyProject) return;
          const error = document.getElementById("history-error");
          let page;
          try {
            const response = await fetch("/api/projects/" + historyProject.id + "/activities?limit=" + shown,
                                         { headers: authorization() });
            page = await response.json();
            if (!response.ok) { error.textContent = page.error; return; }
          } catch (failure) {
            error.textContent = "The server cannot be reached.";
            return;
          }
          const rows = page.activities.map(activity => {
            const row = document.createElement("tr");
            row.dataset.id = activity.id;
            const running = activity.stoppedAt === undefined;
            row.append(cell("start", shownTime(activity.startedAt)), cell("stop", running ? "running" : shownTime(activity.stoppedAt)),
                       cell("duration", format((running ? serverNow() : activity.stoppedAt) - activity.startedAt)));
            const actions = cell("actions", "");
            actions.append(button("Edit", "edit", () => edit(activity)), " ",
                           button("Delete", "delete", () => send("DELETE", "/api/activities/" + activity.id, undefined, error)));
            row.append(actions);
            return row;
          });
          keepingFocus("#activities", () => document.getElementById("activities").replaceChildren(...rows));
          document.getElementById("history-more").hidden = !page.next;
        }
        function openHistory(project) {
          historyProject = project;
          shown = 20;
          resetActivityForm();
          document.getElementById("history-title").textContent = "History of “" + project.name + "”";
          document.getElementById("history-error").textContent = "";
          document.getElementById("activities").replaceChildren();
          historyDialog.showModal();
          loadHistory();
        }
        document.getElementById("activity-form").addEventListener("submit", async event => {
          event.preventDefault();
          const error = document.getElementById("history-error");
          const body = { startedAt: new Date(startInput.value).getTime() / 1000 };
          if (stopInput.value && !stopInput.disabled) body.stoppedAt = new Date(stopInput.value).getTime() / 1000;
          const done = editing
            ? await send("PATCH", "/api/activities/" + editing.id, body, error)
            : await send("POST", "/api/projects/" + historyProject.id + "/activities", body, error);
          if (done) resetActivityForm();
        });
        document.getElementById("activity-cancel").addEventListener("click", resetActivityForm);
        document.getElementById("history-more").addEventListener("click", () => { shown = Math.min(shown + 20, 500); loadHistory(); });
        document.getElementById("history-close").addEventListener("click", () => historyDialog.close());

        // This week (Monday to Sunday) in the browser's time zone: a bar a day and each project's time today and this
        // week, from GET /api/report, which `timetrack report --week --json` prints too. Drawn here, as SVG.
        function dayText(date) {
          const pad = n => String(n).padStart(2, "0");
          return date.getFullYear() + "-" + pad(date.getMonth() + 1) + "-" + pad(date.getDate());
        }
        async function loadWeek() {
          const today = new Date();
          const monday = new Date(today.getFullYear(), today.getMonth(), today.getDate() - (today.getDay() + 6) % 7);
          const zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
          let report;
          try {
            const response = await fetch("/api/report?days=7&day=" + dayText(monday) + "&tz=" + encodeURIComponent(zone),
                                         { headers: authorization() });
            if (!response.ok) return;
            report = await response.json();
          } catch (failure) {
            return;
          }
          const svg = "http://www.w3.org/2000/svg", chart = document.getElementById("week-chart");
          const most = Math.max(3600, ...report.days.map(day => day.total));
          const shapes = report.days.flatMap((day, index) => {
            const height = Math.round(day.total / most * 130), x = 20 + index * 95;
            const bar = document.createElementNS(svg, "rect");
            Object.entries({ x, y: 140 - height, width: 60, height, "data-date": day.date, "data-seconds": day.total })
              .forEach(([name, value]) => bar.setAttribute(name, value));
            const title = document.createElementNS(svg, "title");
            title.textContent = day.date + ": " + format(day.total);
            bar.append(title);
            const label = document.createElementNS(svg, "text");
            label.setAttribute("x", x + 30);
            label.setAttribute("y", 160);
            label.textContent = new Date(day.date + "T12:00:00").toLocaleDateString([], { weekday: "short" });
            return [bar, label];
          });
          chart.replaceChildren(...shapes);
          const todays = report.days.find(day => day.date === dayText(today));
          const rows = report.projects.map(project => {
            const row = document.createElement("tr");
            const time = todays?.projects.find(p => p.id === project.id)?.seconds ?? 0;
            row.append(cell("name", project.name), cell("today", format(time)), cell("week", format(project.seconds)));
            return row;
          });
          document.getElementById("totals").replaceChildren(...rows);
        }
        setInterval(loadWeek, 60000);

        // The apps that sync with this tracker (`timetrack --remote`), from GET /api/sync: how many, how many follow
        // it now, and the last push. Hidden when the server hosts no sync.
        async function loadSync() {
          let sync;
          try {
            const response = await fetch("/api/sync", { headers: authorization() });
            if (!response.ok) return;
            sync = await response.json();
          } catch (failure) {
            return;
          }
          const line = document.getElementById("sync");
          line.hidden = !sync.hosted;
          if (!sync.hosted) return;
          const apps = sync.clients.length, latest = sync.clients[0];
          line.dataset.apps = apps;
          line.dataset.following = sync.following;
          line.textContent = apps === 0
            ? "No app syncs with this tracker yet."
            : apps + (apps === 1 ? " app syncs" : " apps sync") + " with this tracker, " + sync.following +
              " following now; last seen: " + latest.name + " at " +
              new Date(latest.lastPush * 1000).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" }) + ".";
        }
        setInterval(loadSync, 30000);

        // Undo and redo take back and make again the last change, whoever made it: the server keeps the history.
        // Not named `history`: that is the window's, which the token's code above uses before this line runs.
        const undoSteps = { undo: null, redo: null };
        function renderUndoButtons() {
          for (const [step, id] of [["undo", "undo-last"], ["redo", "redo-last"]]) {
            const element = document.getElementById(id);
            const label = step === "undo" ? "Undo" : "Redo";
            element.textContent = undoSteps[step] ? label + " " + undoSteps[step] : label;
            element.disabled = !undoSteps[step];
          }
        }
        document.getElementById("undo-last").addEventListener("click", () => send("POST", "/api/undo"));
        document.getElementById("redo-last").addEventListener("click", () => send("POST", "/api/redo"));
        // Ctrl+Z and Ctrl+Shift+Z (⌘ on a Mac), except while typing a name, where they edit the text.
        document.addEventListener("keydown", event => {
          if (!(event.ctrlKey || event.metaKey) || event.altKey || event.key.toLowerCase() !== "z") return;
          if (event.target instanceof HTMLInputElement || renameDialog.open || historyDialog.open) return;
          event.preventDefault();
          send("POST", event.shiftKey ? "/api/redo" : "/api/undo");
        });

        document.getElementById("add").addEventListener("submit", async event => {
          event.preventDefault();
          const input = document.getElementById("name");
          if (await send("POST", "/api/projects", { name: input.value })) input.value = "";
        });

        // An event source cannot send headers: the token goes in the query.
        const events = new EventSource("/api/events" + (token ? "?token=" + encodeURIComponent(token) : ""));
        events.addEventListener("clock", event => { clockOffset = Number(event.data) - Date.now() / 1000; });
        events.addEventListener("projects", event => {
          const data = JSON.parse(event.data);
          projects = data.projects;
          // A change another process made (the command line, another server) says what it was and who made it.
          const last = document.getElementById("last-change");
          last.hidden = !data.lastChange || data.lastChange.here;
          if (data.lastChange && !data.lastChange.here) {
            const when = new Date(data.lastChange.at * 1000).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
            last.textContent = "Last change: " + data.lastChange.summary + ", by " + data.lastChange.origin + " at " + when + ".";
          }
          undoSteps.undo = data.undo ?? null;
          undoSteps.redo = data.redo ?? null;
          render();
          renderUndoButtons();
          if (historyProject && !projects.some(p => p.id === historyProject.id)) historyDialog.close();
          loadHistory();
          loadWeek();
          loadSync();
          if (data.problem) {
            // The database is gone: nothing more can be changed here.
            document.getElementById("error").textContent = data.problem;
            for (const button of document.querySelectorAll("button")) button.disabled = true;
          }
        });
        events.addEventListener("open", () => { document.getElementById("connection").textContent = "live"; });
        events.addEventListener("error", () => {
          document.getElementById("connection").textContent = "reconnecting…";
        });
        setInterval(tick, 1000);
        """
}
