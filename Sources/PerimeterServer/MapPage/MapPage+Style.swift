extension MapPage {
    /// The page's style sheet.
    static let style = #"""
* { box-sizing: border-box; }
html, body { margin: 0; height: 100%; font: 14px/1.4 system-ui, -apple-system, "Segoe UI", sans-serif; color: #1d2430; }
body { display: flex; flex-direction: column; }
header { display: flex; align-items: center; gap: 16px; padding: 8px 14px; background: #1d2430; color: #fff; }
header h1 { font-size: 16px; margin: 0; font-weight: 600; letter-spacing: .02em; }
#banner { flex: 1; font-size: 17px; font-weight: 600; padding: 4px 12px; border-radius: 4px; background: #39414f; }
#banner.entry { background: rgb(7,144,30); }
#banner.exit { background: rgb(173,17,5); }
#banner.dwell { background: rgb(17,97,195); }
#connection { font-size: 12px; opacity: .8; }
#connection.open::before { content: "● "; color: #5fd16f; }
#connection.retrying::before { content: "● "; color: #f0a020; }
main { flex: 1; display: flex; min-height: 0; }
#map { position: relative; flex: 1; overflow: hidden; background: #eef1f4; cursor: grab; touch-action: none; }
#map.dragging { cursor: grabbing; }
#tiles { position: absolute; inset: 0; overflow: hidden; }
#tiles img { position: absolute; user-select: none; pointer-events: none; }
#svg { position: absolute; inset: 0; width: 100%; height: 100%; }
#fences g { opacity: .7; }
#fences path.area { stroke: rgba(29,36,48,.55); stroke-width: 1; }
#fences path.corridor, #fences path.buffer { stroke-linecap: round; stroke-linejoin: round; fill: none; }
#devices g { transition: transform .3s linear; }
#svg.moving #devices g { transition: none; }
#fences text { font-size: 12px; fill: #1d2430; paint-order: stroke; stroke: #fff; stroke-width: 3px; pointer-events: none; }
#devices circle { stroke: #fff; stroke-width: 2; }
#devices text { font-size: 11px; font-weight: 600; paint-order: stroke; stroke: #fff; stroke-width: 3px; }
#map-buttons { position: absolute; top: 10px; left: 10px; }
#legend { position: absolute; bottom: 10px; left: 10px; background: rgba(255,255,255,.9); padding: 4px 8px; border-radius: 4px; font-size: 12px; }
.swatch { display: inline-block; width: 12px; height: 12px; margin: 0 4px 0 8px; vertical-align: -2px; opacity: .7; }
.swatch.entry { background: rgba(7,144,30,0.8); }
.swatch.exit { background: rgba(173,17,5,0.8); }
.swatch.dwell { background: rgba(17,97,195,0.8); }
.swatch.none { background: rgba(119,119,119,1); }
#attribution { position: absolute; bottom: 4px; right: 6px; font-size: 11px; color: #555; }
aside { width: 340px; display: flex; flex-direction: column; border-left: 1px solid #d4d9e0; background: #fafbfc; overflow-y: auto; }
aside section { padding: 10px 14px; border-bottom: 1px solid #e3e7ec; }
aside h2 { font-size: 13px; text-transform: uppercase; letter-spacing: .05em; margin: 0 0 6px; color: #5a6473; }
#log-section { flex: 1; min-height: 160px; display: flex; flex-direction: column; }
#log { flex: 1; margin: 0; padding: 0 0 0 4px; list-style: none; overflow-y: auto; max-height: 40vh; font-size: 13px; }
#log li { padding: 3px 0; border-bottom: 1px dotted #e3e7ec; }
#log li .time { color: #6a7483; font-variant-numeric: tabular-nums; margin-right: 6px; }
#log li.entry .kind { color: rgb(7,144,30); }
#log li.exit .kind { color: rgb(173,17,5); }
#log li.dwell .kind { color: rgb(17,97,195); }
label { display: block; margin: 4px 0; font-size: 13px; }
input, select, textarea, button { font: inherit; }
input, select { width: 100%; padding: 3px 5px; }
textarea { width: 100%; font-family: ui-monospace, monospace; font-size: 12px; }
.row { display: flex; gap: 8px; }
.row label { flex: 1; }
button { padding: 4px 12px; border: 1px solid #1d2430; border-radius: 4px; background: #fff; cursor: pointer; }
button:hover { background: #eef1f4; }
#sim-status { min-height: 1.4em; font-size: 12px; margin-top: 4px; }
#sim-status.error { color: rgb(173,17,5); }
#sim-list { list-style: none; margin: 0; padding: 0; font-size: 12px; }
#sim-list li { display: flex; justify-content: space-between; align-items: center; padding: 2px 0; }
#sim-list button { padding: 0 8px; font-size: 12px; }
"""#
}
