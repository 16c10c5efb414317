extension InspectorPage {
    static let styleText = """
        :root { color-scheme: light dark; --muted: #555; --line: #ccc; --accent: #0b57d0; --add: #0a7a32; --remove: #b3261e; }
        @media (prefers-color-scheme: dark) { :root { --muted: #aaa; --line: #444; --accent: #8ab4f8; --add: #6dd58c; --remove: #f2b8b5; } }
        body { font: 14px/1.4 system-ui, sans-serif; margin: 0; }
        header { display: flex; flex-wrap: wrap; gap: 1em; align-items: center; padding: .5em 1em; border-bottom: 1px solid var(--line); }
        h1 { font-size: 1.1em; margin: 0; }
        h2 { font-size: 1em; margin: .8em 0 .4em; }
        main { padding: 0 1em 2em; }
        nav button[aria-current="true"] { font-weight: bold; border-color: var(--accent); }
        #connection { margin-left: auto; color: var(--muted); }
        .toolbar, .travel { display: flex; flex-wrap: wrap; gap: .5em; align-items: center; margin: .6em 0; }
        #slider { flex: 1; min-width: 10em; }
        .panes { display: grid; grid-template-columns: minmax(0, 1fr) minmax(0, 1fr); gap: 1em; }
        @media (max-width: 700px) { .panes { grid-template-columns: 1fr; } }
        #log { list-style: none; padding: 0; margin: 0; max-height: 70vh; overflow: auto; border: 1px solid var(--line); }
        #log li button { all: unset; display: block; width: 100%; box-sizing: border-box; padding: .25em .5em; cursor: pointer; font-family: ui-monospace, monospace; font-size: 12px; }
        #log li[aria-current="true"] button { background: color-mix(in srgb, var(--accent) 20%, transparent); }
        #log li button:focus-visible, button:focus-visible, input:focus-visible, a:focus-visible { outline: 2px solid var(--accent); outline-offset: 1px; }
        #log .source, #log .time { color: var(--muted); }
        #log .replacement { font-style: italic; }
        #tree, #diff { font-family: ui-monospace, monospace; font-size: 12px; }
        #tree details { margin-left: 1em; }
        #tree .leaf { margin-left: 2em; }
        #tree .key { color: var(--accent); }
        #tree mark { background: #fde68a; color: #000; }
        #diff { list-style: none; padding: 0; }
        #diff .old { color: var(--remove); text-decoration: line-through; }
        #diff .new { color: var(--add); }
        #message { color: var(--remove); }
        table { border-collapse: collapse; width: 100%; }
        th, td { text-align: left; border-bottom: 1px solid var(--line); padding: .25em .5em; vertical-align: top; }
        td.value { font-family: ui-monospace, monospace; font-size: 12px; word-break: break-all; }
        """
}
