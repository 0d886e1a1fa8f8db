extension MapPage {
    /// The page's script: loads the fences (paginated), replays and follows the event stream (SSE read
    /// with `fetch`, so a bearer token can be sent, and with `locations=true`, so device dots move with
    /// every accepted update and not only at events), draws in Web Mercator, polls `/v1/simulations` for
    /// the positions of simulated devices, and starts drives.
    static let script = #"""
'use strict';
(() => {
  const COLORS = { entry: 'rgba(7,144,30,0.8)', exit: 'rgba(173,17,5,0.8)', dwell: 'rgba(17,97,195,0.8)', none: 'rgba(119,119,119,1)' };
  // inside (initial trigger) counts as being in the fence; cross (in and out between two fixes) as leaving it.
  const KIND_COLOR = { entry: COLORS.entry, inside: COLORS.entry, exit: COLORS.exit, cross: COLORS.exit, dwell: COLORS.dwell };
  const VERBS = { entry: 'Entered', exit: 'Exited', dwell: 'Dwelling in', cross: 'Crossed', inside: 'Inside' };
  const DEVICE_COLORS = ['#e6194b', '#4363d8', '#f58231', '#911eb4', '#008080', '#9a6324', '#000075', '#f032e6', '#808000', '#3cb44b'];
  const SVG_NS = 'http://www.w3.org/2000/svg';
  const EARTH = 40075016.686;           // equatorial circumference, metres (Web Mercator world width)
  const RADIUS = 6371008.8;             // mean Earth radius, metres
  const MAX_LAT = 85.05112878;
  const LOG_LIMIT = 300, EVENT_LIMIT = 5000;

  const params = new URLSearchParams(location.search);
  const tileTemplate = tilesParameter(params.get('tiles'));
  const defaultRadius = positiveNumber(params.get('radius')) || 300;  // the service's defaultRadius
  if (params.has('token')) {
    sessionStorage.setItem('perimeter-token', params.get('token'));
    params.delete('token');
    history.replaceState(null, '', location.pathname + (params.toString() ? '?' + params : ''));
  }
  let token = sessionStorage.getItem('perimeter-token') || '';

  const $ = (id) => document.getElementById(id);
  const body = document.body, svg = $('svg'), fenceLayer = $('fences'), deviceLayer = $('devices');
  const banner = $('banner'), log = $('log'), filterSelect = $('device-filter'), mapBox = $('map');

  const state = {
    fences: new Map(),     // id -> {id, name, shapes, bounds, center, el, paths, label}
    last: new Map(),       // fence id -> Map(device id -> {type, sequence})
    devices: new Map(),    // device id -> {lat, lon, t, el, color}
    events: [],            // the latest events, oldest first
    lastSequence: 0,
    filter: '',
    view: { scale: 1, tx: 0, ty: 0 },
    bounds: null,
    simulationsAvailable: true,
  };

  // MARK: helpers

  function positiveNumber(text) {
    const value = Number(text);
    return Number.isFinite(value) && value > 0 ? value : 0;
  }

  function tilesParameter(text) {
    if (!text) return null;
    if (!/^https?:\/\//i.test(text) || !text.includes('{z}') || !text.includes('{x}') || !text.includes('{y}')) {
      console.warn('ignoring ?tiles=: it must be an http(s) URL with {z}, {x} and {y}');
      return null;
    }
    return text;
  }

  function headers(extra) {
    const h = Object.assign({}, extra || {});
    if (token) h['Authorization'] = 'Bearer ' + token;
    return h;
  }

  async function api(path, options) {
    const opts = Object.assign({ cache: 'no-store' }, options || {});
    opts.headers = headers(opts.headers);
    const response = await fetch(path, opts);
    if (!response.ok) {
      let detail = 'HTTP ' + response.status;
      try { const problem = await response.json(); if (problem && problem.detail) detail = problem.detail; } catch (_) {}
      const error = new Error(detail);
      error.status = response.status;
      throw error;
    }
    return response.status === 204 ? null : response.json();
  }

  const pad = (n) => String(n).padStart(2, '0');
  function clock(time, seconds) {
    const d = new Date(time);
    if (isNaN(d)) return '--:--';
    return pad(d.getHours()) + ':' + pad(d.getMinutes()) + (seconds ? ':' + pad(d.getSeconds()) : '');
  }

  function svgElement(name, attributes) {
    const el = document.createElementNS(SVG_NS, name);
    for (const key in attributes) el.setAttribute(key, attributes[key]);
    return el;
  }

  // MARK: projection (Web Mercator, world square [0,1]²)

  function project(lon, lat) {
    const phi = Math.max(-MAX_LAT, Math.min(MAX_LAT, lat)) * Math.PI / 180;
    return [(lon + 180) / 360, (1 - Math.log(Math.tan(Math.PI / 4 + phi / 2)) / Math.PI) / 2];
  }

  function metresToWorld(metres, lat) {
    return metres / (EARTH * Math.max(0.01, Math.cos(Math.max(-MAX_LAT, Math.min(MAX_LAT, lat)) * Math.PI / 180)));
  }

  const px = (p) => [p[0] * state.view.scale + state.view.tx, p[1] * state.view.scale + state.view.ty];

  // A geodesic circle (on the sphere) as a ring of lon/lat positions.
  function circleRing(lon, lat, metres) {
    const rad = Math.PI / 180, d = metres / RADIUS, phi1 = lat * rad, lambda1 = lon * rad, ring = [];
    for (let k = 0; k <= 72; k++) {
      const theta = 2 * Math.PI * k / 72;
      const phi2 = Math.asin(Math.sin(phi1) * Math.cos(d) + Math.cos(phi1) * Math.sin(d) * Math.cos(theta));
      const lambda2 = lambda1 + Math.atan2(Math.sin(theta) * Math.sin(d) * Math.cos(phi1), Math.cos(d) - Math.sin(phi1) * Math.sin(phi2));
      ring.push([lambda2 / rad, phi2 / rad]);
    }
    return ring;
  }

  // MARK: fences

  function fenceNumber(properties, keys) {
    for (const key of keys) {
      const value = Number(properties[key]);
      if (properties[key] !== undefined && properties[key] !== null && Number.isFinite(value)) return value;
    }
    return null;
  }

  // Turns a geometry into shapes in world coordinates: areas (rings, even-odd) and strokes (corridors
  // and polygon buffers, with a width in world units).
  function shapesOf(geometry, properties, shapes) {
    if (!geometry) return shapes;
    const radius = fenceNumber(properties, ['perimeter:radius', 'MBX_GEOFENCE_POINT_RADIUS']) || defaultRadius;
    const buffer = Math.max(0, fenceNumber(properties, ['perimeter:buffer']) || 0);
    const ring = (positions) => positions.map((p) => project(p[0], p[1]));
    const polygon = (rings) => {
      shapes.push({ kind: 'area', rings: rings.map(ring) });
      if (buffer > 0 && rings.length && rings[0].length) {
        const lat = rings[0][0][1];
        shapes.push({ kind: 'buffer', lines: rings.map(ring), width: 2 * metresToWorld(buffer, lat) });
      }
    };
    const circle = (p) => shapes.push({ kind: 'area', rings: [ring(circleRing(p[0], p[1], radius + buffer))] });
    const corridor = (lines) => {
      const lats = lines.flat().map((p) => p[1]);
      const lat = lats.length ? lats.reduce((a, b) => a + b, 0) / lats.length : 0;
      shapes.push({ kind: 'corridor', lines: lines.map(ring), width: 2 * metresToWorld(radius + buffer, lat) });
    };
    switch (geometry.type) {
      case 'Polygon': polygon(geometry.coordinates); break;
      case 'MultiPolygon': geometry.coordinates.forEach(polygon); break;
      case 'Point': circle(geometry.coordinates); break;
      case 'MultiPoint': geometry.coordinates.forEach(circle); break;
      case 'LineString': corridor([geometry.coordinates]); break;
      case 'MultiLineString': corridor(geometry.coordinates); break;
      case 'GeometryCollection': (geometry.geometries || []).forEach((g) => shapesOf(g, properties, shapes)); break;
      default: console.warn('cannot draw geometry type', geometry.type);
    }
    return shapes;
  }

  function boundsOf(shapes) {
    let b = null;
    const grow = (p, pad) => {
      if (!b) b = [p[0], p[1], p[0], p[1]];
      b[0] = Math.min(b[0], p[0] - pad); b[1] = Math.min(b[1], p[1] - pad);
      b[2] = Math.max(b[2], p[0] + pad); b[3] = Math.max(b[3], p[1] + pad);
    };
    for (const shape of shapes) {
      for (const line of shape.rings || shape.lines) for (const p of line) grow(p, shape.kind === 'area' ? 0 : shape.width / 2);
    }
    return b;
  }

  function addFence(feature) {
    const id = feature.id === undefined || feature.id === null ? null : String(feature.id);
    if (id === null) return;
    const properties = feature.properties || {};
    const shapes = shapesOf(feature.geometry, properties, []);
    const bounds = boundsOf(shapes);
    const el = svgElement('g', { 'data-fence-id': id, 'data-fill': COLORS.none });
    const name = typeof properties.name === 'string' && properties.name ? properties.name : id;
    const title = svgElement('title', {});
    title.textContent = name + (properties['perimeter:group'] ? ' (' + properties['perimeter:group'] + ')' : '');
    el.appendChild(title);
    const paths = shapes.map((shape) => {
      const path = svgElement('path', { class: shape.kind });
      if (shape.kind === 'area') path.setAttribute('fill-rule', 'evenodd');
      el.appendChild(path);
      return path;
    });
    const label = svgElement('text', { 'text-anchor': 'middle' });
    label.textContent = name;
    el.appendChild(label);
    fenceLayer.appendChild(el);
    state.fences.set(id, { id, name, shapes, bounds, el, paths, label });
    applyFill(state.fences.get(id));
  }

  function pathData(lines, close) {
    let d = '';
    for (const line of lines) {
      line.forEach((p, i) => {
        const q = px(p);
        d += (i ? 'L' : 'M') + q[0].toFixed(1) + ' ' + q[1].toFixed(1);
      });
      if (close && line.length) d += 'Z';
    }
    return d;
  }

  function drawFence(fence) {
    fence.shapes.forEach((shape, i) => {
      const path = fence.paths[i];
      path.setAttribute('d', pathData(shape.rings || shape.lines, shape.kind === 'area'));
      if (shape.kind !== 'area') path.setAttribute('stroke-width', Math.max(1, shape.width * state.view.scale).toFixed(1));
    });
    if (fence.bounds) {
      const a = px([fence.bounds[0], fence.bounds[1]]), b = px([fence.bounds[2], fence.bounds[3]]);
      fence.label.setAttribute('x', ((a[0] + b[0]) / 2).toFixed(1));
      fence.label.setAttribute('y', ((a[1] + b[1]) / 2).toFixed(1));
      fence.label.style.display = Math.abs(b[0] - a[0]) > 50 ? '' : 'none';
    }
  }

  function fillFor(fenceID) {
    const byDevice = state.last.get(fenceID);
    if (!byDevice) return COLORS.none;
    let latest = null;
    if (state.filter) latest = byDevice.get(state.filter) || null;
    else for (const record of byDevice.values()) if (!latest || record.sequence > latest.sequence) latest = record;
    return latest ? (KIND_COLOR[latest.type] || COLORS.none) : COLORS.none;
  }

  function applyFill(fence) {
    const color = fillFor(fence.id);
    fence.el.setAttribute('data-fill', color);
    fence.shapes.forEach((shape, i) => {
      if (shape.kind === 'area') fence.paths[i].setAttribute('fill', color);
      else fence.paths[i].setAttribute('stroke', color);
    });
  }

  async function loadFences() {
    body.dataset.fences = 'loading';
    let cursor = null;
    const seen = new Set();
    do {
      const page = await api('/v1/fences?limit=1000' + (cursor ? '&cursor=' + encodeURIComponent(cursor) : ''));
      for (const feature of page.features || []) addFence(feature);
      cursor = page.nextCursor || null;
      if (cursor && seen.has(cursor)) break;
      if (cursor) seen.add(cursor);
    } while (cursor);
    let b = null;
    for (const fence of state.fences.values()) {
      if (!fence.bounds) continue;
      b = b ? [Math.min(b[0], fence.bounds[0]), Math.min(b[1], fence.bounds[1]), Math.max(b[2], fence.bounds[2]), Math.max(b[3], fence.bounds[3])] : fence.bounds.slice();
    }
    state.bounds = b;
    fit();
    body.dataset.fenceCount = String(state.fences.size);
    body.dataset.fences = 'ready';
  }

  // MARK: view: fit, pan, zoom, tiles

  function fit() {
    const w = mapBox.clientWidth || 800, h = mapBox.clientHeight || 600;
    const b = state.bounds || [0, 0, 1, 1];
    const bw = Math.max(b[2] - b[0], 1e-9), bh = Math.max(b[3] - b[1], 1e-9);
    const scale = Math.min(w / (bw * 1.1), h / (bh * 1.1), 256 * Math.pow(2, 21));
    state.view = { scale, tx: w / 2 - (b[0] + b[2]) / 2 * scale, ty: h / 2 - (b[1] + b[3]) / 2 * scale };
    render();
  }

  let frame = 0;
  function render() {
    if (frame) return;
    frame = requestAnimationFrame(() => {
      frame = 0;
      for (const fence of state.fences.values()) drawFence(fence);
      for (const device of state.devices.values()) placeDevice(device);
      drawTiles();
    });
  }

  const tileCache = new Map();
  function drawTiles() {
    if (!tileTemplate) return;
    const box = $('tiles'), w = mapBox.clientWidth, h = mapBox.clientHeight, v = state.view;
    const z = Math.max(0, Math.min(19, Math.round(Math.log2(v.scale / 256))));
    const n = Math.pow(2, z), size = v.scale / n;
    const x0 = Math.floor(-v.tx / size), x1 = Math.floor((w - v.tx) / size);
    const y0 = Math.max(0, Math.floor(-v.ty / size)), y1 = Math.min(n - 1, Math.floor((h - v.ty) / size));
    const wanted = new Set();
    if ((x1 - x0 + 1) * (y1 - y0 + 1) <= 200) {
      for (let x = x0; x <= x1; x++) for (let y = y0; y <= y1; y++) {
        const wx = ((x % n) + n) % n, key = z + '/' + x + '/' + y;
        wanted.add(key);
        let img = tileCache.get(key);
        if (!img) {
          img = document.createElement('img');
          img.alt = '';
          img.src = tileTemplate.replace('{z}', z).replace('{x}', wx).replace('{y}', y);
          tileCache.set(key, img);
          box.appendChild(img);
        }
        img.style.left = (x * size + v.tx) + 'px';
        img.style.top = (y * size + v.ty) + 'px';
        img.style.width = img.style.height = (size + 0.5) + 'px';
      }
    }
    for (const [key, img] of tileCache) if (!wanted.has(key)) { img.remove(); tileCache.delete(key); }
  }

  function zoomAt(factor, x, y) {
    const v = state.view;
    const scale = Math.max(64, Math.min(256 * Math.pow(2, 22), v.scale * factor));
    const f = scale / v.scale;
    state.view = { scale, tx: x - (x - v.tx) * f, ty: y - (y - v.ty) * f };
    moving();
    render();
  }

  let movingTimer = 0;
  function moving() {
    svg.classList.add('moving');
    clearTimeout(movingTimer);
    movingTimer = setTimeout(() => svg.classList.remove('moving'), 250);
  }

  mapBox.addEventListener('wheel', (e) => {
    e.preventDefault();
    const r = mapBox.getBoundingClientRect();
    zoomAt(Math.exp(-e.deltaY * 0.0015), e.clientX - r.left, e.clientY - r.top);
  }, { passive: false });
  let drag = null;
  mapBox.addEventListener('pointerdown', (e) => {
    if (e.target.closest('button')) return;
    drag = { x: e.clientX, y: e.clientY, tx: state.view.tx, ty: state.view.ty };
    mapBox.setPointerCapture(e.pointerId);
    mapBox.classList.add('dragging');
  });
  mapBox.addEventListener('pointermove', (e) => {
    if (!drag) return;
    state.view.tx = drag.tx + e.clientX - drag.x;
    state.view.ty = drag.ty + e.clientY - drag.y;
    moving();
    render();
  });
  const endDrag = () => { drag = null; mapBox.classList.remove('dragging'); };
  mapBox.addEventListener('pointerup', endDrag);
  mapBox.addEventListener('pointercancel', endDrag);
  mapBox.addEventListener('dblclick', (e) => {
    const r = mapBox.getBoundingClientRect();
    zoomAt(2, e.clientX - r.left, e.clientY - r.top);
  });
  $('fit').addEventListener('click', fit);
  window.addEventListener('resize', () => { moving(); fit(); });
  if (tileTemplate) {
    let host = '';
    try { host = new URL(tileTemplate.replace(/[{}]/g, '')).host; } catch (_) {}
    $('attribution').textContent = 'Tiles: ' + host;
  }

  // MARK: devices

  function device(id) {
    let d = state.devices.get(id);
    if (!d) {
      const color = DEVICE_COLORS[state.devices.size % DEVICE_COLORS.length];
      const el = svgElement('g', { 'data-device-id': id });
      const dot = svgElement('circle', { r: 7, fill: color });
      const label = svgElement('text', { x: 10, y: 4, fill: color });
      label.textContent = id;
      el.append(dot, label);
      el.style.display = 'none';
      deviceLayer.appendChild(el);
      d = { id, lat: null, lon: null, t: -Infinity, el, color };
      state.devices.set(id, d);
      const option = document.createElement('option');
      option.value = id;
      option.textContent = id;
      filterSelect.appendChild(option);
    }
    return d;
  }

  function moveDevice(id, lat, lon, time) {
    if (!Number.isFinite(lat) || !Number.isFinite(lon)) return;
    const d = device(id), t = Date.parse(time);
    if (Number.isFinite(t) && t < d.t) return;
    d.lat = lat; d.lon = lon; d.t = Number.isFinite(t) ? t : d.t;
    d.el.setAttribute('data-latitude', String(lat));
    d.el.setAttribute('data-longitude', String(lon));
    placeDevice(d);
  }

  function placeDevice(d) {
    if (d.lat === null) return;
    const p = px(project(d.lon, d.lat));
    d.el.style.transform = 'translate(' + p[0].toFixed(1) + 'px,' + p[1].toFixed(1) + 'px)';
    d.el.style.display = !state.filter || state.filter === d.id ? '' : 'none';
  }

  // MARK: events

  function fenceName(event) {
    const fence = state.fences.get(event.fenceId);
    return event.fenceName || (fence && fence.name) || event.fenceId;
  }

  function visible(event) { return !state.filter || event.deviceId === state.filter; }

  function showBanner(event) {
    const verb = VERBS[event.type] || event.type;
    banner.textContent = verb + ' ' + fenceName(event) + ' at ' + clock(event.time, false);
    banner.className = event.type;
    banner.title = event.deviceId + ', ' + event.time;
    banner.dataset.eventDevice = event.deviceId;
    banner.dataset.eventFence = event.fenceId;
    banner.dataset.eventType = event.type;
    banner.dataset.sequence = String(event.sequence);
  }

  function logItem(event) {
    const li = document.createElement('li');
    li.className = event.type;
    li.dataset.sequence = String(event.sequence);
    const time = document.createElement('span');
    time.className = 'time';
    time.textContent = clock(event.time, true);
    const kind = document.createElement('span');
    kind.className = 'kind';
    kind.textContent = (VERBS[event.type] || event.type) + ' ';
    li.append(time, event.deviceId + ' ', kind, fenceName(event));
    return li;
  }

  function onEvent(event) {
    if (!event || typeof event.sequence !== 'number' || event.sequence <= state.lastSequence) return;
    state.lastSequence = event.sequence;
    body.dataset.lastSequence = String(event.sequence);
    state.events.push(event);
    if (state.events.length > EVENT_LIMIT) state.events.splice(0, state.events.length - EVENT_LIMIT);
    let byDevice = state.last.get(event.fenceId);
    if (!byDevice) state.last.set(event.fenceId, byDevice = new Map());
    byDevice.set(event.deviceId, { type: event.type, sequence: event.sequence });
    moveDevice(event.deviceId, event.latitude, event.longitude, event.time);
    const fence = state.fences.get(event.fenceId);
    if (fence) applyFill(fence);
    if (visible(event)) {
      showBanner(event);
      log.prepend(logItem(event));
      while (log.childElementCount > LOG_LIMIT) log.lastElementChild.remove();
    }
  }

  function applyFilter() {
    state.filter = filterSelect.value;
    for (const fence of state.fences.values()) applyFill(fence);
    for (const d of state.devices.values()) placeDevice(d);
    log.replaceChildren();
    const shown = state.events.filter(visible);
    for (const event of shown.slice(-LOG_LIMIT).reverse()) log.appendChild(logItem(event));
    if (shown.length) showBanner(shown[shown.length - 1]);
    else { banner.textContent = 'No events yet'; banner.className = ''; }
  }
  filterSelect.addEventListener('change', applyFilter);

  // MARK: the event stream (Server-Sent Events read through fetch, so the token can be sent)

  function connection(status, text) {
    body.dataset.stream = status;
    const el = $('connection');
    el.className = status;
    el.textContent = text || status;
  }

  // A frame is either an event (with an id) or, with ?locations=true, a device position
  // (`event: location`, no id): positions only move the dot, between the events.
  function handleBlock(block) {
    let data = '', type = 'message';
    for (const line of block.split('\n')) {
      if (line.startsWith('data:')) data += (data ? '\n' : '') + line.slice(line.charAt(5) === ' ' ? 6 : 5);
      else if (line.startsWith('event:')) type = line.slice(6).trim();
    }
    if (!data) return;
    try {
      const value = JSON.parse(data);
      if (type === 'location') {
        moveDevice(value.deviceId, value.latitude, value.longitude, value.time);
        body.dataset.lastLocation = value.deviceId + ' ' + value.latitude + ' ' + value.longitude;
      } else {
        onEvent(value);
      }
    } catch (e) { console.warn('bad event frame', e); }
  }

  async function follow() {
    let delay = 1000;
    for (;;) {
      connection('connecting');
      try {
        const response = await fetch('/v1/events/stream?after=' + state.lastSequence + '&locations=true', { headers: headers(), cache: 'no-store' });
        if (!response.ok || !response.body) {
          const error = new Error('HTTP ' + response.status);
          error.status = response.status;
          throw error;
        }
        connection('open', 'live');
        delay = 1000;
        const reader = response.body.getReader(), decoder = new TextDecoder();
        let buffer = '';
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          buffer += decoder.decode(value, { stream: true }).replace(/\r\n?/g, '\n');
          let end;
          while ((end = buffer.indexOf('\n\n')) >= 0) {
            handleBlock(buffer.slice(0, end));
            buffer = buffer.slice(end + 2);
          }
        }
      } catch (e) {
        console.warn('event stream:', e.message);
        if (e.status === 401 || e.status === 403) connection('retrying', 'token needed (Access)');
      }
      if (body.dataset.stream !== 'retrying') connection('retrying', 'reconnecting');
      await new Promise((resolve) => setTimeout(resolve, delay));
      delay = Math.min(delay * 2, 15000);
    }
  }

  // MARK: simulated drives

  const simStatus = $('sim-status');
  function simMessage(text, isError) {
    simStatus.textContent = text;
    simStatus.className = isError ? 'error' : '';
  }

  $('sim-track').addEventListener('change', () => { $('sim-geojson').hidden = $('sim-track').value !== 'paste'; });

  // One point per fence to drive through: the centre of its largest part (a MultiPolygon's centre may
  // lie between its parts).
  function fenceCenters() {
    const centers = [];
    for (const fence of state.fences.values()) {
      let best = null, bestSize = -1;
      for (const shape of fence.shapes) {
        const b = boundsOf([shape]);
        if (!b) continue;
        const size = (b[2] - b[0]) * (b[3] - b[1]);
        if (size > bestSize) { best = b; bestSize = size; }
      }
      if (best) centers.push(unproject([(best[0] + best[2]) / 2, (best[1] + best[3]) / 2]));
    }
    return centers;
  }

  function unproject(p) {
    const lon = p[0] * 360 - 180;
    const lat = Math.atan(Math.sinh(Math.PI * (1 - 2 * p[1]))) * 180 / Math.PI;
    return [Math.round(lon * 1e6) / 1e6, Math.round(lat * 1e6) / 1e6];
  }

  function trackPath(kind) {
    if (!state.bounds) throw new Error('there are no fences to drive through');
    const b = state.bounds, padX = (b[2] - b[0]) * 0.08 + 1e-6, padY = (b[3] - b[1]) * 0.08 + 1e-6;
    if (kind === 'diagonal') {
      return { type: 'LineString', coordinates: [unproject([b[0] - padX, b[3] + padY]), unproject([b[2] + padX, b[1] - padY])] };
    }
    // tour: greedy nearest neighbour through the fence centres, from the westernmost one
    const left = fenceCenters().sort((a, c) => a[0] - c[0]);
    const route = [];
    let here = left.shift();
    while (here) {
      route.push(here);
      let best = -1, bestD = Infinity;
      left.forEach((c, i) => { const d = (c[0] - here[0]) ** 2 + (c[1] - here[1]) ** 2; if (d < bestD) { bestD = d; best = i; } });
      here = best >= 0 ? left.splice(best, 1)[0] : null;
    }
    const start = unproject([b[0] - padX, (b[1] + b[3]) / 2]), end = unproject([b[2] + padX, (b[1] + b[3]) / 2]);
    return { type: 'LineString', coordinates: [start].concat(route, [end]) };
  }

  function pastedPath() {
    let value;
    try { value = JSON.parse($('sim-geojson').value); } catch (e) { throw new Error('the pasted text is not JSON: ' + e.message); }
    if (value && value.type === 'FeatureCollection') {
      value = (value.features || []).find((f) => f && f.geometry && f.geometry.type === 'LineString');
      if (!value) throw new Error('the FeatureCollection holds no LineString feature');
    }
    return value;
  }

  $('sim-start').addEventListener('click', async () => {
    try {
      const kind = $('sim-track').value;
      const path = kind === 'paste' ? pastedPath() : trackPath(kind);
      const request = {
        deviceId: $('sim-device').value.trim(),
        path,
        speed: Number($('sim-speed').value),
        interval: Number($('sim-interval').value),
        timeScale: Number($('sim-scale').value),
      };
      const started = await api('/v1/simulations', { method: 'POST', body: JSON.stringify(request), headers: { 'Content-Type': 'application/json' } });
      simMessage('Started ' + started.id + ': ' + started.updates + ' updates for ' + started.deviceId + '.');
      pollSimulations();
    } catch (e) {
      simMessage(e.message, true);
    }
  });

  function renderSimulations(list) {
    const ul = $('sim-list');
    ul.replaceChildren();
    for (const sim of list.slice(-10).reverse()) {
      const li = document.createElement('li');
      li.dataset.simulationId = sim.id;
      li.dataset.status = sim.status;
      const text = document.createElement('span');
      text.textContent = sim.id + ' · ' + sim.deviceId + ' · ' + sim.status + ' ' + sim.sent + '/' + sim.updates;
      if (sim.error) text.title = sim.error;
      li.appendChild(text);
      if (sim.status === 'running') {
        const stop = document.createElement('button');
        stop.type = 'button';
        stop.textContent = 'Stop';
        stop.addEventListener('click', async () => {
          try { await api('/v1/simulations/' + encodeURIComponent(sim.id), { method: 'DELETE' }); pollSimulations(); }
          catch (e) { simMessage(e.message, true); }
        });
        li.appendChild(stop);
      }
      ul.appendChild(li);
    }
  }

  let pollTimer = 0;
  async function pollSimulations() {
    clearTimeout(pollTimer);
    if (!state.simulationsAvailable) return;
    let running = false;
    try {
      const result = await api('/v1/simulations');
      const list = result.simulations || [];
      renderSimulations(list);
      for (const sim of list) {
        if (sim.position) moveDevice(sim.deviceId, sim.position.latitude, sim.position.longitude, sim.position.time);
        running = running || sim.status === 'running';
      }
    } catch (e) {
      if (e.status === 404 || e.status === 405) {
        state.simulationsAvailable = false;
        $('simulation').hidden = true;
        return;
      }
    }
    pollTimer = setTimeout(pollSimulations, running ? 500 : 3000);
  }

  // MARK: access token

  const tokenInput = $('token');
  tokenInput.value = token;
  tokenInput.addEventListener('change', () => {
    token = tokenInput.value.trim();
    if (token) sessionStorage.setItem('perimeter-token', token); else sessionStorage.removeItem('perimeter-token');
    location.reload();
  });

  // MARK: start

  (async () => {
    try {
      await loadFences();
    } catch (e) {
      body.dataset.fences = 'error';
      banner.textContent = 'Cannot load the fences: ' + e.message;
      if (e.status === 401 || e.status === 403) tokenInput.focus();
      return;
    }
    follow();
    pollSimulations();
  })();
})();
"""#
}
