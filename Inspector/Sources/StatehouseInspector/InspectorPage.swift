import Hummingbird
import NIOCore

/// The page: HTML, a script and a style sheet, all served by the inspector itself (no build step, nothing from
/// another site: the Content-Security-Policy allows only this origin).
enum InspectorPage {
    static var html: Response { response(htmlText, type: "text/html; charset=utf-8") }
    static var script: Response { response(scriptText, type: "text/javascript; charset=utf-8") }
    static var style: Response { response(styleText, type: "text/css; charset=utf-8") }

    private static func response(_ text: String, type: String) -> Response {
        Response(status: .ok, headers: [.contentType: type], body: ResponseBody(byteBuffer: ByteBuffer(string: text)))
    }

    private static let htmlText = """
        <!doctype html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>Statehouse Inspector</title>
        <link rel="stylesheet" href="inspector.css">
        </head>
        <body>
        <header>
          <h1>Statehouse Inspector</h1>
          <nav id="stores" aria-label="Stores"></nav>
          <span id="connection" role="status">connecting…</span>
        </header>
        <main>
          <section id="store-view" aria-label="Store">
            <div class="toolbar">
              <input id="filter" type="search" placeholder="Filter actions (case or text)" aria-label="Filter actions">
              <button id="pause" type="button" aria-pressed="false">Pause</button>
              <button id="live" type="button">Latest</button>
              <button id="jump" type="button" hidden>Jump the store here</button>
              <button id="resume" type="button" hidden>Resume</button>
              <a id="export" href="#" download>Export</a>
              <label class="import">Import <input id="import" type="file" accept=".jsonl,.ndjson,.json,application/x-ndjson"></label>
            </div>
            <div class="travel">
              <label for="slider">Step</label>
              <input id="slider" type="range" min="0" max="0" value="0">
              <output id="step" for="slider"></output>
            </div>
            <p id="message" role="alert" hidden></p>
            <div class="panes">
              <section aria-labelledby="log-title">
                <h2 id="log-title">Actions</h2>
                <ol id="log"></ol>
              </section>
              <section aria-labelledby="state-title">
                <h2 id="state-title">State</h2>
                <input id="search" type="search" placeholder="Search the state" aria-label="Search the state">
                <div id="tree"></div>
                <h2>Changes</h2>
                <ul id="diff"></ul>
              </section>
            </div>
          </section>
          <section aria-labelledby="containers-title">
            <h2 id="containers-title">Containers</h2>
            <table id="containers">
              <thead><tr><th>Key</th><th>Value</th><th>Listeners</th><th>Changes</th><th>Last change</th><th>From</th></tr></thead>
              <tbody></tbody>
            </table>
          </section>
        </main>
        <script src="inspector.js"></script>
        </body>
        </html>
        """
}
