// paraply status page. Every second it fetches /status.json (the report:
// status, workers, the coordinator statistics of the last interval, hot
// tables, diagnosis) and /history.json (one sample per second for the last
// ten minutes), and redraws. Plain JavaScript, no libraries, nothing fetched
// from elsewhere.
//
// The page's own query string is passed on: /?interval=30s shows the
// coordinator statistics and the diagnosis over the last 30 seconds.
//
// Each chart records how many data points it drew in its data-points
// attribute (the browser test reads it).
'use strict';

const POLL_MS = 1000;
const TIMEOUT_MS = 3000;
const MIN_SPAN_S = 20; // the charts' time axis covers at least this much
const GAP_S = 3.5; // samples further apart than this are not joined
const UTIL_WINDOW = 5; // polls over which per-worker utilization is computed

const COLOR = {
  lag: '#d9480f',
  applied: '#2f6fdd',
  received: '#9aa5b1',
  exec: '#2f6fdd',
  commit: '#f59f00',
  turn: '#9c36b5',
  idle: '#e3e6eb',
  grid: '#eceef2',
  axis: '#6b7280',
};

// The coordinator's waits, in the words of MySQL's "Multi-threaded replica
// statistics" where they have one.
const WAITS = [
  ['dependency', 'nothing was ready (clock conflicts)'],
  ['workers_busy', 'work was ready, every worker busy'],
  ['queue_full', 'the look-ahead window was full'],
  ['commit_order', 'workers waiting for their turn to commit'],
  ['source', 'idle: everything handed out, waiting for the source (not a problem)'],
];

const interval = new URLSearchParams(location.search).get('interval') || '10s';
let lastAnswer = 0; // Date.now() of the last answer
let lastData = null; // {report, history}, redrawn on resize
const workerSnaps = []; // the last UTIL_WINDOW {at, workers} snapshots

// ---- DOM helpers ----------------------------------------------------------

const $ = (id) => document.getElementById(id);

// el builds an element: attrs may hold className, dataset, style, title and
// plain attributes; children are nodes or text.
function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'className') e.className = v;
    else if (k === 'dataset') Object.assign(e.dataset, v);
    else if (k === 'style') e.style.cssText = v;
    else e.setAttribute(k, v);
  }
  for (const c of children.flat()) {
    if (c === undefined || c === null || c === false) continue;
    e.append(c instanceof Node ? c : String(c));
  }
  return e;
}

function fill(parent, ...children) {
  parent.replaceChildren(...children.flat().filter((c) => c !== null && c !== undefined && c !== false));
}

// ---- formatting -----------------------------------------------------------

function fmtInt(n) {
  return Math.round(n || 0).toLocaleString('en-US');
}

function fmtRate(n) {
  n = n || 0;
  return n < 10 && n !== 0 ? n.toFixed(1) : fmtInt(n);
}

function fmtPct(x) {
  return (100 * (x || 0)).toFixed(0) + '%';
}

function fmtSecs(s) {
  s = s || 0;
  if (s < 10) return s.toFixed(2) + ' s';
  if (s < 100) return s.toFixed(1) + ' s';
  return fmtInt(s) + ' s';
}

// fmtDur prints a duration in seconds the way a person reads a lag.
function fmtDur(s) {
  s = Math.max(0, s || 0);
  if (s < 10) return s.toFixed(1) + ' s';
  if (s < 60) return Math.round(s) + ' s';
  if (s < 3600) return Math.floor(s / 60) + ' m ' + String(Math.floor(s % 60)).padStart(2, '0') + ' s';
  if (s < 86400) return Math.floor(s / 3600) + ' h ' + String(Math.floor((s % 3600) / 60)).padStart(2, '0') + ' m';
  return Math.floor(s / 86400) + ' d ' + Math.floor((s % 86400) / 3600) + ' h';
}

function fmtBytes(b) {
  b = b || 0;
  if (b < 1e3) return b + ' B';
  if (b < 1e6) return (b / 1e3).toFixed(1) + ' kB';
  if (b < 1e9) return (b / 1e6).toFixed(1) + ' MB';
  return (b / 1e9).toFixed(2) + ' GB';
}

// when parses a Go time; null for the zero time.
function when(s) {
  if (!s || s.startsWith('0001-')) return null;
  const t = Date.parse(s);
  return Number.isNaN(t) ? null : t;
}

function ago(t, now) {
  if (t === null) return 'never';
  return now - t < 1000 ? 'just now' : fmtDur((now - t) / 1000) + ' ago';
}

function clock(ms) {
  return new Date(ms).toLocaleTimeString('en-GB', { hour12: false });
}

// ---- polling --------------------------------------------------------------

async function getJSON(path) {
  const r = await fetch(path, { cache: 'no-store', signal: AbortSignal.timeout(TIMEOUT_MS) });
  if (!r.ok) throw new Error(path + ': HTTP ' + r.status);
  return r.json();
}

async function poll() {
  let data = null;
  try {
    const [report, history] = await Promise.all([
      getJSON('status.json?interval=' + encodeURIComponent(interval)),
      getJSON('history.json'),
    ]);
    data = { report, history: history || [] };
    lastAnswer = Date.now();
    showOffline(null);
  } catch (err) {
    showOffline(err);
  }
  if (data) {
    try {
      render(data);
    } catch (err) {
      // A bug in this page, not paraply being down: say so.
      console.error(err);
      $('footer').textContent = 'The page failed to draw: ' + err;
    }
  }
  setTimeout(poll, POLL_MS);
}

function showOffline(err) {
  const banner = $('offline');
  document.body.classList.toggle('stale', !!err);
  if (!err) {
    banner.hidden = true;
    return;
  }
  const since = lastAnswer ? 'Last answer at ' + clock(lastAnswer) + ' (' + fmtDur((Date.now() - lastAnswer) / 1000) + ' ago). ' : '';
  const why = err.name === 'TimeoutError' ? 'no answer within ' + TIMEOUT_MS / 1000 + ' s' : String(err.message || err);
  $('offline-detail').textContent = since + 'Retrying every second (' + why + ').';
  if (!lastAnswer) $('endpoints').textContent = 'no answer from ' + location.host + ' yet';
  banner.hidden = false;
  document.title = 'paraply: not answering';
}

// ---- rendering ------------------------------------------------------------

function render(data) {
  lastData = data;
  const { report } = data;
  const st = report.status;
  renderHeader(st, report.interval);
  renderDiagnosis(report.diagnosis || [], report.interval);
  drawCharts(data);
  renderCoordinator(report.interval, atOnce(st));
  renderWorkers(report.workers || [], st);
  renderPipeline(st);
  renderHot(report.hot_tables || []);
  fill($('footer'),
    'Updated ' + clock(Date.now()) + ' · ',
    el('a', { href: 'metrics' }, '/metrics'), ' · ',
    el('a', { href: 'status.json?interval=' + encodeURIComponent(interval) }, '/status.json'), ' · ',
    el('a', { href: 'history.json' }, '/history.json'));
}

// atOnce is how many workers may have work at once (the --workers auto
// limit, or the pool): the workers' time shares are of these.
function atOnce(st) {
  return (st.Scheduler && st.Scheduler.Limit) || st.Workers;
}

// workersChip shows the fixed worker count, or with --workers auto how
// many apply at once and why (the reason in the tooltip).
function workersChip(st) {
  const sch = st.Scheduler || {};
  if (!st.AutoWorkers) return el('span', { className: 'chip' }, el('b', {}, st.Workers), ' workers');
  return el('span', { className: 'chip', id: 'workers-limit', title: sch.LimitReason || '' },
    'workers auto: ', el('b', {}, sch.Limit), ' of ', st.Workers, ' at once');
}

function renderHeader(st, iv) {
  fill($('endpoints'), st.Source || '?', el('span', { className: 'arrow' }, '→'), st.Target || '?');
  const rcv = st.Receiver || {};
  const chips = [
    el('span', { className: 'chip' }, 'dependency ', el('b', {}, st.Dependency || '?')),
    workersChip(st),
    el('span', { className: 'chip' }, 'commit order ', el('b', {}, st.PreserveOrder ? 'preserved' : 'not preserved')),
    rcv.Connected
      ? el('span', { className: 'chip ok', id: 'receiver' }, el('span', { className: 'dot' }), 'source connected')
      : el('span', { className: 'chip bad', id: 'receiver', title: rcv.LastError || '' }, el('span', { className: 'dot' }),
        'source disconnected' + (rcv.LastError ? ': ' + shorten(rcv.LastError, 80) : '')),
  ];
  if (rcv.Reconnects > 0) chips.push(el('span', { className: 'chip' }, el('b', {}, rcv.Reconnects), ' reconnects'));
  const started = when(st.Started);
  if (started !== null) chips.push(el('span', { className: 'chip' }, 'up ' + fmtDur((when(st.Now) - started) / 1000)));
  fill($('facts'), chips);

  const lag = (st.Lag || 0) / 1e9;
  const lagEl = $('lag');
  lagEl.textContent = lag < 1 ? Math.round(1000 * lag) + ' ms' : fmtDur(lag);
  lagEl.className = 'value' + (lag >= 60 ? ' bad' : lag >= 5 ? ' lagging' : '');
  lagEl.title = 'dated by ' + (st.LagMethod || '?') + (st.HeartbeatError ? ' (heartbeat not in use: ' + st.HeartbeatError + ')' : '');
  $('lag-method').textContent = st.LagMethod ? '(' + st.LagMethod + ')' : '';
  $('applied-rate').textContent = fmtRate(iv.applied_per_second);
  document.title = 'paraply: lag ' + fmtDur(lag);
}

function shorten(s, n) {
  return s.length > n ? s.slice(0, n - 1) + '…' : s;
}

function renderDiagnosis(findings, iv) {
  $('diagnosis-interval').textContent = 'over the last ' + fmtDur(iv.seconds || 0);
  if (findings.length === 0) {
    fill($('diagnosis'), el('li', { className: 'empty' }, 'No interval yet: the diagnosis needs two samples, a second apart.'));
    return;
  }
  fill($('diagnosis'), findings.map((f) =>
    el('li', { className: f.severity, dataset: { cause: f.cause } },
      el('span', { className: 'sev' }, f.severity),
      el('div', { className: 'title' }, f.title),
      el('div', { className: 'advice' }, f.advice))));
}

function renderCoordinator(iv, workers) {
  $('coord-interval').textContent = 'last ' + fmtDur(iv.seconds || 0);
  const secs = iv.seconds || 0;
  const waits = iv.waits || {};
  const rows = [
    el('tr', {}, el('th', {}, ''), el('th', { className: 'n' }, 'count'), el('th', { className: 'n' }, 'seconds'), el('th', {}, 'share of time')),
    el('tr', { className: 'total' },
      el('td', {}, 'events assigned', el('span', { className: 'help' }, fmtRate(iv.applied_per_second) + '/s applied, ' + fmtRate(iv.received_per_second) + '/s received')),
      el('td', { className: 'n' }, fmtInt(iv.assigned)),
      el('td', {}, ''), el('td', {}, '')),
  ];
  for (const [key, help] of WAITS) {
    const w = waits[key] || { count: 0, seconds: 0 };
    // Commit-order waits are summed over workers.
    const capacity = secs * (key === 'commit_order' ? Math.max(1, workers || 1) : 1);
    const share = capacity > 0 ? Math.min(1, w.seconds / capacity) : 0;
    rows.push(el('tr', {},
      el('td', {}, 'waited: ', el('span', { className: 'reason' }, key), el('span', { className: 'help' }, help)),
      el('td', { className: 'n' }, fmtInt(w.count)),
      el('td', { className: 'n' }, fmtSecs(w.seconds)),
      el('td', {}, bar([[share, share >= 0.4 ? '#c2410c' : '#f59f00']], fmtPct(share)))));
  }
  fill($('coordinator'), rows);

  fill($('worker-time'),
    el('div', { className: 'legend' }, 'worker time: ',
      el('span', { className: 'muted' }, iv.avg_batch ? iv.avg_batch.toFixed(1) + ' transactions per target commit, ' : '',
        (iv.avg_commit_ms || 0).toFixed(1) + ' ms per COMMIT, ' + fmtInt(iv.retries) + ' retries')),
    bar([[iv.exec_share, COLOR.exec], [iv.commit_share, COLOR.commit], [iv.turn_share, COLOR.turn]]),
    legend([
      ['exec', COLOR.exec, fmtPct(iv.exec_share)],
      ['commit', COLOR.commit, fmtPct(iv.commit_share)],
      ['turn', COLOR.turn, fmtPct(iv.turn_share)],
      ['idle', COLOR.idle, fmtPct(iv.idle_share)],
    ]));
}

// bar draws stacked shares (0..1) as a horizontal bar, with an optional
// label after it.
function bar(parts, label) {
  const b = el('div', { className: 'bar' });
  let left = 1;
  for (const [share, color] of parts) {
    const w = Math.max(0, Math.min(left, share || 0));
    left -= w;
    b.append(el('span', { style: `width:${(100 * w).toFixed(1)}%;background:${color}` }));
  }
  if (label === undefined) return b;
  return el('div', { style: 'display:flex;align-items:center;gap:8px' }, b, el('span', { className: 'muted', style: 'min-width:3em;text-align:right' }, label));
}

function legend(items) {
  return el('div', { className: 'legend' }, items.map(([name, color, value]) =>
    el('span', {}, el('span', { className: 'sw', style: 'background:' + color }), name, value !== undefined ? el('span', { className: 'val' }, value) : null)));
}

function renderWorkers(workers, st) {
  const now = when(st.Now) || Date.now();
  workerSnaps.push({ at: now, workers });
  while (workerSnaps.length > UTIL_WINDOW + 1) workerSnaps.shift();
  const first = workerSnaps[0];
  const dt = (now - first.at) / 1000;
  const rows = [el('tr', {},
    el('th', {}, '#'), el('th', { className: 'n' }, 'txns'), el('th', { className: 'n' }, 'commits'),
    el('th', { className: 'n' }, 'retries'), el('th', {}, 'last 5 s'),
    el('th', { className: 'n' }, 'exec s'), el('th', { className: 'n' }, 'commit s'), el('th', { className: 'n' }, 'turn s'))];
  for (const w of workers) {
    const before = first.workers.find((x) => x.worker === w.worker) || w;
    const share = (k) => (dt > 0 ? (w[k] - before[k]) / dt : 0);
    rows.push(el('tr', {},
      el('td', {}, w.worker),
      el('td', { className: 'n' }, fmtInt(w.transactions)),
      el('td', { className: 'n' }, fmtInt(w.works)),
      el('td', { className: 'n' }, fmtInt(w.retries)),
      el('td', {}, bar([[share('exec_seconds'), COLOR.exec], [share('commit_seconds'), COLOR.commit], [share('turn_seconds'), COLOR.turn]])),
      el('td', { className: 'n' }, (w.exec_seconds || 0).toFixed(1)),
      el('td', { className: 'n' }, (w.commit_seconds || 0).toFixed(1)),
      el('td', { className: 'n' }, (w.turn_seconds || 0).toFixed(1))));
  }
  if (workers.length === 0) rows.push(el('tr', {}, el('td', { colspan: 8, className: 'muted' }, 'no workers yet')));
  fill($('workers'), rows);
}

function renderPipeline(st) {
  const now = when(st.Now) || Date.now();
  const rcv = st.Receiver || {};
  const rel = st.Relay || {};
  const sch = st.Scheduler || {};
  const cp = st.Checkpoint || {};
  const kv = (k, ...v) => el('tr', {}, el('td', {}, k), el('td', {}, ...v));
  const rows = [
    kv('received up to', rcv.Position || '–', rcv.SourceFile ? el('div', { className: 'muted' }, rcv.SourceFile + ':' + rcv.SourceOffset) : null),
    kv('applied up to', cp.Position || '–', el('div', { className: 'muted' }, 'checkpoint saved ' + ago(when(st.CheckpointSaved), now))),
    kv('queued', fmtInt(sch.Pending) + ' transactions, ' + fmtInt(sch.Ready) + ' ready'),
    kv('relay log', fmtBytes(rel.Bytes) + (rel.MaxBytes ? ' of ' + fmtBytes(rel.MaxBytes) : '') + ', ' + fmtInt(rel.Segments) + (rel.Segments === 1 ? ' segment' : ' segments') + (rel.Blocked ? ' (full: receiving waits)' : '')),
    kv('received', fmtInt(rcv.Transactions) + ' transactions, ' + fmtBytes(rcv.Bytes) + ', last ' + ago(when(rcv.LastTxn), now)),
    kv('applied', fmtInt(sch.Committed) + ' transactions' + (sch.Skipped ? ', ' + fmtInt(sch.Skipped) + ' skipped' : '')),
  ];
  if (st.Flavor) rows.unshift(kv('source flavor', st.Flavor));
  if (rcv.LastError) rows.push(kv('last error', rcv.LastError, el('div', { className: 'muted' }, ago(when(rcv.LastErrorTime), now))));
  fill($('pipeline'), rows);
}

function renderHot(hot) {
  if (hot.length === 0) {
    fill($('hot-tables'), el('tr', {}, el('td', { className: 'muted' }, 'none so far')));
    return;
  }
  fill($('hot-tables'), hot.map((h) => el('tr', {}, el('td', { className: 'name' }, h.name), el('td', { className: 'n' }, fmtInt(h.count)))));
}

// ---- charts ---------------------------------------------------------------

// series derives the charted series from the history samples.
function series(history, workers) {
  const t = history.map((s) => Date.parse(s.time) / 1000);
  const lag = history.map((s, i) => [t[i], s.lag_seconds || 0]);
  const applied = [], received = [], exec = [], commit = [], turn = [];
  const n = Math.max(1, workers || 1);
  for (let i = 1; i < history.length; i++) {
    const a = history[i - 1], b = history[i];
    const dt = t[i] - t[i - 1];
    if (!(dt > 0)) continue;
    applied.push([t[i], Math.max(0, (b.applied - a.applied) / dt)]);
    received.push([t[i], Math.max(0, (b.received - a.received) / dt)]);
    // Worker time is counted when a batch completes, so one second can
    // hold more than a second's work: clip the stack at 100%.
    let room = 1;
    const part = (k) => {
      const v = Math.min(room, Math.max(0, (b[k] - a[k]) / (dt * n)));
      room -= v;
      return v;
    };
    exec.push([t[i], part('ExecSecs')]);
    commit.push([t[i], part('CommitSecs')]);
    turn.push([t[i], part('TurnSecs')]);
  }
  return { end: t.length ? t[t.length - 1] : 0, lag, applied, received, exec, commit, turn };
}

function drawCharts({ report, history }) {
  const s = series(history, atOnce(report.status));
  const last = (pts) => (pts.length ? pts[pts.length - 1][1] : 0);
  drawChart($('lag-chart'), {
    end: s.end, fmt: fmtAxisSecs,
    series: [{ name: 'lag', color: COLOR.lag, points: s.lag, area: true }],
  });
  fill($('lag-legend'), legend([['lag', COLOR.lag, fmtDur(last(s.lag))]]));

  drawChart($('throughput-chart'), {
    end: s.end, fmt: fmtAxisNum,
    series: [
      { name: 'received', color: COLOR.received, points: s.received, dash: [4, 3] },
      { name: 'applied', color: COLOR.applied, points: s.applied, area: true },
    ],
  });
  fill($('throughput-legend'), legend([
    ['applied', COLOR.applied, fmtRate(last(s.applied)) + '/s'],
    ['received', COLOR.received, fmtRate(last(s.received)) + '/s'],
  ]));

  drawChart($('utilization-chart'), {
    end: s.end, fmt: fmtPct, stacked: true, max: 1,
    series: [
      { name: 'exec', color: COLOR.exec, points: s.exec },
      { name: 'commit', color: COLOR.commit, points: s.commit },
      { name: 'turn', color: COLOR.turn, points: s.turn },
    ],
  });
  const idle = Math.max(0, 1 - last(s.exec) - last(s.commit) - last(s.turn));
  fill($('utilization-legend'), legend([
    ['exec', COLOR.exec, fmtPct(last(s.exec))],
    ['commit', COLOR.commit, fmtPct(last(s.commit))],
    ['turn', COLOR.turn, fmtPct(last(s.turn))],
    ['idle', COLOR.idle, s.exec.length ? fmtPct(idle) : '–'],
  ]));
}

function fmtAxisSecs(v) {
  return v >= 120 ? Math.round(v / 60) + 'm' : (Number.isInteger(v) ? v : v.toFixed(1)) + 's';
}

function fmtAxisNum(v) {
  if (v >= 1e6) return v / 1e6 + 'M';
  if (v >= 1e3) return v / 1e3 + 'k';
  return Number.isInteger(v) ? String(v) : v.toFixed(1);
}

// niceStep rounds a raw tick step up to 1, 2 or 5 times a power of ten.
function niceStep(raw) {
  const p = Math.pow(10, Math.floor(Math.log10(raw)));
  for (const m of [1, 2, 5, 10]) if (m * p >= raw) return m * p;
  return 10 * p;
}

// drawChart draws time series on a canvas: lines (optionally filled to
// zero), or stacked areas. opts: {end (unix s), fmt (y labels), max (fixed
// y max), stacked, series: [{name, color, points: [[t, v]], area, dash}]}.
// The series of a stacked chart share their times.
function drawChart(canvas, opts) {
  const dpr = window.devicePixelRatio || 1;
  const W = canvas.clientWidth, H = canvas.clientHeight;
  if (canvas.width !== Math.round(W * dpr) || canvas.height !== Math.round(H * dpr)) {
    canvas.width = Math.round(W * dpr);
    canvas.height = Math.round(H * dpr);
  }
  const ctx = canvas.getContext('2d');
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.clearRect(0, 0, W, H);
  const pad = { l: 44, r: 10, t: 8, b: 20 };
  const pw = W - pad.l - pad.r, ph = H - pad.t - pad.b;
  const points = Math.max(0, ...opts.series.map((s) => s.points.length));

  // Values as drawn: stacked series are cumulative.
  const drawn = opts.series.map((s) => s.points.map((p) => [p[0], p[1]]));
  if (opts.stacked) {
    for (let k = 1; k < drawn.length; k++) {
      drawn[k].forEach((p, i) => { p[1] += drawn[k - 1][i] ? drawn[k - 1][i][1] : 0; });
    }
  }
  let ymax = opts.max;
  if (ymax === undefined) {
    ymax = 0;
    for (const s of drawn) for (const p of s) ymax = Math.max(ymax, p[1]);
  }
  if (!(ymax > 0)) ymax = 1;
  const ystep = niceStep(ymax / 4);
  ymax = Math.ceil(ymax / ystep - 1e-9) * ystep;

  let first = opts.end;
  for (const s of drawn) if (s.length) first = Math.min(first, s[0][0]);
  const span = Math.max(MIN_SPAN_S, opts.end - first);
  const t0 = opts.end - span;
  const x = (t) => pad.l + ((t - t0) / span) * pw;
  const y = (v) => pad.t + ph - (Math.min(v, ymax) / ymax) * ph;

  // Grid and labels.
  ctx.font = '11px system-ui, sans-serif';
  ctx.lineWidth = 1;
  ctx.strokeStyle = COLOR.grid;
  ctx.fillStyle = COLOR.axis;
  ctx.textAlign = 'right';
  ctx.textBaseline = 'middle';
  for (let v = 0; v <= ymax + 1e-9; v += ystep) {
    const yy = Math.round(y(v)) + 0.5;
    ctx.beginPath();
    ctx.moveTo(pad.l, yy);
    ctx.lineTo(W - pad.r, yy);
    ctx.stroke();
    ctx.fillText(opts.fmt(Math.round(v / ystep) * ystep), pad.l - 6, yy);
  }
  const xstep = [10, 15, 30, 60, 120, 300, 600].find((s) => span / s <= 6) || 600;
  ctx.textAlign = 'center';
  ctx.textBaseline = 'top';
  for (let back = 0; back <= span + 1e-9; back += xstep) {
    const xx = Math.round(x(opts.end - back)) + 0.5;
    ctx.beginPath();
    ctx.moveTo(xx, pad.t);
    ctx.lineTo(xx, pad.t + ph);
    ctx.stroke();
    const label = back === 0 ? 'now' : back < 60 ? '-' + back + 's' : '-' + back / 60 + 'm';
    ctx.textAlign = back === 0 ? 'right' : xx - pad.l < 16 ? 'left' : 'center';
    ctx.fillText(label, xx, pad.t + ph + 5);
  }

  if (points === 0) {
    ctx.textAlign = 'center';
    ctx.textBaseline = 'middle';
    ctx.fillText('waiting for samples…', pad.l + pw / 2, pad.t + ph / 2);
  }

  // Series. Runs of samples are split where samples are missing.
  const runs = (pts) => {
    const out = [];
    let cur = [];
    pts.forEach((p, i) => {
      if (i > 0 && p[0] - pts[i - 1][0] > GAP_S) { out.push(cur); cur = []; }
      cur.push(p);
    });
    if (cur.length) out.push(cur);
    return out;
  };
  drawn.forEach((pts, k) => {
    const s = opts.series[k];
    const below = opts.stacked && k > 0 ? drawn[k - 1] : null;
    for (const run of runs(pts)) {
      if (opts.stacked || s.area) {
        ctx.beginPath();
        run.forEach((p, i) => (i ? ctx.lineTo(x(p[0]), y(p[1])) : ctx.moveTo(x(p[0]), y(p[1]))));
        if (below) {
          const bi = pts.indexOf(run[0]);
          for (let i = run.length - 1; i >= 0; i--) ctx.lineTo(x(run[i][0]), y(below[bi + i][1]));
        } else {
          ctx.lineTo(x(run[run.length - 1][0]), y(0));
          ctx.lineTo(x(run[0][0]), y(0));
        }
        ctx.closePath();
        ctx.globalAlpha = opts.stacked ? 0.8 : 0.14;
        ctx.fillStyle = s.color;
        ctx.fill();
        ctx.globalAlpha = 1;
      }
      if (!opts.stacked || run.length === 1) {
        ctx.beginPath();
        run.forEach((p, i) => (i ? ctx.lineTo(x(p[0]), y(p[1])) : ctx.moveTo(x(p[0]), y(p[1]))));
        ctx.strokeStyle = s.color;
        ctx.lineWidth = 1.75;
        ctx.setLineDash(s.dash || []);
        ctx.stroke();
        ctx.setLineDash([]);
        if (run.length === 1) {
          ctx.fillStyle = s.color;
          ctx.beginPath();
          ctx.arc(x(run[0][0]), y(run[0][1]), 2.5, 0, 2 * Math.PI);
          ctx.fill();
        }
      }
    }
  });
  ctx.lineWidth = 1;
  canvas.dataset.points = String(points);
  canvas.setAttribute('aria-label', opts.series.map((s) => s.name).join(', ') + ': ' + points + ' points');
}

// drawEmpty draws the charts' frames until the first answer.
function drawEmpty() {
  for (const id of ['lag-chart', 'throughput-chart', 'utilization-chart']) {
    drawChart($(id), { end: Date.now() / 1000, fmt: fmtAxisNum, series: [{ name: id, color: COLOR.axis, points: [] }] });
  }
}

window.addEventListener('resize', () => (lastData ? drawCharts(lastData) : drawEmpty()));
drawEmpty();
poll();
