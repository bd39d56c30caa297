// paraply status page. Every second it fetches /status.json?series=1: the
// report of paraply's newest snapshot (status, workers, the figures over the
// window, hot tables, diagnosis) and the charts' series and axes. Plain
// JavaScript, no libraries, nothing fetched from elsewhere.
//
// The page computes nothing: every rate, share and lag, every chart point
// and every axis label is what paraply computed (internal/status), so the
// header, the charts, `paraply status` and /metrics of one snapshot agree.
// The formatting follows internal/status/text.go (fmtRate: rate, fmtPct:
// pct, fmtLag: lagText, fmtSpan: span, fmtBytes: bytesText).
//
// The page's own query string is passed on: /?interval=30s shows the
// figures over the last 30 seconds, /?snapshot=N pins the page to
// snapshot N (kept 10 minutes).
//
// Each chart records how many data points it drew in its data-points
// attribute and its y axis labels in data-y-labels; the numbers in the
// header and the worker time carry their exact value in data-value (the
// browser tests read them).
'use strict';

const POLL_MS = 1000;
const TIMEOUT_MS = 3000;
const MIN_SPAN_S = 20; // the charts' time axis covers at least this much
const GAP_S = 3.5; // samples further apart than this are not joined

const COLOR = {
  lag: '#d9480f',
  beyond: '#7c2d12',
  applied: '#2f6fdd',
  received: '#9aa5b1',
  exec: '#2f6fdd',
  commit: '#f59f00',
  turn: '#9c36b5',
  targetWait: '#c92a2a',
  idle: '#e3e6eb',
  grid: '#eceef2',
  axis: '#6b7280',
};

// The coordinator's waits, in the words of MySQL's "Multi-threaded replica
// statistics" where they have one.
const WAITS = [
  ['dependency', 'nothing was ready (clock conflicts)'],
  ['barrier', 'waiting behind DDL or writes to keyless tables'],
  ['workers_busy', 'work was ready, every allowed worker occupied'],
  ['queue_full', 'the look-ahead window was full'],
  ['commit_order', "workers waiting for their turn to commit (share of the workers' time)"],
  ['source', 'idle: everything handed out, waiting for the source (not a problem)'],
];

const params = new URLSearchParams(location.search);
const interval = params.get('interval') || '10s';
const pinned = params.get('snapshot'); // a snapshot number, or null: the newest
let lastAnswer = 0; // Date.now() of the last answer
let lastReport = null; // redrawn on resize

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

// ---- formatting (as internal/status/text.go) ------------------------------

function fmtInt(n) {
  return Math.round(n || 0).toLocaleString('en-US');
}

// fmtRate is text.go's rate: one decimal below 10, whole numbers above.
function fmtRate(n) {
  n = n || 0;
  return n < 10 ? n.toFixed(1) : fmtInt(n);
}

// fmtPct is text.go's pct: a whole percentage.
function fmtPct(x) {
  return (100 * (x || 0)).toFixed(0) + '%';
}

function fmtSecs(s) {
  s = s || 0;
  if (s < 10) return s.toFixed(2) + ' s';
  if (s < 100) return s.toFixed(1) + ' s';
  return fmtInt(s) + ' s';
}

// fmtSpan is text.go's span: a time span as a person reads it.
function fmtSpan(s) {
  s = Math.max(0, s || 0);
  const two = (n) => String(Math.floor(n)).padStart(2, '0');
  if (s < 10) return s.toFixed(1) + ' s';
  if (s < 60) return Math.round(s) + ' s';
  if (s < 3600) return Math.floor(s / 60) + ' min ' + two(s % 60) + ' s';
  if (s < 86400) return Math.floor(s / 3600) + ' h ' + two((s % 3600) / 60) + ' min';
  return Math.floor(s / 86400) + ' d ' + Math.floor((s % 86400) / 3600) + ' h';
}

// fmtLag is text.go's lagText: whole milliseconds below a second, tenths of
// a second below a minute.
function fmtLag(s) {
  s = Math.max(0, s || 0);
  if (s < 1) return Math.round(1000 * s) + ' ms';
  if (s < 60) return s.toFixed(1) + ' s';
  return fmtSpan(s);
}

// windowText is text.go's: the window asked for, or what there is so far.
function windowText(iv) {
  if ((iv.seconds > 0 && iv.seconds < iv.window_seconds - 0.5) || !iv.window_seconds) {
    return fmtSpan(iv.seconds) + ' (all there is so far)';
  }
  return fmtSpan(iv.window_seconds);
}

// fmtBytes is text.go's bytesText: binary units, as sizes are set
// (relay-max-bytes 10737418240 is 10.00 GiB).
function fmtBytes(b) {
  b = b || 0;
  if (b < 1024) return b + ' B';
  if (b < 1024 ** 2) return (b / 1024).toFixed(1) + ' KiB';
  if (b < 1024 ** 3) return (b / 1024 ** 2).toFixed(1) + ' MiB';
  return (b / 1024 ** 3).toFixed(2) + ' GiB';
}

function clock(ms) {
  return new Date(ms).toLocaleTimeString('en-GB', { hour12: false });
}

// sinceText is text.go's: a time in UTC and how long before the snapshot
// (now, an RFC 3339 time) it was.
function sinceText(now, t) {
  return new Date(Date.parse(t)).toISOString().slice(11, 19) + ' UTC (' + fmtSpan((Date.parse(now) - Date.parse(t)) / 1000) + ')';
}

// ---- polling --------------------------------------------------------------

async function getJSON(path) {
  const r = await fetch(path, { cache: 'no-store', signal: AbortSignal.timeout(TIMEOUT_MS) });
  if (!r.ok) throw new Error(path + ': HTTP ' + r.status + ': ' + (await r.text()).trim());
  return r.json();
}

function statusPath() {
  const q = new URLSearchParams({ interval, series: '1' });
  if (pinned) q.set('snapshot', pinned);
  return 'status.json?' + q.toString();
}

async function poll() {
  let report = null;
  try {
    report = await getJSON(statusPath());
    lastAnswer = Date.now();
    showOffline(null);
  } catch (err) {
    showOffline(err);
  }
  if (report) {
    try {
      render(report);
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
  const since = lastAnswer ? 'Last answer at ' + clock(lastAnswer) + ' (' + fmtSpan((Date.now() - lastAnswer) / 1000) + ' ago). ' : '';
  const why = err.name === 'TimeoutError' ? 'no answer within ' + TIMEOUT_MS / 1000 + ' s' : String(err.message || err);
  $('offline-detail').textContent = since + 'Retrying every second (' + why + ').';
  if (!lastAnswer) $('endpoints').textContent = 'no answer from ' + location.host + ' yet';
  banner.hidden = false;
  document.title = 'paraply: not answering';
}

// ---- rendering ------------------------------------------------------------

function render(report) {
  lastReport = report;
  const st = report.status;
  const iv = report.interval || {};
  renderHeader(report, st, iv);
  renderDiagnosis(report.diagnosis || [], iv);
  drawCharts(report);
  renderCoordinator(iv);
  renderWorkers(report, iv);
  renderPipeline(report, st);
  renderHot(report.hot_tables || []);
  fill($('footer'),
    'Snapshot ' + report.snapshot.id + (pinned ? ' (pinned: remove ?snapshot= to follow)' : '') + ' · fetched ' + clock(Date.now()) + ' · ',
    el('a', { href: 'metrics' }, '/metrics'), ' · ',
    el('a', { href: statusPath().replace('&series=1', '') }, '/status.json'), ' · ',
    el('a', { href: 'history.json' }, '/history.json'));
}

// workersChip shows the fixed worker count, or with --workers auto how
// many apply at once and why (the reason in the tooltip).
function workersChip(st) {
  const sch = st.scheduler || {};
  if (!st.auto_workers) return el('span', { className: 'chip' }, el('b', {}, st.workers), ' workers');
  return el('span', { className: 'chip', id: 'workers-limit', title: sch.workers_limit_reason || '' },
    'workers auto: ', el('b', {}, sch.workers_limit), ' of ', st.workers, ' at once');
}

// sourceChip says whether the source is connected and idle, and if not
// connected since when and why (text.go's sourceText).
function sourceChip(st, iv) {
  const src = st.source || {};
  if (src.connected) {
    const idle = iv.seconds > 0 && !iv.source_per_second ? ', idle: it wrote nothing over the last ' + windowText(iv) : '';
    return el('span', { className: 'chip ok', id: 'receiver' }, el('span', { className: 'dot' }),
      'source connected' + (src.since ? ' since ' + sinceText(st.now, src.since) : '') + idle);
  }
  const since = src.since || st.started;
  return el('span', { className: 'chip bad', id: 'receiver', title: src.last_error || '' }, el('span', { className: 'dot' }),
    'source unreachable' + (since ? ' since ' + sinceText(st.now, since) : '') + (src.last_error ? ': ' + shorten(src.last_error, 80) : ''));
}

// targetChip says whether the target answers, since when, and why not
// (text.go's targetText).
function targetChip(st) {
  const tgt = st.target || {};
  const state = (text) => el('span', { id: 'target-state' }, text);
  if (!tgt.since) return el('span', { className: 'chip', id: 'target' }, state('target not asked yet'));
  if (tgt.connected) {
    return el('span', { className: 'chip ok', id: 'target' }, el('span', { className: 'dot' }), state('target connected since ' + sinceText(st.now, tgt.since)));
  }
  return el('span', { className: 'chip bad', id: 'target', title: tgt.last_error || '' }, el('span', { className: 'dot' }),
    state('target unreachable since ' + sinceText(st.now, tgt.since) + (tgt.last_error ? ': ' + shorten(tgt.last_error, 80) : '')));
}

function renderHeader(report, st, iv) {
  fill($('endpoints'), st.source.endpoint || '?', el('span', { className: 'arrow' }, '→'), st.target.endpoint || '?');
  const src = st.source || {};
  const snap = report.snapshot;
  const chips = [
    el('span', { className: 'chip', id: 'snapshot', dataset: { id: snap.id }, title: 'every figure on this page is of this snapshot' },
      'snapshot ', el('b', {}, snap.id), ' · ' + clock(Date.parse(snap.time))),
    el('span', { className: 'chip' }, 'dependency ', el('b', {}, st.dependency || '?')),
    workersChip(st),
    el('span', { className: 'chip' }, 'commit order ', el('b', {}, st.preserve_commit_order ? 'preserved' : 'not preserved')),
    sourceChip(st, iv),
    targetChip(st),
  ];
  if (src.reconnects > 0) chips.push(el('span', { className: 'chip' }, el('b', {}, src.reconnects), ' reconnects'));
  if (st.started) chips.push(el('span', { className: 'chip' }, 'up ' + fmtSpan((Date.parse(st.now) - Date.parse(st.started)) / 1000)));
  if (report.version) chips.push(el('span', { className: 'chip muted', id: 'version' }, report.version));
  fill($('facts'), chips);

  const lag = iv.lag_end_seconds || 0;
  const lagEl = $('lag');
  lagEl.textContent = fmtLag(lag);
  lagEl.dataset.value = String(lag);
  const beyond = iv.lag_beyond_delay_seconds || 0;
  lagEl.className = 'value' + (beyond >= 60 ? ' bad' : beyond >= 5 ? ' lagging' : '');
  lagEl.title = 'dated by ' + (st.lag_method || '?') + (st.heartbeat_error ? ' (heartbeat not in use: ' + st.heartbeat_error + ')' : '');
  $('lag-method').textContent = st.lag_method ? '(' + st.lag_method + ')' : '';
  const delayEl = $('lag-delay');
  delayEl.dataset.value = String(beyond);
  delayEl.textContent = iv.delay_seconds > 0 ? '--delay ' + fmtLag(iv.delay_seconds) + ', beyond it ' + fmtLag(beyond) : 'at this snapshot';
  const rate = $('applied-rate');
  rate.textContent = fmtRate(iv.applied_per_second);
  rate.dataset.value = String(iv.applied_per_second || 0);
  $('applied-window').textContent = 'mean over the last ' + windowText(iv);
  document.title = st.target && st.target.since && !st.target.connected ? 'paraply: target unreachable' : 'paraply: lag ' + fmtLag(lag);
}

function shorten(s, n) {
  return s.length > n ? s.slice(0, n - 1) + '…' : s;
}

function renderDiagnosis(findings, iv) {
  $('diagnosis-interval').textContent = 'over the last ' + windowText(iv);
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

function renderCoordinator(iv) {
  $('coord-interval').textContent = 'last ' + windowText(iv);
  const waits = iv.waits || {};
  const rows = [
    el('tr', {}, el('th', {}, ''), el('th', { className: 'n' }, 'count'), el('th', { className: 'n' }, 'seconds'), el('th', {}, 'share')),
    el('tr', { className: 'total' },
      el('td', {}, 'events assigned', el('span', { className: 'help' },
        fmtRate(iv.applied_per_second) + '/s applied, ' + fmtRate(iv.received_per_second) + '/s received, ' +
        (iv.avg_batch || 0).toFixed(1) + ' per target transaction')),
      el('td', { className: 'n' }, fmtInt(iv.assigned)),
      el('td', {}, ''), el('td', {}, '')),
  ];
  for (const [key, help] of WAITS) {
    const w = waits[key] || { count: 0, seconds: 0, share: 0 };
    const share = w.share || 0;
    rows.push(el('tr', {},
      el('td', {}, 'waited: ', el('span', { className: 'reason' }, key), el('span', { className: 'help' }, help)),
      el('td', { className: 'n' }, fmtInt(w.count)),
      el('td', { className: 'n' }, fmtSecs(w.seconds)),
      el('td', {}, bar([[share, share >= 0.4 ? '#c2410c' : '#f59f00']], fmtPct(share)))));
  }
  fill($('coordinator'), rows);

  const val = (id, share) => el('span', { id, dataset: { value: String(share || 0) } }, fmtPct(share));
  fill($('worker-time'),
    el('div', { className: 'legend' }, 'worker time, of ' + workersNum(iv.workers_allowed) + ' workers allowed (' + (iv.capacity_seconds || 0).toFixed(1) + ' worker-seconds): ',
      el('span', { className: 'muted' }, (iv.avg_commit_ms || 0).toFixed(1) + ' ms per COMMIT, ' + fmtInt(iv.retries) + ' retries')),
    bar([[iv.exec_share, COLOR.exec], [iv.commit_share, COLOR.commit], [iv.turn_share, COLOR.turn], [iv.target_wait_share, COLOR.targetWait]]),
    el('div', { className: 'legend' },
      swatch('exec', COLOR.exec, val('share-exec', iv.exec_share)),
      swatch('commit-turn wait', COLOR.turn, val('share-turn', iv.turn_share)),
      swatch('commit', COLOR.commit, val('share-commit', iv.commit_share)),
      swatch('waiting for the target (unreachable)', COLOR.targetWait, val('share-target-wait', iv.target_wait_share)),
      swatch('idle', COLOR.idle, val('share-idle', iv.idle_share)),
      el('span', {}, 'busy', el('span', { className: 'val' }, val('share-busy', iv.busy_share)))));
}

// workersNum is text.go's: a mean number of workers, whole when it is.
function workersNum(n) {
  n = n || 0;
  return Math.abs(n - Math.round(n)) < 0.05 ? n.toFixed(0) : n.toFixed(1);
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

function swatch(name, color, value) {
  return el('span', {}, el('span', { className: 'sw', style: 'background:' + color }), name,
    value !== undefined ? el('span', { className: 'val' }, value) : null);
}

function legend(items) {
  return el('div', { className: 'legend' }, items.map(([name, color, value]) => swatch(name, color, value)));
}

// renderWorkers shows the workers the limit allows now, with their time
// over the window, and a line for the rest of the pool.
function renderWorkers(report, iv) {
  const pool = report.pool || {};
  const st = report.status;
  $('workers-sub').textContent = (pool.others ? pool.allowed + ' of the pool\'s ' + pool.size + ' allowed now' : 'all ' + (pool.size || 0) + ' of the pool') +
    ' · exec / commit / turn over the last ' + windowText(iv) + ' · counts since start';
  const rows = [el('tr', {},
    el('th', {}, '#'), el('th', { className: 'n' }, 'txns'), el('th', { className: 'n' }, 'commits'),
    el('th', { className: 'n' }, 'retries'), el('th', {}, 'time'),
    el('th', { className: 'n' }, 'exec'), el('th', { className: 'n' }, 'turn'), el('th', { className: 'n' }, 'commit'),
    el('th', { className: 'n', title: 'waiting for the target, which did not answer' }, 'target'), el('th', { className: 'n' }, 'idle'))];
  const workers = report.workers || [];
  for (const w of workers) {
    rows.push(el('tr', { dataset: { worker: w.worker } },
      el('td', {}, w.worker),
      el('td', { className: 'n' }, fmtInt(w.transactions)),
      el('td', { className: 'n' }, fmtInt(w.target_transactions)),
      el('td', { className: 'n' }, fmtInt(w.retries)),
      el('td', {}, bar([[w.exec_share, COLOR.exec], [w.commit_share, COLOR.commit], [w.turn_share, COLOR.turn], [w.target_wait_share, COLOR.targetWait]])),
      el('td', { className: 'n' }, fmtPct(w.exec_share)),
      el('td', { className: 'n' }, fmtPct(w.turn_share)),
      el('td', { className: 'n' }, fmtPct(w.commit_share)),
      el('td', { className: 'n' }, fmtPct(w.target_wait_share)),
      el('td', { className: 'n' }, fmtPct(w.idle_share))));
  }
  if (workers.length === 0) rows.push(el('tr', {}, el('td', { colspan: 10, className: 'muted' }, 'no workers yet')));
  fill($('workers'), rows);
  const others = $('pool-others');
  if (!pool.others) {
    others.hidden = true;
    return;
  }
  const used = pool.others_used === 0 ? 'none of them has applied anything'
    : (pool.others_used === 1 ? '1 of them' : pool.others_used + ' of them') + ' applied ' + fmtInt(pool.others_transactions) + ' transactions earlier, under a higher limit';
  others.textContent = pool.others + ' more in the pool, not allowed now' + (st.auto_workers ? ' by --workers auto' : '') + ' (' + used + ')';
  others.hidden = false;
}

function renderPipeline(report, st) {
  const rel = st.relay || {};
  const sch = st.scheduler || {};
  const src = st.source || {};
  const tgt = st.target || {};
  const pg = report.progress || {};
  const iv = report.interval || {};
  const kv = (k, ...v) => el('tr', {}, el('td', {}, k), el('td', {}, ...v));
  const rows = [
    kv('source at', el('span', { id: 'source-position' }, src.position || '–'),
      src.position_time ? el('div', { className: 'muted' }, 'read ' + fmtSpan((Date.parse(st.now) - Date.parse(src.position_time)) / 1000) + ' ago; it wrote ' + fmtRate(iv.source_per_second) + '/s') : null),
    kv('received up to', el('span', { id: 'received-up-to' }, pg.received || '')),
    kv('applied up to', el('span', { id: 'applied-up-to' }, pg.applied || ''), el('div', { className: 'muted', id: 'checkpoint' }, 'checkpoint ' + (pg.checkpoint || ''))),
    kv('queued', fmtInt(sch.queued_transactions) + ' transactions, ' + fmtInt(sch.ready_transactions) + ' ready'),
    kv('relay log', fmtBytes(rel.bytes) + (rel.max_bytes ? ' of ' + fmtBytes(rel.max_bytes) : '') + ', ' + fmtInt(rel.segments) + (rel.segments === 1 ? ' segment' : ' segments') + (rel.blocked ? ' (full: receiving waits)' : '')),
    kv('received', fmtInt(src.received_transactions) + (src.received_transactions === 1 ? ' transaction, ' : ' transactions, ') + fmtBytes(src.received_bytes)),
    kv('applied', fmtInt(sch.applied_transactions) + ' transactions' + (sch.skipped_transactions ? ', ' + fmtInt(sch.skipped_transactions) + ' skipped' : '')),
  ];
  if (st.flavor) rows.unshift(kv('source flavor', st.flavor));
  if (src.last_error) rows.push(kv('source\'s last error', src.last_error));
  if (tgt.last_error) rows.push(kv('target\'s last error', tgt.last_error));
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

function drawCharts(report) {
  const s = report.series || { points: [], axes: {}, window_seconds: 10 };
  const pts = s.points || [];
  const end = pts.length ? pts[pts.length - 1].unix_seconds : Date.parse(report.snapshot.time) / 1000;
  const col = (k) => pts.map((p) => [p.unix_seconds, p[k] || 0]);
  const iv = report.interval || {};
  const win = fmtSpan(s.window_seconds);
  $('throughput-sub').textContent = 'transactions per second, mean over ' + win + ' at each sample';
  $('utilization-sub').textContent = "share of the allowed workers' time over " + win + ' at each sample';

  const lagSeries = [{ name: 'lag', color: COLOR.lag, points: col('lag_seconds'), area: true }];
  if (iv.delay_seconds > 0) lagSeries.push({ name: 'beyond the delay', color: COLOR.beyond, points: col('lag_beyond_delay_seconds'), dash: [4, 3] });
  drawChart($('lag-chart'), { end, axis: s.axes.lag, series: lagSeries });
  const lagItems = [['lag', COLOR.lag, fmtLag(iv.lag_end_seconds)]];
  if (iv.delay_seconds > 0) lagItems.push(['beyond the delay', COLOR.beyond, fmtLag(iv.lag_beyond_delay_seconds)]);
  fill($('lag-legend'), legend(lagItems));

  drawChart($('throughput-chart'), {
    end, axis: s.axes.throughput,
    series: [
      { name: 'received', color: COLOR.received, points: col('received_per_second'), dash: [4, 3] },
      { name: 'applied', color: COLOR.applied, points: col('applied_per_second'), area: true },
    ],
  });
  fill($('throughput-legend'), legend([
    ['applied', COLOR.applied, fmtRate(iv.applied_per_second) + '/s'],
    ['received', COLOR.received, fmtRate(iv.received_per_second) + '/s'],
  ]));

  drawChart($('utilization-chart'), {
    end, axis: s.axes.utilization, stacked: true,
    series: [
      { name: 'exec', color: COLOR.exec, points: col('exec_share') },
      { name: 'commit', color: COLOR.commit, points: col('commit_share') },
      { name: 'turn', color: COLOR.turn, points: col('turn_share') },
      { name: 'target wait', color: COLOR.targetWait, points: col('target_wait_share') },
    ],
  });
  fill($('utilization-legend'), legend([
    ['exec', COLOR.exec, fmtPct(iv.exec_share)],
    ['commit', COLOR.commit, fmtPct(iv.commit_share)],
    ['turn', COLOR.turn, fmtPct(iv.turn_share)],
    ['waiting for the target', COLOR.targetWait, fmtPct(iv.target_wait_share)],
    ['idle', COLOR.idle, fmtPct(iv.idle_share)],
  ]));
}

// drawChart draws time series on a canvas: lines (optionally filled to
// zero), or stacked areas. opts: {end (unix s), axis ({max, ticks: [{value,
// label}]}, as paraply computed it), stacked, series: [{name, color,
// points: [[t, v]], area, dash}]}. The series of a stacked chart share
// their times.
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
  const pad = { l: 52, r: 10, t: 8, b: 20 };
  const pw = W - pad.l - pad.r, ph = H - pad.t - pad.b;
  const points = Math.max(0, ...opts.series.map((s) => s.points.length));
  const axis = opts.axis && opts.axis.ticks && opts.axis.max > 0 ? opts.axis : { max: 1, ticks: [] };
  const ymax = axis.max;

  // Values as drawn: stacked series are cumulative.
  const drawn = opts.series.map((s) => s.points.map((p) => [p[0], p[1]]));
  if (opts.stacked) {
    for (let k = 1; k < drawn.length; k++) {
      drawn[k].forEach((p, i) => { p[1] += drawn[k - 1][i] ? drawn[k - 1][i][1] : 0; });
    }
  }

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
  for (const tick of axis.ticks) {
    const yy = Math.round(y(tick.value)) + 0.5;
    ctx.beginPath();
    ctx.moveTo(pad.l, yy);
    ctx.lineTo(W - pad.r, yy);
    ctx.stroke();
    ctx.fillText(tick.label, pad.l - 6, yy);
  }
  canvas.dataset.yLabels = axis.ticks.map((t) => t.label).join('|');
  const xstep = [10, 15, 30, 60, 120, 300, 600].find((s) => span / s <= 6) || 600;
  ctx.textAlign = 'center';
  ctx.textBaseline = 'top';
  for (let back = 0; back <= span + 1e-9; back += xstep) {
    const xx = Math.round(x(opts.end - back)) + 0.5;
    ctx.beginPath();
    ctx.moveTo(xx, pad.t);
    ctx.lineTo(xx, pad.t + ph);
    ctx.stroke();
    const label = back === 0 ? 'now' : back < 60 ? '-' + back + ' s' : '-' + back / 60 + ' min';
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
    drawChart($(id), { end: Date.now() / 1000, series: [{ name: id, color: COLOR.axis, points: [] }] });
  }
}

window.addEventListener('resize', () => (lastReport ? drawCharts(lastReport) : drawEmpty()));
drawEmpty();
poll();
