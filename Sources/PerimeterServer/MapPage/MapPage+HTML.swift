extension MapPage {
    /// The page's HTML (the script and the style sheet are separate resources so the CSP needs no
    /// `unsafe-inline`).
    static let html = #"""
<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Perimeter — live map</title>
<link rel="stylesheet" href="/map.css">
<script src="/map.js" defer></script>
</head>
<body data-fences="loading" data-stream="connecting" data-fence-count="0">
<header>
  <h1>Perimeter</h1>
  <div id="banner" role="status" aria-live="polite">Waiting for events…</div>
  <div id="connection" title="event stream">connecting</div>
</header>
<main>
  <section id="map" aria-label="map of the fences">
    <div id="tiles"></div>
    <svg id="svg" xmlns="http://www.w3.org/2000/svg">
      <g id="fences"></g>
      <g id="devices"></g>
    </svg>
    <div id="map-buttons">
      <button id="fit" type="button" title="fit every fence in view">Fit</button>
    </div>
    <div id="legend">
      <span class="swatch entry"></span>entry
      <span class="swatch exit"></span>exit
      <span class="swatch dwell"></span>dwell
      <span class="swatch none"></span>no event
    </div>
    <div id="attribution"></div>
  </section>
  <aside>
    <section>
      <h2>Devices</h2>
      <label>Show <select id="device-filter"><option value="">all devices</option></select></label>
    </section>
    <section id="log-section">
      <h2>Events</h2>
      <ol id="log" reversed></ol>
    </section>
    <section id="simulation">
      <h2>Simulated drive</h2>
      <label>Track <select id="sim-track">
        <option value="tour">Tour of every fence</option>
        <option value="diagonal">Diagonal across the map</option>
        <option value="paste">Paste a GeoJSON LineString…</option>
      </select></label>
      <textarea id="sim-geojson" rows="5" hidden placeholder='{"type": "LineString", "coordinates": [[lon, lat], …]}'></textarea>
      <div class="row">
        <label>Device <input id="sim-device" value="sim-1" maxlength="256"></label>
        <label>Speed m/s <input id="sim-speed" type="number" value="15" min="0.1" step="any"></label>
      </div>
      <div class="row">
        <label>Every s <input id="sim-interval" type="number" value="1" min="0.1" step="any"></label>
        <label>Time × <input id="sim-scale" type="number" value="10" min="0.1" step="any"></label>
      </div>
      <button id="sim-start" type="button">Start drive</button>
      <div id="sim-status" role="status"></div>
      <ul id="sim-list"></ul>
    </section>
    <section>
      <h2>Access</h2>
      <label>Token <input id="token" type="password" autocomplete="off" placeholder="only if the server needs one"></label>
    </section>
  </aside>
</main>
</body>
</html>
"""#
}
