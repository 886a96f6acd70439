/*
 * map.js -- the junction map: one dot per contact pair at the (x, y) of its
 * first node, coloured by the view's value (initial gap, residual gap,
 * contact force, cloud p95, share above threshold) with its colour bar; the
 * fastener candidate rings (installed / not installed / picked for the next
 * cloud: a click toggles one); hover text and the line under the map.
 *
 * Stacked layers (a sandwich joint: pairs between different parts at the
 * same (x, y)) get one panel each, titled with the parts' names, all with the
 * same x and y ranges and scale.
 */
import { $, SVGNS, svgEl, sizeSvg, htmlEl, clear, fmt, pct, niceTicks, tickLabel, niceCeil, maxOf, viridis, greys } from './format.js';
import { S, GAP_MODES } from './state.js';

// ---------------------------------------------------------------- pattern
/* The candidates a job installed, as the server says (options.installed);
 * jobs stored before the server said it: explicit lists only, else null. */
export function installedFasteners(job, nf) {
  const inst = new Uint8Array(nf);
  const o = job ? job.options || {} : null;
  if (!o) return null;
  if (Array.isArray(o.installed)) for (const i of o.installed) inst[i] = 1;
  else if (o.fasteners === 'all') inst.fill(1);
  else if (Array.isArray(o.fasteners)) for (const i of o.fasteners) inst[i] = 1;
  else if (o.fastener_fraction !== undefined) return null;
  return inst;
}

/* Click on a candidate: toggle it in the pattern being edited (which starts
 * from the selected job's pattern); the next submitted cloud uses it. */
function togglePattern(i) {
  if (!S.fast || i < 0 || i >= S.fast.length) return;
  if (!S.edit) S.edit = installedFasteners(S.job, S.fast.length) || new Uint8Array(S.fast.length);
  S.edit[i] = S.edit[i] ? 0 : 1;
  markFasteners();
  renderPatternInfo();
}

export function editedList() {
  const out = [];
  if (S.edit) S.edit.forEach((v, i) => { if (v) out.push(i); });
  return out;
}

export function renderPatternInfo() {
  const el = $('pattern-info');
  if (!el) return;
  const n = editedList().length;
  el.dataset.pattern = S.edit ? editedList().join(',') : '';
  el.textContent = S.edit
    ? `pattern: the ${n} candidate${n === 1 ? '' : 's'} picked on the map (click rings to toggle)`
    : 'pattern: the fastener fraction above (click rings on the map to pick candidates instead)';
  $('pattern-clear').hidden = !S.edit;
  $('demo-fraction').disabled = !!S.edit;
}

export function markFasteners() {
  if (!S.fast) return;
  const inst = S.edit || installedFasteners(S.job, S.fast.length);
  let n = 0;
  S.fast.forEach((c, i) => {
    const on = inst ? inst[i] === 1 : false;
    n += on;
    const kind = inst ? (on ? 'installed' : 'open') : 'candidate';
    c.setAttribute('class', 'fastener ' + kind);
    S.fastHalo[i].setAttribute('class', 'fastener-halo ' + kind);
  });
  const L = $('map-legend');
  clear(L);
  const item = (cls, text) => {
    const sp = htmlEl('span', { class: 'legend-item' }, L);
    const sv = svgEl('svg', { width: 18, height: 18, viewBox: '0 0 18 18' }, sp);
    svgEl('rect', { x: 0, y: 0, width: 18, height: 18, fill: '#3b528b' }, sv);
    svgEl('circle', { cx: 9, cy: 9, r: 6, class: 'fastener-halo ' + cls }, sv);
    svgEl('circle', { cx: 9, cy: 9, r: 6, class: 'legend-fastener ' + cls }, sv);
    htmlEl('span', {}, sp, text);
  };
  if (inst) {
    item('installed', S.edit ? `picked for the next cloud (${n})` : `fastener installed (${n})`);
    item('open', `candidate not installed (${S.fast.length - n})`);
  } else item('candidate', `fastener candidate (${S.fast.length})`);
  if (S.geo && S.geo.pairs.fixed.some((f) => f)) {
    const sp = htmlEl('span', { class: 'legend-item' }, L);
    const sv = svgEl('svg', { width: 18, height: 18, viewBox: '0 0 18 18' }, sp);
    svgEl('circle', { cx: 9, cy: 9, r: 5, class: 'node fixed', fill: '#21918c' }, sv);
    htmlEl('span', {}, sp, 'pair to the fixed jig');
  }
  htmlEl('span', { class: 'legend-item muted' }, L, 'nodes: first node of each contact pair, at (x, y)');
}

// ---------------------------------------------------------------- layers
/* "skin – frame" for the parts of pair k (names from the geometry). */
function interfaceName(geo, k) {
  const p = geo.pairs, names = geo.parts || [];
  const a = names[p.part_i[k]] || `part ${p.part_i[k]}`;
  if (p.part_j[k] < 0) return `${a} – fixed jig`;
  return `${a} – ${names[p.part_j[k]] || `part ${p.part_j[k]}`}`;
}

/* Layers of pairs: (fixed flag, z). When pairs of different layers share
 * (x, y) positions (a sandwich joint: interfaces stacked in z, pairs to the
 * jig under pairs between parts), each layer gets its own panel, titled with
 * its interfaces; otherwise one panel holds all pairs. */
export function mapLayers(geo) {
  const p = geo.pairs, m = p.x.length, byKey = new Map();
  for (let k = 0; k < m; k++) {
    const z = p.z ? p.z[k] : 0;
    const key = `${p.fixed[k] ? 1 : 0}|${z}`;
    if (!byKey.has(key)) byKey.set(key, { fixed: !!p.fixed[k], z, idx: [] });
    byKey.get(key).idx.push(k);
  }
  const layers = [...byKey.values()];
  if (layers.length < 2) return [{ title: null, idx: layers.length ? layers[0].idx : [] }];
  const seen = new Map();
  let overlap = false;
  layers.forEach((L, li) => {
    for (const k of L.idx) {
      const key = `${p.x[k]}|${p.y[k]}`;
      if (seen.has(key) && seen.get(key) !== li) overlap = true;
      seen.set(key, li);
    }
  });
  if (!overlap) return [{ title: null, idx: layers.flatMap((L) => L.idx) }];
  layers.sort((A, B) => A.fixed - B.fixed || B.z - A.z);
  return layers.map((L) => {
    const count = new Map();
    for (const k of L.idx) {
      const n = interfaceName(geo, k);
      count.set(n, (count.get(n) || 0) + 1);
    }
    const names = [...count.entries()].sort((a, b) => b[1] - a[1]).map((e) => e[0]);
    const shown = names.slice(0, 3).join(', ') + (names.length > 3 ? ` and ${names.length - 3} more` : '');
    return { title: `${shown} at z = ${Math.round(L.z * 1000) / 1000} mm (${L.idx.length} pairs)`, idx: L.idx };
  });
}

// ---------------------------------------------------------------- drawing
export function drawMap() {
  const svg = $('map');
  clear(svg);
  S.nodes = [];
  S.fast = [];
  S.fastHalo = [];
  const geo = S.geo;
  if (!geo) return;
  const x = geo.pairs.x, y = geo.pairs.y, m = x.length;
  let x0 = Infinity, x1 = -Infinity, y0 = Infinity, y1 = -Infinity;
  for (let k = 0; k < m; k++) {
    x0 = Math.min(x0, x[k]);
    x1 = Math.max(x1, x[k]);
    y0 = Math.min(y0, y[k]);
    y1 = Math.max(y1, y[k]);
  }
  if (!m) {
    x0 = y0 = 0;
    x1 = y1 = 1;
  }
  const panels = mapLayers(geo);
  const np = panels.length;
  // node spacing: median distance to the nearest node of the same panel (sampled)
  const nn = [];
  for (const P of panels) {
    const step = Math.max(1, Math.floor(P.idx.length / 200));
    for (let i = 0; i < P.idx.length; i += step) {
      const a = P.idx[i];
      let best = Infinity;
      for (const b of P.idx) {
        if (b === a) continue;
        const d = (x[a] - x[b]) ** 2 + (y[a] - y[b]) ** 2;
        if (d > 0 && d < best) best = d;
      }
      if (best < Infinity) nn.push(Math.sqrt(best));
    }
  }
  nn.sort((a, b) => a - b);
  const h = nn.length ? nn[nn.length >> 1] : Math.max(x1 - x0, y1 - y0, 1) / 10;
  x0 -= h; x1 += h; y0 -= h; y1 += h;
  const wrap = $('map-wrap');
  const W = Math.max(420, Math.min(1600, (wrap.clientWidth || 960) - 4));
  const M = { l: 62, r: 16, t: 14, b: 46 };
  const LT = np > 1 ? 22 : 0; // room for a panel title
  const GAP = np > 1 ? 10 : 0;
  const pw = W - M.l - M.r;
  const maxH = np > 1 ? Math.max(150, 640 / np) : 560;
  // every panel spans the same y range (all pairs), at the same scale as x
  let s = pw / (x1 - x0);
  if ((y1 - y0) * s > maxH) s = maxH / (y1 - y0);
  const pwUsed = (x1 - x0) * s, ph = (y1 - y0) * s;
  const H = Math.ceil(M.t + M.b + (np - 1) * GAP + np * (LT + ph));
  sizeSvg(svg, W, H);
  const X = (v) => M.l + (v - x0) * s;
  S.mapPlot = { l: M.l, w: pwUsed };
  const r = Math.min(9, Math.max(1.2, 0.42 * h * s));
  const xt = niceTicks(x0, x1, Math.max(2, Math.floor(pwUsed / 90)));
  const yt = niceTicks(y0, y1, Math.max(2, Math.floor(ph / 40)));
  const panelOf = new Int32Array(m);
  const Ys = [];
  const axes = svgEl('g', { class: 'axes' }, svg);
  const g = svgEl('g', { class: 'nodes' }, svg);
  const frag = document.createDocumentFragment();
  let next = M.t;
  panels.forEach((P, pi) => {
    const top = next + LT;
    next = top + ph + GAP;
    const Y = (v) => top + (y1 - v) * s;
    Ys.push(Y);
    if (P.title) svgEl('text', { x: M.l, y: top - 6, class: 'layer-title' }, axes, P.title);
    svgEl('rect', { x: M.l, y: top, width: pwUsed, height: ph, class: 'plot-bg' }, axes);
    const last = pi === np - 1;
    for (const t of xt) {
      svgEl('line', { x1: X(t), x2: X(t), y1: top, y2: top + ph, class: 'grid' }, axes);
      if (last) {
        svgEl('line', { x1: X(t), x2: X(t), y1: top + ph, y2: top + ph + 5, class: 'tick' }, axes);
        svgEl('text', { x: X(t), y: top + ph + 18, class: 'tick-label', 'text-anchor': 'middle' }, axes, tickLabel(t, xt));
      }
    }
    for (const t of yt) {
      svgEl('line', { x1: M.l, x2: M.l + pwUsed, y1: Y(t), y2: Y(t), class: 'grid' }, axes);
      svgEl('line', { x1: M.l - 5, x2: M.l, y1: Y(t), y2: Y(t), class: 'tick' }, axes);
      svgEl('text', { x: M.l - 8, y: Y(t) + 4, class: 'tick-label y-tick', 'text-anchor': 'end' }, axes, tickLabel(t, yt));
    }
    svgEl('text', { x: 14, y: top + ph / 2, class: 'axis-title', 'text-anchor': 'middle',
      transform: `rotate(-90 14 ${top + ph / 2})` }, axes, 'y (mm)');
    if (last)
      svgEl('text', { x: M.l + pwUsed / 2, y: top + ph + 38, class: 'axis-title', 'text-anchor': 'middle' }, axes, 'x (mm)');
    for (const k of P.idx) {
      panelOf[k] = pi;
      const c = document.createElementNS(SVGNS, 'circle');
      c.setAttribute('class', geo.pairs.fixed[k] ? 'node fixed' : 'node');
      c.setAttribute('cx', X(x[k]).toFixed(2));
      c.setAttribute('cy', Y(y[k]).toFixed(2));
      c.setAttribute('r', r.toFixed(2));
      c.setAttribute('data-k', k);
      frag.appendChild(c);
      S.nodes[k] = c;
    }
  });
  g.appendChild(frag);
  // fastener candidates, on the panel of their pair
  const fg = svgEl('g', { class: 'fasteners' }, svg);
  const fp = (geo.fasteners && geo.fasteners.pair) || [];
  fp.forEach((k, i) => {
    const at = { cx: X(x[k]).toFixed(2), cy: Ys[panelOf[k]](y[k]).toFixed(2), r: Math.max(3.5, 1.9 * r).toFixed(2) };
    S.fastHalo.push(svgEl('circle', Object.assign({ class: 'fastener-halo' }, at), fg)); // contrast on any color
    const c = svgEl('circle', Object.assign({ class: 'fastener', 'data-i': i, 'data-pair': k }, at), fg);
    c.addEventListener('click', (ev) => {
      ev.stopPropagation();
      togglePattern(i);
    });
    S.fast.push(c);
  });
  svg.onmousemove = onMapHover;
  svg.onmouseleave = () => { $('gap-info').dataset.hover = ''; renderGapInfo(); };
  markFasteners();
  recolor();
}

// ---------------------------------------------------------------- values
/* The summary's per-pair arrays, or null when it covers no answer (its
 * figures are zeros then, not statistics). */
function summaryPairs() {
  const s = S.summary;
  if (!s || !s.pairs) return null;
  return (s.answers !== undefined ? s.answers : s.count) > 0 ? s.pairs : null;
}
export function currentValues() {
  const r = S.result;
  if (S.mode === 'initial') return S.g0;
  if (S.mode === 'force') return r && r.lambda ? r.lambda : null;
  if (S.mode === 'p95') return summaryPairs() ? summaryPairs().p95 : null;
  if (S.mode === 'exceed') return summaryPairs() ? summaryPairs().share_above : null;
  return r && r.w ? r.w : null;
}
/* An infeasible result: its lambda holds the proof that the gaps contradict
 * (weights d >= 0 with A d = 0, largest 1), not forces (docs/solvers.md). */
function isProof(r) {
  return !!r && r.status === 'infeasible';
}
/* A result that is not an answer: any status but optimal (an iterate a
 * solve stopped at, or an infeasible result's proof). */
function notAnswer(r) {
  return !!r && r.status !== 'optimal';
}
/* What a result that is not an answer is, in words. */
function resultWhat(r) {
  if (isProof(r))
    return 'infeasible: the gaps contradict, no displacement closes them; this gap has no answer (λ holds the proof weights)';
  if (['max_iter', 'time_limit'].includes(r.status)) return `stopped at ${r.status}: an iterate, not an answer`;
  if (r.status === 'not_run') return 'not run: no answer';
  return `${r.status}: the solve stopped there; an iterate, not an answer`;
}
/* The view shows a result's vectors that are not an answer's (w of any
 * result but optimal, lambda of one that is neither optimal nor a proof):
 * neutral grey colours, and the colour bar says so. */
function iterateView() {
  const r = S.result;
  if (!notAnswer(r)) return false;
  return S.mode === 'residual' || (S.mode === 'force' && !isProof(r));
}
/* Unit of the map's values: a share for the exceedance view, N for forces
 * (none for an infeasible result's proof weights), else mm. */
function modeUnit() {
  if (S.mode === 'force') return isProof(S.result) ? '' : ' N';
  return S.mode === 'exceed' ? '' : ' mm';
}
function modeTitle() {
  if (S.mode === 'initial') return 'initial gap g (mm)';
  if (S.mode === 'force' && isProof(S.result))
    return 'proof weights d (no unit): the pairs whose gaps contradict; this gap has no answer';
  if (iterateView()) {
    const what = S.mode === 'force' ? 'λ (N)' : 'w (mm)';
    if (isProof(S.result)) return `${what} of a result with status infeasible: not an answer, the gaps contradict (grey)`;
    return `${what} of a result with status ${S.result.status}: an iterate, not an answer (grey)`;
  }
  if (S.mode === 'force') return 'contact force λ (N); 0 where the pair is open';
  if (S.mode === 'p95') return '95th percentile of the residual gap over the cloud (mm)';
  if (S.mode === 'exceed') return `share of the cloud's gaps with w above ${fmt(S.threshold)} mm, per pair`;
  return 'residual gap w after fastening (mm)';
}
/* 1 when the view's colour scale is the one initial and residual share
 * (not with a result that is not an answer: its w is no residual gap). */
function sharedScale() {
  return !S.scaleAuto && (S.mode === 'initial' || S.mode === 'residual') && !notAnswer(S.result);
}
function ramp() {
  return iterateView() ? greys : viridis;
}
/* Top of the colour scale: shared by the initial and residual views of one
 * gap (the larger of their maxima), unless "auto" asks for each its own. */
function scaleTop(v) {
  if (!v) return null;
  if (sharedScale()) return niceCeil(Math.max(maxOf(S.g0), maxOf(S.result && S.result.w)));
  return niceCeil(maxOf(v));
}

export function recolor() {
  const v = currentValues();
  const top = scaleTop(v);
  const col = ramp();
  for (let k = 0; k < S.nodes.length; k++) {
    const c = S.nodes[k];
    if (v && k < v.length) {
      c.setAttribute('fill', col(v[k] / top));
      c.setAttribute('data-v', String(v[k]));
    } else {
      c.setAttribute('fill', '#c8c8c8');
      c.removeAttribute('data-v');
    }
  }
  drawColorbar(v ? top : null);
  $('gap-controls').hidden = !GAP_MODES.includes(S.mode);
  $('scale-pick').hidden = !(S.mode === 'initial' || S.mode === 'residual');
  renderGapInfo();
}

function drawColorbar(top) {
  const svg = $('colorbar');
  clear(svg);
  const plot = S.mapPlot || { l: 62, w: 600 };
  const W = Math.max(420, ($('map-wrap').clientWidth || 960) - 4), H = 62;
  sizeSvg(svg, W, H);
  svg.dataset.top = top === null ? '' : String(top);
  const x0 = plot.l, bw = Math.min(560, Math.max(300, plot.w)), y0 = 20, bh = 14;
  const title = top === null ? noValuesTitle()
    : modeTitle() + (sharedScale() ? ' · scale shared by the initial and residual views' : '');
  svgEl('text', { x: x0, y: 13, class: 'cb-title' + (top !== null && iterateView() ? ' not-answer' : '') }, svg, title);
  const defs = svgEl('defs', {}, svg);
  const grad = svgEl('linearGradient', { id: 'cb-grad', x1: '0', x2: '1', y1: '0', y2: '0' }, defs);
  const col = ramp();
  for (let i = 0; i <= 20; i++)
    svgEl('stop', { offset: `${(i * 5)}%`, 'stop-color': top === null ? '#c8c8c8' : col(i / 20) }, grad);
  svgEl('rect', { x: x0, y: y0, width: bw, height: bh, fill: 'url(#cb-grad)', class: 'cb-bar' }, svg);
  if (top === null) return;
  const ticks = niceTicks(0, top, 5);
  for (const t of ticks) {
    const xx = x0 + (t / top) * bw;
    svgEl('line', { x1: xx, x2: xx, y1: y0 + bh, y2: y0 + bh + 5, class: 'tick' }, svg);
    svgEl('text', { x: xx, y: y0 + bh + 19, class: 'cb-tick', 'text-anchor': 'middle' }, svg, tickLabel(t, ticks) + modeUnit());
  }
}

/* The colour bar's title when the view has nothing to show. */
function noValuesTitle() {
  const s = S.summary;
  if ((S.mode === 'p95' || S.mode === 'exceed') && s && !summaryPairs())
    return s.count ? 'no values: no result of this cloud is optimal' : 'no values: no gap of this cloud is solved yet';
  return 'no values for this view';
}

// ---------------------------------------------------------------- text
/* The selected cloud's state when it has not simply finished: running
 * (gaps solved so far), failed (the server's error) or cancelled. */
function jobState(j) {
  if (j.status === 'queued' || j.status === 'running')
    return `cloud ${j.id} is ${j.status}: ${j.done} of ${j.total} gaps solved so far (followed as it runs)`;
  if (j.status === 'failed') return `cloud ${j.id} failed: ${j.error || 'no reason given'}`;
  if (j.status === 'cancelled') return `cloud ${j.id} was cancelled: ${j.done} of ${j.total} gaps solved`;
  return '';
}

export function renderGapInfo() {
  const info = $('gap-info');
  const parts = [];
  if (!S.geo) {
    clear(info); // no ready assembly: nothing to say about gaps
    return;
  }
  const st = S.job ? jobState(S.job) : '';
  if (!S.job) parts.push(S.jobs.length ? 'Select a cloud to color the nodes.' : 'No cloud for this assembly yet.');
  else if (S.mode === 'p95' || S.mode === 'exceed') {
    const what = S.mode === 'p95' ? 'per-pair 95th percentile' : 'per-pair share above the threshold';
    const s = S.summary;
    const n = s ? (s.answers !== undefined ? s.answers : s.count) : null;
    if (s && n === 0) parts.push(`cloud ${S.job.id}: no ${what}: ${s.count ? 'no optimal result' : 'no answer yet'}`);
    else parts.push(`cloud ${S.job.id}: ${what} over ${n === null ? '?' : n} gaps (the answers)`);
  } else {
    const r = S.result;
    if (r && notAnswer(r))
      parts.push(`gap ${S.gap} of cloud ${S.job.id}: ${resultWhat(r)}; solver ${r.solver}/${r.formulation}, ` +
        `ran ${fmt(r.time_ms)} ms` + (isProof(r) ? '' : ` (the iterate: ${r.n_act} pairs with λ ≠ 0, largest w ${fmt(r.max_residual)} mm)`));
    else if (r)
      parts.push(`gap ${S.gap} of cloud ${S.job.id}: ${r.status}, solver ${r.solver}/${r.formulation}, ` +
        `${r.n_act} pairs in contact, max residual ${fmt(r.max_residual)} mm, solved in ${fmt(r.time_ms)} ms`);
    else if (S.job.status === 'queued' || S.job.status === 'running' || S.job.status === 'done')
      parts.push(`gap ${S.gap} of cloud ${S.job.id}: not solved yet`);
    else parts.push(`gap ${S.gap} of cloud ${S.job.id}: not solved (the cloud ${S.job.status})`);
    if (S.g0) {
      let sum = 0;
      for (const v of S.g0) sum += v;
      parts.push(`initial gap: mean ${fmt(sum / S.g0.length)} mm, max ${fmt(maxOf(S.g0))} mm`);
    }
    if (isProof(r) && r.lambda) {
      const n = r.lambda.filter((v) => v !== 0).length;
      parts.push(`the gaps contradict: no displacement closes them; the proof weights (not forces) ` +
        `name ${n} pairs, largest ${fmt(maxOf(r.lambda))}`);
    } else if (r && r.lambda && !notAnswer(r)) {
      let sum = 0;
      for (const v of r.lambda) sum += v;
      parts.push(`contact forces: total ${fmt(sum)} N, largest ${fmt(maxOf(r.lambda))} N`);
    }
    if (notAnswer(r))
      parts.push('no initial-vs-residual scatter: it is drawn for an answer (status optimal) only; ' +
        (isProof(r) ? 'this gap has none.' : 'the w here is an iterate, not residual gaps.'));
  }
  const hv = info.dataset.hover;
  if (hv) parts.push(hv);
  clear(info);
  if (st) htmlEl('div', { id: 'job-state', class: S.job.status === 'failed' ? 'job-error' : '' }, info, st);
  for (const p of parts) htmlEl('div', {}, info, p);
}

function onMapHover(ev) {
  const t = ev.target;
  if (!t || !t.classList || !t.classList.contains('node')) return;
  const k = +t.dataset.k;
  const p = S.geo.pairs;
  const v = currentValues();
  const name = { initial: 'g', residual: 'w', force: 'λ', p95: 'p95' }[S.mode];
  $('gap-info').dataset.hover = `pair ${k} (${interfaceName(S.geo, k)}) at (${fmt(p.x[k], 4)}, ${fmt(p.y[k], 4)}) mm: ` +
    (v ? (S.mode === 'exceed' ? `share above = ${pct(v[k])}` : `${name} = ${fmt(v[k])}${modeUnit()}`) : 'no value');
  renderGapInfo();
}
