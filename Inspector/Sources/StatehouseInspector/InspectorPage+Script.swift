extension InspectorPage {
    /// The page's behaviour. It loads the overview and the selected store's log, then follows the feed from the id
    /// those were read at; the browser's `EventSource` resumes it by `Last-Event-ID` after any cut.
    static let scriptText = #"""
        "use strict";
        const $ = (id) => document.getElementById(id);
        const view = {
          stores: [], containers: new Map(), selected: null, entries: [], latest: null, lastEntryID: 0,
          step: null, paused: false, held: [], feed: null, loadedStep: 0,
        };
        const MAX_ROWS = 2000;

        async function call(path, options) {
          const response = await fetch(path, options);
          const text = await response.text();
          const body = text && response.headers.get("content-type")?.includes("json") ? JSON.parse(text) : text;
          if (!response.ok) throw new Error(body && body.error ? body.error : response.statusText);
          return body;
        }

        function say(message) {
          $("message").hidden = !message;
          $("message").textContent = message || "";
        }

        async function loadOverview() {
          const overview = await call("api/overview");
          view.stores = overview.stores;
          overview.containers.forEach((container) => view.containers.set(container.key, container));
          drawStores();
          drawContainers();
          if (!view.feed) follow(overview.lastEventID);
          if (!view.selected || !view.stores.some((store) => store.name === view.selected)) {
            if (view.stores.length) await select(view.stores[0].name);
          }
        }

        async function select(name) {
          view.selected = name;
          const detail = await call(`api/stores/${encodeURIComponent(name)}`);
          if (view.selected !== name) return;
          view.entries = detail.entries;
          view.latest = detail.state;
          view.loadedStep = detail.summary.steps;
          view.lastEntryID = detail.lastEventID;
          view.step = null;
          view.held = [];
          updateSummary(detail.summary);
          say(detail.summary.note || "");
          drawStores();
          drawLog();
          showStep(null);
        }

        function summaryOf(name) { return view.stores.find((store) => store.name === name); }

        function updateSummary(summary) {
          const index = view.stores.findIndex((store) => store.name === summary.name);
          if (index >= 0) view.stores[index] = summary; else view.stores.push(summary);
          const current = summaryOf(view.selected);
          if (!current) return;
          $("jump").hidden = !current.canJump;
          $("resume").hidden = !current.canJump || !current.jumped;
          $("import").disabled = !current.canImport;
          $("export").href = `api/stores/${encodeURIComponent(current.name)}/export`;
          $("export").download = `${current.name}.jsonl`;
        }

        function drawStores() {
          const nav = $("stores");
          nav.replaceChildren(...view.stores.map((store) => {
            const button = document.createElement("button");
            button.type = "button";
            button.textContent = `${store.name} (${store.steps})`;
            button.setAttribute("aria-current", String(store.name === view.selected));
            button.addEventListener("click", () => select(store.name).catch((error) => say(error.message)));
            return button;
          }));
        }

        function follow(since) {
          view.feed = new EventSource(`api/events?since=${since}`);
          view.feed.onopen = () => {
            $("connection").textContent = "live";
            // The feed resumes the logs, not the containers (nor stores attached meanwhile): read those again.
            loadOverview().catch((error) => say(error.message));
          };
          view.feed.onerror = () => { $("connection").textContent = "reconnecting…"; };
          view.feed.addEventListener("entry", (event) => received(JSON.parse(event.data)));
          view.feed.addEventListener("container", (event) => {
            const container = JSON.parse(event.data);
            view.containers.set(container.key, container);
            drawContainers();
          });
          view.feed.addEventListener("attached", () => loadOverview().catch((error) => say(error.message)));
        }

        function received({ store, entry }) {
          const summary = summaryOf(store);
          if (summary) { summary.steps = Math.max(summary.steps, entry.step); }
          if (store !== view.selected) { drawStores(); return; }
          if (entry.id <= view.lastEntryID) return;
          view.lastEntryID = entry.id;
          // Steps follow one another: a gap means the log let go of entries this page never got (it was cut off
          // longer than the log holds), and the state here is no longer the store's. Load it again.
          const last = view.held.length ? view.held[view.held.length - 1] : view.entries[view.entries.length - 1];
          if (entry.step !== (last ? last.step : view.loadedStep) + 1) {
            select(store).catch((error) => say(error.message));
            return;
          }
          if (view.paused) { view.held.push(entry); $("pause").textContent = `Continue (${view.held.length})`; return; }
          take(entry);
          scheduleDraw();
        }

        function take(entry) {
          view.entries.push(entry);
          if (view.entries.length > 20000) view.entries.splice(0, view.entries.length - 20000);
          view.latest = applyChanges(view.latest, entry.changes);
        }

        let drawPending = false;
        function scheduleDraw() {
          if (drawPending) return;
          drawPending = true;
          requestAnimationFrame(() => {
            drawPending = false;
            drawStores();
            drawLog();
            if (view.step === null) showStep(null);
          });
        }

        // A state's keys are the app's: `__proto__` or `constructor` among them are data. So members are read only
        // when they are the object's own, and written by definition, never by assignment (which would run the
        // `__proto__` setter and change the object's prototype, or Object.prototype itself).
        const own = (object, key) => (Object.prototype.hasOwnProperty.call(object, key) ? object[key] : undefined);
        const put = (object, key, value) =>
          Object.defineProperty(object, key, { value, writable: true, enumerable: true, configurable: true });

        function applyChanges(tree, changes) {
          let result = structuredClone(tree);
          for (const change of changes) {
            if (change.steps.length === 0) { result = "new" in change ? change.new : null; continue; }
            let parent = result;
            for (const step of change.steps.slice(0, -1)) {
              let child = own(parent, step);
              if (child === undefined || child === null) { child = {}; put(parent, step, child); }
              parent = child;
            }
            const last = change.steps[change.steps.length - 1];
            if (!("new" in change)) {
              if (Array.isArray(parent)) parent.splice(last, 1); else delete parent[last];
            } else {
              put(parent, last, change.new);
            }
          }
          return result;
        }

        function matchesFilter(entry, filter) {
          if (!filter) return true;
          const text = `${entry.name} ${entry.source} ${JSON.stringify(entry.action ?? "")}`.toLowerCase();
          return text.includes(filter);
        }

        function drawLog() {
          const filter = $("filter").value.trim().toLowerCase();
          const shown = view.entries.filter((entry) => matchesFilter(entry, filter)).slice(-MAX_ROWS);
          const log = $("log");
          const atBottom = log.scrollTop + log.clientHeight >= log.scrollHeight - 4;
          log.replaceChildren(...shown.map(row));
          if (atBottom) log.scrollTop = log.scrollHeight;
          const first = view.entries.length ? view.entries[0].step - 1 : 0;
          const last = view.entries.length ? view.entries[view.entries.length - 1].step : (summaryOf(view.selected)?.steps ?? 0);
          $("slider").min = String(first);
          $("slider").max = String(last);
          if (view.step === null) $("slider").value = String(last);
          $("step").textContent = view.step === null ? `latest (${last})` : `${view.step} of ${last}`;
        }

        function row(entry) {
          const item = document.createElement("li");
          item.dataset.step = String(entry.step);
          item.setAttribute("aria-current", String(entry.step === view.step));
          const button = document.createElement("button");
          button.type = "button";
          const time = new Date(entry.date).toLocaleTimeString([], { hour12: false }) + "." + String(new Date(entry.date).getMilliseconds()).padStart(3, "0");
          const missed = entry.missedBefore ? ` (after ${entry.missedBefore} not shown)` : "";
          const name = entry.kind === "action" ? entry.name : `state replaced: ${entry.name}`;
          for (const [text, kind] of [[`#${entry.step} `, "step"], [`${time} `, "time"], [name, entry.kind === "action" ? "name" : "replacement"], [entry.source ? ` · ${entry.source}` : "", "source"], [missed, "source"]]) {
            const span = document.createElement("span");
            span.className = kind;
            span.textContent = text;
            button.append(span);
          }
          button.addEventListener("click", () => showStep(entry.step));
          item.append(button);
          return item;
        }

        async function showStep(step) {
          view.step = step;
          const entry = step === null ? view.entries[view.entries.length - 1] : view.entries.find((candidate) => candidate.step === step);
          let tree = view.latest;
          if (step !== null) {
            try {
              tree = (await call(`api/stores/${encodeURIComponent(view.selected)}/states/${step}`)).state;
            } catch (error) { say(error.message); return; }
          }
          $("state-title").textContent = step === null ? "State (latest)" : `State after step ${step}`;
          drawTree(tree);
          drawDiff(entry && (step === null || entry.step === step) ? entry.changes : []);
          for (const item of $("log").children) item.setAttribute("aria-current", String(Number(item.dataset.step) === step));
          if (step !== null) $("slider").value = String(step);
          const last = Number($("slider").max);
          $("step").textContent = step === null ? `latest (${last})` : `${step} of ${last}`;
        }

        function drawTree(tree) {
          const search = $("search").value.trim().toLowerCase();
          const root = $("tree");
          root.replaceChildren(node("state", tree, search) ?? document.createTextNode(search ? "Nothing matches." : ""));
        }

        function node(key, value, search) {
          const isBranch = value !== null && typeof value === "object";
          const keyMatches = search && key.toLowerCase().includes(search);
          if (!isBranch) {
            const text = JSON.stringify(value);
            if (search && !keyMatches && !text.toLowerCase().includes(search)) return null;
            const leaf = document.createElement("div");
            leaf.className = "leaf";
            const keySpan = document.createElement(keyMatches ? "mark" : "span");
            keySpan.className = "key";
            keySpan.textContent = `${key}: `;
            const valueSpan = document.createElement(search && text.toLowerCase().includes(search) ? "mark" : "span");
            valueSpan.textContent = text;
            leaf.append(keySpan, valueSpan);
            return leaf;
          }
          const children = Object.entries(value).map(([childKey, child]) => node(childKey, child, keyMatches ? "" : search)).filter(Boolean);
          if (search && !keyMatches && children.length === 0) return null;
          const details = document.createElement("details");
          details.open = true;
          const summary = document.createElement("summary");
          const keySpan = document.createElement(keyMatches ? "mark" : "span");
          keySpan.className = "key";
          keySpan.textContent = key;
          summary.append(keySpan, document.createTextNode(Array.isArray(value) ? ` [${value.length}]` : ` {${Object.keys(value).length}}`));
          details.append(summary, ...children);
          return details;
        }

        function drawDiff(changes) {
          $("diff").replaceChildren(...changes.map((change) => {
            const item = document.createElement("li");
            const path = document.createElement("span");
            path.textContent = `${change.path}: ${"old" in change ? "" : "added "}`;
            item.append(path);
            if ("old" in change) {
              const old = document.createElement("span");
              old.className = "old";
              old.textContent = JSON.stringify(change.old);
              item.append(old);
            }
            if ("old" in change && "new" in change) item.append(document.createTextNode(" → "));
            if ("new" in change) {
              const added = document.createElement("span");
              added.className = "new";
              added.textContent = JSON.stringify(change.new);
              item.append(added);
            } else {
              item.append(document.createTextNode(" (removed)"));
            }
            return item;
          }));
          if (changes.length === 0) $("diff").textContent = "No change to show.";
        }

        function drawContainers() {
          const rows = [...view.containers.values()].sort((a, b) => a.key.localeCompare(b.key)).map((container) => {
            const tr = document.createElement("tr");
            tr.dataset.key = container.key;
            const cells = [
              container.key, container.value, String(container.listeners), String(container.changeCount),
              container.lastChange ? new Date(container.lastChange).toLocaleTimeString([], { hour12: false }) : "—",
              !container.exists ? "ended" : container.fromStorage ? "another process" : "this process",
            ];
            cells.forEach((text, index) => {
              const td = document.createElement("td");
              if (index === 1) td.className = "value";
              td.textContent = text;
              tr.append(td);
            });
            return tr;
          });
          $("containers").tBodies[0].replaceChildren(...rows);
        }

        async function post(path, body, type = "application/json") {
          return call(path, { method: "POST", headers: { "Content-Type": type }, body });
        }

        $("filter").addEventListener("input", drawLog);
        $("search").addEventListener("input", () => showStep(view.step));
        $("live").addEventListener("click", () => showStep(null));
        $("slider").addEventListener("input", () => {
          const step = Number($("slider").value);
          showStep(step === Number($("slider").max) && view.step === null ? null : step);
        });
        $("pause").addEventListener("click", () => {
          view.paused = !view.paused;
          $("pause").setAttribute("aria-pressed", String(view.paused));
          if (!view.paused) {
            view.held.forEach(take);
            view.held = [];
            scheduleDraw();
          }
          $("pause").textContent = view.paused ? "Continue (0)" : "Pause";
        });
        $("jump").addEventListener("click", async () => {
          const step = view.step ?? Number($("slider").max);
          try {
            updateSummary(await post(`api/stores/${encodeURIComponent(view.selected)}/jump`, JSON.stringify({ step })));
            say("");
          } catch (error) { say(error.message); }
        });
        $("resume").addEventListener("click", async () => {
          try {
            updateSummary(await post(`api/stores/${encodeURIComponent(view.selected)}/resume`, "{}"));
            say("");
          } catch (error) { say(error.message); }
        });
        $("import").addEventListener("change", async () => {
          const file = $("import").files[0];
          if (!file) return;
          try {
            const summary = await post(`api/stores/${encodeURIComponent(view.selected)}/import`, await file.text(), "application/x-ndjson");
            $("import").value = "";
            await loadOverview();
            await select(summary.name);
            say("");
          } catch (error) { say(error.message); }
        });

        loadOverview().catch((error) => say(error.message));
        """#
}
