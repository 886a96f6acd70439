/*
 * app.js -- the gapsim web page (served by gapsimd at / from clients/web).
 *
 * No build step and no third-party code: plain DOM + SVG. Talks to the REST
 * API of the daemon that served it (same origin):
 *   GET  /v1/assemblies, /v1/assemblies/{id}/geometry, /v1/assemblies/{id}/jobs
 *   POST /v1/assemblies/{id}/clouds      (demo cloud as an .npy body, with the
 *        fastener fraction or the candidates clicked on the map)
 *   GET  /v1/jobs/{id}, /v1/jobs/{id}/results?offset=i&limit=1&fields=w,
 *        /v1/jobs/{id}/summary?threshold=&bins=, /v1/jobs/{id}/gaps?index=i
 *        (initial gaps; on a server without it the page regenerates the gaps
 *        of its own demo clouds from their seed)
 *
 * URL parameters select a view without clicks (used by the headless test and
 * for sharing a view): ?assembly=ID&job=ID&gap=I&mode=initial|residual|p95|exceed
 * &threshold=MM&bins=B&seed=S (seed: the job is a demo cloud of this page made
 * with seed S) &submit_demo=N&fraction=F (submit a demo cloud of N gaps once)
 * &click=i,j (test hook: click those candidate rings once the map is drawn).
 *
 * Stable ids and classes (tests count them): circle.node (one per contact
 * pair, m), circle.fastener (one per fastener candidate; a click toggles it in
 * the pattern of the next cloud, #pattern-info[data-pattern]), svg#colorbar
 * with text.cb-tick labels (mm; a share in the exceedance view), rect.hist-bar inside svg#hist-residual,
 * #hist-maxres, #hist-nact, #hist-time (one per bin), [data-value] on the
 * summary numbers (raw values from the API).
 */
'use strict';

(function () {
  const SVGNS = 'http://www.w3.org/2000/svg';
  const $ = (id) => document.getElementById(id);

  const params = new URLSearchParams(window.location.search);
  const S = {
    assemblies: [],
    asm: null, // assembly row
    geo: null, // geometry
    jobs: [],
    job: null, // job row
    gap: intParam('gap', 0),
    mode: ['initial', 'residual', 'p95', 'exceed'].includes(params.get('mode')) ? params.get('mode') : 'residual',
    threshold: numParam('threshold', 0.1),
    bins: intParam('bins', 20),
    urlSeed: params.has('seed') ? intParam('seed', 1) : null,
    urlSeedJob: params.has('seed') && params.has('job') ? params.get('job') : null,
    result: null, // result of the selected gap (with w)
    g0: null, // initial gaps of the selected gap, when known
    summary: null,
    nodes: [], // circle elements
    pollTimer: null,
    listTimer: null,
    resultSeq: 0,
    edit: null, // Uint8Array: the pattern picked by clicking candidates, or null
  };

  function intParam(k, def) {
    const v = parseInt(params.get(k), 10);
    return Number.isFinite(v) && v >= 0 ? v : def;
  }
  function numParam(k, def) {
    const v = parseFloat(params.get(k));
    return Number.isFinite(v) && v >= 0 ? v : def;
  }

  // ---------------------------------------------------------------- helpers
  function svgEl(tag, attrs, parent, text) {
    const e = document.createElementNS(SVGNS, tag);
    for (const k in attrs) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    if (parent) parent.appendChild(e);
    return e;
  }
  function htmlEl(tag, attrs, parent, text) {
    const e = document.createElement(tag);
    for (const k in attrs || {}) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    if (parent) parent.appendChild(e);
    return e;
  }
  /* value property and attribute (the attribute is what a DOM dump shows) */
  function setInput(e, v) {
    e.value = String(v);
    e.setAttribute('value', String(v));
  }
  function clear(e) {
    while (e.firstChild) e.removeChild(e.firstChild);
  }

  /* A daemon started with --token-file answers 401 without a bearer token:
   * ask for one once, keep it in this browser (localStorage), send it on
   * every API request. */
  const TOKEN_KEY = 'gapsim.token';
  function withToken(opts) {
    const t = window.localStorage ? localStorage.getItem(TOKEN_KEY) : null;
    if (!t) return opts;
    const o = Object.assign({}, opts || {});
    o.headers = Object.assign({}, (opts && opts.headers) || {}, {Authorization: 'Bearer ' + t});
    return o;
  }

  async function api(path, opts) {
    let r = await fetch(path, withToken(opts));
    if (r.status === 401 && window.localStorage) {
      const t = window.prompt('This gapsimd needs an access token (gapsimd --token-file):');
      if (t) {
        localStorage.setItem(TOKEN_KEY, t.trim());
        r = await fetch(path, withToken(opts));
      }
    }
    const txt = await r.text();
    let body = null;
    try {
      body = txt ? JSON.parse(txt) : null;
    } catch (e) {
      body = null;
    }
    if (!r.ok) {
      const msg = body && body.error ? body.error.message : txt.slice(0, 200);
      throw new Error(`${opts && opts.method ? opts.method : 'GET'} ${path}: ${r.status} ${msg}`);
    }
    return body;
  }

  function showMessage(text, kind) {
    const m = $('message');
    if (!text) {
      m.hidden = true;
      return;
    }
    m.textContent = text;
    m.className = 'message ' + (kind || 'error');
    m.hidden = false;
  }

  /* A number for people: 3 significant digits, no exponent for usual sizes. */
  function fmt(v, digits) {
    if (v === null || v === undefined || !Number.isFinite(v)) return '–';
    const d = digits === undefined ? 3 : digits;
    const a = Math.abs(v);
    if (a === 0) return '0';
    if (Number.isInteger(v) && a < 1e6) return String(v);
    if (a >= 1e5 || a < 1e-3) return v.toExponential(d - 1);
    const dec = Math.max(0, d - 1 - Math.floor(Math.log10(a)));
    return v.toFixed(dec);
  }
  function pct(v) {
    return Number.isFinite(v) ? (100 * v).toFixed(1) + ' %' : '–';
  }

  /* Ticks at 1, 2, 5 x 10^k covering [lo, hi], about n of them. */
  function niceTicks(lo, hi, n) {
    if (!(hi > lo)) return [lo];
    const raw = (hi - lo) / Math.max(1, n);
    const p = Math.pow(10, Math.floor(Math.log10(raw)));
    const f = raw / p;
    const step = (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * p;
    const out = [];
    for (let t = Math.ceil(lo / step - 1e-9) * step; t <= hi + step * 1e-9; t += step)
      out.push(Math.abs(t) < step * 1e-9 ? 0 : t);
    return out;
  }
  function tickLabel(t, ticks) {
    const step = ticks.length > 1 ? Math.abs(ticks[1] - ticks[0]) : Math.abs(t) || 1;
    const dec = Math.max(0, -Math.floor(Math.log10(step) + 1e-9));
    return t.toFixed(Math.min(dec, 6));
  }
  /* A "nice" upper end of a color scale: 1, 1.5, 2, 2.5, 3, 4, 5, 6, 8 x 10^k. */
  function niceCeil(v) {
    if (!(v > 0)) return 1;
    const p = Math.pow(10, Math.floor(Math.log10(v)));
    for (const f of [1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10]) if (f * p >= v * (1 - 1e-12)) return f * p;
    return 10 * p;
  }

  // ---------------------------------------------------------------- viridis
  // Matplotlib's viridis sampled at 0, 0.1, ..., 1; linear in between.
  const VIRIDIS = [
    [68, 1, 84], [72, 36, 117], [65, 68, 135], [53, 95, 141], [42, 120, 142], [33, 145, 140],
    [34, 168, 132], [68, 191, 112], [122, 209, 81], [189, 223, 38], [253, 231, 37],
  ];
  function viridis(t) {
    if (!Number.isFinite(t)) return '#bbbbbb';
    t = Math.min(1, Math.max(0, t)) * (VIRIDIS.length - 1);
    const i = Math.min(VIRIDIS.length - 2, Math.floor(t));
    const f = t - i;
    const a = VIRIDIS[i], b = VIRIDIS[i + 1];
    const c = (k) => Math.round(a[k] + (b[k] - a[k]) * f).toString(16).padStart(2, '0');
    return '#' + c(0) + c(1) + c(2);
  }

  // ---------------------------------------------------------------- demo gaps
  // A port of core/generator.c gs_gen_gap_cloud: per interface, a smooth random
  // field (8 plane waves of wavelength >= 200 mm and 3 Gaussian bumps) mapped
  // to [0, peak] with a power law whose mean is `mean`. Interfaces are told
  // apart by the geometry's "fixed" flag (pairs to the jig vs between parts).
  // Row r depends only on (seed, r), so the page can regenerate any row.
  const CLOUD = { mean: 0.5, peak: 2.5, corrLen: 200, spread: 0.2, fixedScale: 0.25, modes: 8, bumps: 3 };
  const MASK64 = (1n << 64n) - 1n;
  function rng(state) {
    let s = state & MASK64;
    const next = () => {
      s = (s + 0x9E3779B97F4A7C15n) & MASK64;
      let z = s;
      z = ((z ^ (z >> 30n)) * 0xBF58476D1CE4E5B9n) & MASK64;
      z = ((z ^ (z >> 27n)) * 0x94D049BB133111EBn) & MASK64;
      return z ^ (z >> 31n);
    };
    return { next, unif: () => Number(next() >> 11n) * 2 ** -53 };
  }
  function groupsOf(geo) {
    if (geo._groups) return geo._groups;
    const p = geo.pairs, m = p.x.length, keys = [], groups = [];
    for (let q = 0; q < m; q++) {
      const key = p.fixed[q] ? 1 : 0;
      let g = keys.indexOf(key);
      if (g < 0) {
        g = keys.length;
        keys.push(key);
        groups.push({ fixed: !!key, idx: [], box: [Infinity, Infinity, -Infinity, -Infinity] });
      }
      const G = groups[g];
      G.idx.push(q);
      G.box[0] = Math.min(G.box[0], p.x[q]);
      G.box[1] = Math.min(G.box[1], p.y[q]);
      G.box[2] = Math.max(G.box[2], p.x[q]);
      G.box[3] = Math.max(G.box[3], p.y[q]);
    }
    geo._groups = groups;
    return groups;
  }
  function demoGap(geo, seed, r) {
    const p = geo.pairs, m = p.x.length, g = new Float64Array(m), cp = CLOUD;
    const twoPi = 2 * Math.PI;
    groupsOf(geo).forEach((G, gi) => {
      const R = rng(
        BigInt(seed) ^ ((BigInt(r + 1) * 0xD1B54A32D192ED03n) & MASK64) ^ ((BigInt(gi + 1) * 0x8CB92BA72F3D8DD7n) & MASK64));
      R.next();
      const sc = G.fixed ? cp.fixedScale : 1;
      const mean = sc * cp.mean * (1 + cp.spread * (2 * R.unif() - 1));
      let peak = sc * cp.peak * (1 + cp.spread * (2 * R.unif() - 1));
      if (peak < 1.05 * mean) peak = 1.05 * mean;
      const kx = [], ky = [], amp = [], ph = [], bx = [], by = [], br = [], ba = [];
      for (let q = 0; q < cp.modes; q++) {
        const lam = cp.corrLen * (1 + 3 * R.unif());
        const dir = twoPi * R.unif();
        kx.push((twoPi / lam) * Math.cos(dir));
        ky.push((twoPi / lam) * Math.sin(dir));
        amp.push((lam / cp.corrLen) * (0.5 + 0.5 * R.unif()));
        ph.push(twoPi * R.unif());
      }
      const box = G.box;
      for (let q = 0; q < cp.bumps; q++) {
        bx.push(box[0] + (box[2] - box[0]) * R.unif());
        by.push(box[1] + (box[3] - box[1]) * R.unif());
        br.push(0.5 * cp.corrLen * (0.5 + R.unif()));
        ba.push((R.unif() < 0.7 ? 1 : -1) * (1 + 2 * R.unif()));
      }
      const cnt = G.idx.length, val = new Float64Array(cnt);
      let vmin = Infinity, vmax = -Infinity;
      for (let c = 0; c < cnt; c++) {
        const x = p.x[G.idx[c]], y = p.y[G.idx[c]];
        let v = 0;
        for (let q = 0; q < cp.modes; q++) v += amp[q] * Math.cos(kx[q] * x + ky[q] * y + ph[q]);
        for (let q = 0; q < cp.bumps; q++) {
          const dx = x - bx[q], dy = y - by[q];
          v += ba[q] * Math.exp(-(dx * dx + dy * dy) / (2 * br[q] * br[q]));
        }
        val[c] = v;
        vmin = Math.min(vmin, v);
        vmax = Math.max(vmax, v);
      }
      if (!(vmax - vmin > 1e-12 * (Math.abs(vmax) + 1))) {
        for (let c = 0; c < cnt; c++) g[G.idx[c]] = mean;
        return;
      }
      for (let c = 0; c < cnt; c++) {
        const u = (val[c] - vmin) / (vmax - vmin);
        val[c] = u > 0 ? Math.log(u) : -Infinity;
      }
      const rho = mean / peak;
      let lo = -7, hi = 7;
      for (let it = 0; it < 48; it++) {
        const mid = 0.5 * (lo + hi), gam = Math.exp(mid);
        let s = 0;
        for (let c = 0; c < cnt; c++) s += Math.exp(gam * val[c]);
        if (s / cnt > rho) lo = mid;
        else hi = mid;
      }
      const gam = Math.exp(0.5 * (lo + hi));
      for (let c = 0; c < cnt; c++) g[G.idx[c]] = peak * Math.exp(gam * val[c]);
    });
    return g;
  }

  /* k x m float64 C-order .npy of the demo rows 0..k-1. */
  function demoNpy(geo, seed, k) {
    const m = geo.pairs.x.length;
    let header = `{'descr': '<f8', 'fortran_order': False, 'shape': (${k}, ${m}), }`;
    const pad = 64 - ((10 + header.length + 1) % 64);
    header += ' '.repeat(pad % 64) + '\n';
    const off = 10 + header.length;
    const buf = new ArrayBuffer(off + 8 * k * m);
    const u8 = new Uint8Array(buf);
    u8.set([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, 1, 0]); // \x93NUMPY v1.0
    const dv = new DataView(buf);
    dv.setUint16(8, header.length, true);
    for (let i = 0; i < header.length; i++) u8[10 + i] = header.charCodeAt(i);
    for (let r = 0; r < k; r++) {
      const g = demoGap(geo, seed, r);
      for (let j = 0; j < m; j++) dv.setFloat64(off + 8 * (r * m + j), g[j], true);
    }
    return buf;
  }

  function demoSeedOf(jobId) {
    try {
      const v = JSON.parse(window.localStorage.getItem('gapsim.demo.' + jobId) || 'null');
      if (v && Number.isInteger(v.seed)) return v.seed;
    } catch (e) {
      /* no storage (file://, privacy mode) */
    }
    if (S.urlSeed !== null && S.urlSeedJob === jobId) return S.urlSeed;
    return null;
  }
  function rememberDemo(jobId, seed, k) {
    try {
      window.localStorage.setItem('gapsim.demo.' + jobId, JSON.stringify({ seed, k }));
    } catch (e) {
      /* ignored: the URL keeps the seed too */
    }
  }

  // ---------------------------------------------------------------- URL state
  function updateURL() {
    const q = new URLSearchParams();
    if (S.asm) q.set('assembly', S.asm.id);
    if (S.job) {
      q.set('job', S.job.id);
      q.set('gap', String(S.gap));
      const seed = demoSeedOf(S.job.id);
      if (seed !== null) q.set('seed', String(seed));
    }
    q.set('mode', S.mode);
    if (S.threshold !== 0.1) q.set('threshold', String(S.threshold));
    if (S.bins !== 20) q.set('bins', String(S.bins));
    const url = window.location.pathname + '?' + q.toString();
    window.history.replaceState(null, '', url);
  }

  // ---------------------------------------------------------------- assemblies
  async function loadAssemblies() {
    const d = await api('/v1/assemblies');
    S.assemblies = d.assemblies || [];
    const tb = $('assemblies').tBodies[0];
    clear(tb);
    for (const a of S.assemblies) {
      const tr = htmlEl('tr', { class: 'asm-row', 'data-id': a.id, title: a.id }, tb);
      if (S.asm && S.asm.id === a.id) tr.classList.add('selected');
      htmlEl('td', {}, tr, a.name || a.id);
      htmlEl('td', {}, tr).appendChild(badge(a.status));
      htmlEl('td', { class: 'num' }, tr, a.n !== undefined ? a.n.toLocaleString('en-US') : '–');
      htmlEl('td', { class: 'num' }, tr, a.m !== undefined ? a.m.toLocaleString('en-US') : '–');
      tr.addEventListener('click', () => selectAssembly(a.id, { job: null }).catch(report));
    }
    if (!S.assemblies.length) {
      const tr = htmlEl('tr', {}, tb);
      htmlEl('td', { colspan: 4, class: 'muted' }, tr,
        'No assembly yet: upload one (gapsim assembly upload MODEL.json, or POST /v1/assemblies).');
    }
  }

  function badge(status) {
    return htmlEl('span', { class: 'badge ' + status }, null, status);
  }

  async function selectAssembly(id, opt) {
    stopPolling();
    const a = S.assemblies.find((x) => x.id === id);
    if (!a) {
      showMessage(`no assembly ${id} on this server`);
      return;
    }
    S.asm = a;
    S.geo = null;
    S.job = null;
    S.result = null;
    S.g0 = null;
    S.summary = null;
    for (const tr of document.querySelectorAll('#assemblies tr.asm-row'))
      tr.classList.toggle('selected', tr.dataset.id === id);
    const pc = a.precompute || {};
    const t = pc.times_s || {};
    $('assembly-info').textContent =
      `${a.id} · ${a.joint || ''} joint · ${a.n_parts || '?'} parts · ${a.n_fasteners || 0} fastener candidates` +
      (t.total !== undefined ? ` · precomputed in ${fmt(t.total)} s` : '') +
      (pc.cond_K ? ` · cond(K) ${fmt(pc.cond_K, 2)}, cond(Q) ${fmt(pc.cond_Q, 2)}` : '');
    $('demo-submit').disabled = a.status !== 'ready';
    $('map-title').textContent = `Junction nodes of ${a.name || a.id}`;
    if (a.status !== 'ready') {
      clear($('map'));
      clear($('colorbar'));
      showMessage(`assembly ${a.id} is ${a.status}` + (a.status === 'failed' ? '' : '; reload when it is ready'), 'info');
      renderSummary();
      return;
    }
    showMessage('');
    S.geo = await api(`/v1/assemblies/${a.id}/geometry`);
    S.edit = null;
    drawMap();
    renderPatternInfo();
    await loadJobs(opt.job, opt.gap);
    // test hook: ?click=i,j,... clicks those candidates (as a user would)
    for (const i of (params.get('click') || '').split(',').filter((v) => v !== '')) {
      const c = S.fast[parseInt(i, 10)];
      if (c) c.dispatchEvent(new MouseEvent('click', { bubbles: true }));
    }
    if (opt.submitDemo) submitDemo(opt.submitDemo);
  }

  // ---------------------------------------------------------------- jobs
  async function loadJobs(wantJob, wantGap) {
    if (!S.asm) return;
    const d = await api(`/v1/assemblies/${S.asm.id}/jobs`);
    S.jobs = (d.jobs || []).slice().sort((a, b) => b.created_at - a.created_at);
    renderJobs();
    const running = S.jobs.some((j) => j.status === 'queued' || j.status === 'running');
    clearTimeout(S.listTimer);
    if (running && !S.pollTimer) S.listTimer = setTimeout(() => loadJobs().catch(report), 2000);
    if (wantJob !== undefined) {
      const j = S.jobs.find((x) => x.id === wantJob) || (wantJob === null ? S.jobs.find((x) => x.status === 'done') : null);
      if (wantJob && !j) showMessage(`no job ${wantJob} for assembly ${S.asm.id}`);
      if (j) await selectJob(j.id, wantGap || 0);
      else {
        recolor();
        renderSummary();
      }
    }
  }

  function fastenerText(opts) {
    if (!opts) return '';
    if (opts.fastener_fraction !== undefined) return `${Math.round(100 * opts.fastener_fraction)} %`;
    if (Array.isArray(opts.fasteners)) return `${opts.fasteners.length} listed`;
    return opts.fasteners || 'none';
  }

  function renderJobs() {
    const tb = $('jobs').tBodies[0];
    clear(tb);
    for (const j of S.jobs) {
      const tr = htmlEl('tr', { class: 'job-row', 'data-id': j.id, title: j.id }, tb);
      if (S.job && S.job.id === j.id) tr.classList.add('selected');
      const seed = demoSeedOf(j.id);
      htmlEl('td', {}, tr, j.id.slice(0, 10) + (seed !== null ? ` (demo seed ${seed})` : ''));
      htmlEl('td', {}, tr).appendChild(badge(j.status));
      htmlEl('td', { class: 'num' }, tr, j.status === 'done' ? String(j.total) : `${j.done}/${j.total}`);
      htmlEl('td', {}, tr, fastenerText(j.options));
      tr.addEventListener('click', () => selectJob(j.id, 0).catch(report));
    }
    $('jobs-empty').hidden = S.jobs.length > 0;
  }

  async function selectJob(id, gap) {
    const j = S.jobs.find((x) => x.id === id);
    if (!j) return;
    S.job = j;
    for (const tr of document.querySelectorAll('#jobs tr.job-row')) tr.classList.toggle('selected', tr.dataset.id === id);
    const last = Math.max(0, j.total - 1);
    S.gap = Math.min(Math.max(0, gap | 0), last);
    for (const e of [$('gap-slider'), $('gap-index')]) {
      e.max = String(last);
      setInput(e, S.gap);
    }
    $('gap-total').textContent = `of 0–${last}`;
    setModeRadio();
    markFasteners();
    updateURL();
    await Promise.all([loadGap(), loadSummary()]);
  }

  /* The candidates a job installed, as the server says (options.installed);
   * jobs stored before the server said it: explicit lists only, else null. */
  function installedFasteners(job, nf) {
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

  function editedList() {
    const out = [];
    if (S.edit) S.edit.forEach((v, i) => { if (v) out.push(i); });
    return out;
  }

  function renderPatternInfo() {
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

  // ---------------------------------------------------------------- gap + map
  /* The initial gaps of gap `gap` of `job`: from GET /v1/jobs/{id}/gaps?index=i
   * when the server has it, else regenerated from the demo seed when the page
   * made this cloud, else null. */
  async function fetchInitial(job, gap) {
    if (S.gapsApi !== false) {
      try {
        const d = await api(`/v1/jobs/${job.id}/gaps?index=${gap}`);
        if (d && Array.isArray(d.g)) {
          S.gapsApi = true;
          return { g: d.g, src: 'api' };
        }
      } catch (e) {
        // the job exists, so 404/405 means a server without this endpoint
        if (/: 40[45] /.test(e.message)) S.gapsApi = false;
      }
    }
    const seed = demoSeedOf(job.id);
    if (seed !== null) return { g: demoGap(S.geo, seed, gap), src: 'seed', seed };
    return null;
  }

  async function loadGap() {
    if (!S.job || !S.geo) return;
    const seq = ++S.resultSeq;
    const job = S.job, gap = S.gap;
    const solved = gap < job.done || job.status === 'done';
    const [init, res] = await Promise.all([
      fetchInitial(job, gap),
      solved ? api(`/v1/jobs/${job.id}/results?offset=${gap}&limit=1&fields=w`) : Promise.resolve(null),
    ]);
    if (seq !== S.resultSeq) return; // a newer request won
    S.g0 = init ? init.g : null;
    S.g0src = init;
    const r = res && (res.results || [])[0];
    S.result = r && r.job_index === gap ? r : null;
    $('mode-initial').disabled = !S.g0;
    if (!S.g0 && S.mode === 'initial') {
      S.mode = 'residual';
      setModeRadio();
      updateURL();
    }
    recolor();
  }

  function setModeRadio() {
    for (const id of ['mode-initial', 'mode-residual', 'mode-p95', 'mode-exceed']) {
      const e = $(id);
      if (e) e.checked = e.value === S.mode;
    }
  }

  /* Layers of pairs: (fixed flag, z). When pairs of different layers share
   * (x, y) positions (a sandwich joint: interfaces stacked in z, pairs to the
   * jig under pairs between parts), each layer gets its own panel; otherwise
   * one panel holds all pairs. */
  function mapLayers(geo) {
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
    return layers.map((L) => ({
      title: `${L.fixed ? 'pairs to the fixed jig' : 'pairs between parts'} at z = ${fmt(L.z, 4)} mm (${L.idx.length} pairs)`,
      idx: L.idx,
    }));
  }

  function drawMap() {
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
    x0 -= h; x1 += h;
    // each panel spans its own y range, all at the same scale
    for (const P of panels) {
      P.y0 = Infinity;
      P.y1 = -Infinity;
      for (const k of P.idx) {
        P.y0 = Math.min(P.y0, y[k]);
        P.y1 = Math.max(P.y1, y[k]);
      }
      if (!P.idx.length) P.y0 = P.y1 = 0;
      P.y0 -= h;
      P.y1 += h;
    }
    const wrap = $('map-wrap');
    const W = Math.max(420, Math.min(1600, (wrap.clientWidth || 960) - 4));
    const M = { l: 62, r: 16, t: 14, b: 46 };
    const LT = np > 1 ? 22 : 0; // room for a panel title
    const GAP = np > 1 ? 10 : 0;
    const pw = W - M.l - M.r;
    const maxH = np > 1 ? Math.max(150, 640 / np) : 560;
    const spanY = Math.max(...panels.map((P) => P.y1 - P.y0));
    let s = pw / (x1 - x0);
    if (spanY * s > maxH) s = maxH / spanY;
    const pwUsed = (x1 - x0) * s;
    let H = M.t + M.b + (np - 1) * GAP;
    for (const P of panels) {
      P.ph = (P.y1 - P.y0) * s;
      H += LT + P.ph;
    }
    H = Math.ceil(H);
    svg.setAttribute('width', W);
    svg.setAttribute('height', H);
    svg.setAttribute('viewBox', `0 0 ${W} ${H}`);
    const X = (v) => M.l + (v - x0) * s;
    S.mapPlot = { l: M.l, w: pwUsed };
    const r = Math.min(9, Math.max(1.2, 0.42 * h * s));
    S.nodeR = r;
    const xt = niceTicks(x0, x1, Math.max(2, Math.floor(pwUsed / 90)));
    const panelOf = new Int32Array(m);
    const Ys = [];
    const axes = svgEl('g', { class: 'axes' }, svg);
    const g = svgEl('g', { class: 'nodes' }, svg);
    const frag = document.createDocumentFragment();
    let next = M.t;
    panels.forEach((P, pi) => {
      const top = next + LT, ph = P.ph;
      next = top + ph + GAP;
      const Y = (v) => top + (P.y1 - v) * s;
      const yt = niceTicks(P.y0, P.y1, Math.max(2, Math.floor(ph / 40)));
      Ys.push(Y);
      if (P.title)
        svgEl('text', { x: M.l, y: top - 6, class: 'layer-title' }, axes, P.title);
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
        svgEl('text', { x: M.l - 8, y: Y(t) + 4, class: 'tick-label', 'text-anchor': 'end' }, axes, tickLabel(t, yt));
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

  function markFasteners() {
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

  function currentValues() {
    if (S.mode === 'initial') return S.g0;
    if (S.mode === 'p95') return S.summary && S.summary.pairs ? S.summary.pairs.p95 : null;
    if (S.mode === 'exceed') return S.summary && S.summary.pairs ? S.summary.pairs.share_above : null;
    return S.result && S.result.w ? S.result.w : null;
  }
  /* Unit of the map's values: a share for the exceedance view, else mm. */
  function modeUnit() {
    return S.mode === 'exceed' ? '' : ' mm';
  }
  function modeTitle() {
    if (S.mode === 'initial') return 'initial gap g (mm)';
    if (S.mode === 'p95') return '95th percentile of the residual gap over the cloud (mm)';
    if (S.mode === 'exceed') return `share of the cloud's gaps with w above ${fmt(S.threshold)} mm, per pair`;
    return 'residual gap w after fastening (mm)';
  }

  function recolor() {
    const v = currentValues();
    let vmax = 0;
    if (v) for (let k = 0; k < v.length; k++) if (v[k] > vmax) vmax = v[k];
    const top = niceCeil(vmax);
    for (let k = 0; k < S.nodes.length; k++) {
      const c = S.nodes[k];
      if (v && k < v.length) {
        c.setAttribute('fill', viridis(v[k] / top));
        c.setAttribute('data-v', String(v[k]));
      } else {
        c.setAttribute('fill', '#c8c8c8');
        c.removeAttribute('data-v');
      }
    }
    drawColorbar(v ? top : null);
    renderGapInfo();
  }

  function drawColorbar(top) {
    const svg = $('colorbar');
    clear(svg);
    const plot = S.mapPlot || { l: 62, w: 600 };
    const W = Math.max(420, plot.l + Math.min(560, plot.w) + 40), H = 62;
    svg.setAttribute('width', W);
    svg.setAttribute('height', H);
    svg.setAttribute('viewBox', `0 0 ${W} ${H}`);
    const x0 = plot.l, bw = Math.min(560, Math.max(300, plot.w)), y0 = 20, bh = 14;
    svgEl('text', { x: x0, y: 13, class: 'cb-title' }, svg, top === null ? 'no values for this view' : modeTitle());
    const defs = svgEl('defs', {}, svg);
    const grad = svgEl('linearGradient', { id: 'cb-grad', x1: '0', x2: '1', y1: '0', y2: '0' }, defs);
    for (let i = 0; i <= 20; i++)
      svgEl('stop', { offset: `${(i * 5)}%`, 'stop-color': top === null ? '#c8c8c8' : viridis(i / 20) }, grad);
    svgEl('rect', { x: x0, y: y0, width: bw, height: bh, fill: 'url(#cb-grad)', class: 'cb-bar' }, svg);
    if (top === null) return;
    const ticks = niceTicks(0, top, 5);
    for (const t of ticks) {
      const xx = x0 + (t / top) * bw;
      svgEl('line', { x1: xx, x2: xx, y1: y0 + bh, y2: y0 + bh + 5, class: 'tick' }, svg);
      svgEl('text', { x: xx, y: y0 + bh + 19, class: 'cb-tick', 'text-anchor': 'middle' }, svg, tickLabel(t, ticks) + modeUnit());
    }
  }

  function renderGapInfo() {
    const info = $('gap-info');
    const parts = [];
    if (!S.job) parts.push(S.jobs.length ? 'Select a cloud to color the nodes.' : 'No cloud for this assembly yet.');
    else {
      const r = S.result;
      if (S.mode === 'p95') parts.push(`cloud ${S.job.id}: per-pair 95th percentile over ${S.summary ? S.summary.count : '?'} gaps`);
      if (S.mode === 'exceed') parts.push(`cloud ${S.job.id}: per-pair share of ${S.summary ? S.summary.count : '?'} gaps above the threshold`);
      else if (r)
        parts.push(`gap ${S.gap} of cloud ${S.job.id}: ${r.status}, solver ${r.solver}/${r.formulation}, ` +
          `${r.n_act} pairs in contact, max residual ${fmt(r.max_residual)} mm, solved in ${fmt(r.time_ms)} ms`);
      else parts.push(`gap ${S.gap} of cloud ${S.job.id}: not solved yet`);
      if (S.g0) {
        let mx = 0, sum = 0;
        for (const v of S.g0) { mx = Math.max(mx, v); sum += v; }
        const src = S.g0src && S.g0src.src === 'seed' ? `regenerated in the page from demo seed ${S.g0src.seed}` : 'from the server';
        parts.push(`initial gap (${src}): mean ${fmt(sum / S.g0.length)} mm, max ${fmt(mx)} mm`);
      } else if (S.mode !== 'p95' && S.mode !== 'exceed') parts.push('initial gaps: not available (this server does not return the gaps of a cloud; the page knows only its own demo clouds)');
    }
    const hv = info.dataset.hover;
    if (hv) parts.push(hv);
    clear(info);
    for (const p of parts) htmlEl('div', {}, info, p);
  }

  function onMapHover(ev) {
    const t = ev.target;
    if (!t || !t.classList || !t.classList.contains('node')) return;
    const k = +t.dataset.k;
    const p = S.geo.pairs;
    const v = currentValues();
    $('gap-info').dataset.hover = `pair ${k} at (${fmt(p.x[k], 4)}, ${fmt(p.y[k], 4)}) mm: ` +
      (v ? (S.mode === 'exceed' ? `share above = ${pct(v[k])}` : `${S.mode === 'initial' ? 'g' : S.mode === 'p95' ? 'p95' : 'w'} = ${fmt(v[k])} mm`) : 'no value');
    renderGapInfo();
  }

  // ---------------------------------------------------------------- summary
  async function loadSummary() {
    if (!S.job) return renderSummary();
    const d = await api(`/v1/jobs/${S.job.id}/summary?threshold=${encodeURIComponent(S.threshold)}&bins=${S.bins}`);
    S.summary = d;
    renderSummary();
    if (S.mode === 'p95' || S.mode === 'exceed') recolor();
  }

  function stat(parent, label, id, value, text) {
    const row = htmlEl('div', { class: 'stat-row' }, parent);
    htmlEl('span', { class: 'stat-label' }, row, label);
    const v = htmlEl('span', { class: 'stat', id, 'data-value': String(value) }, row, text);
    return v;
  }

  function renderSummary() {
    const s = S.summary;
    $('summary').hidden = !s;
    $('summary-empty').hidden = !!s;
    if (!s) return;
    const box = $('summary-stats');
    clear(box);
    const c1 = htmlEl('div', { class: 'stat-col' }, box);
    htmlEl('h3', {}, c1, 'Cloud');
    stat(c1, 'gaps solved', 'stat-count', s.count, `${s.count} of ${s.total}`);
    stat(c1, 'statuses', 'stat-statuses', JSON.stringify(s.statuses),
      Object.entries(s.statuses || {}).map(([k, v]) => `${k} ${v}`).join(', ') || '–');
    stat(c1, 'solvers', 'stat-solvers', JSON.stringify(s.solvers),
      Object.entries(s.solvers || {}).map(([k, v]) => `${k} ${v}`).join(', ') || '–');
    stat(c1, 'pairs m', 'stat-m', s.m, String(s.m));
    const c2 = htmlEl('div', { class: 'stat-col' }, box);
    htmlEl('h3', {}, c2, `Above ${fmt(s.threshold)} mm`);
    stat(c2, 'gaps with max residual above', 'stat-share-gaps', s.share_gaps_above, pct(s.share_gaps_above));
    stat(c2, 'pair residuals above', 'stat-share-values', s.share_values_above, pct(s.share_values_above));
    if (s.residual_histogram && s.residual_histogram.in_contact !== undefined)
      stat(c2, 'pair residuals in contact (w = 0)', 'stat-in-contact', s.residual_histogram.in_contact,
        pct(s.residual_histogram.in_contact / Math.max(1, s.count * s.m)));
    if (s.opened) {
      const e = stat(c2, 'opened by fastening (w > g + threshold)', 'stat-opened', s.opened.pairs,
        `${s.opened.pairs} pairs, in ${pct(s.opened.share_gaps)} of gaps`);
      if (e) e.title = s.opened.why;
      htmlEl('div', { class: 'muted small', id: 'opened-why' }, c2, s.opened.why);
    }
    const mr = s.max_residual || {};
    const c3 = htmlEl('div', { class: 'stat-col' }, box);
    htmlEl('h3', {}, c3, 'Max residual gap per gap');
    stat(c3, 'mean', 'stat-maxres-mean', mr.mean, `${fmt(mr.mean)} mm`);
    stat(c3, 'median', 'stat-maxres-median', mr.median, `${fmt(mr.median)} mm`);
    stat(c3, '95th percentile', 'stat-maxres-p95', mr.p95, `${fmt(mr.p95)} mm`);
    stat(c3, 'max', 'stat-maxres-max', mr.max, `${fmt(mr.max)} mm`);
    const na = s.n_act || {}, tm = s.time_ms || {};
    const c4 = htmlEl('div', { class: 'stat-col' }, box);
    htmlEl('h3', {}, c4, 'Contacts and time');
    stat(c4, 'pairs in contact, median (range)', 'stat-nact-median', na.median, `${fmt(na.median)} (${fmt(na.min)}–${fmt(na.max)})`);
    stat(c4, 'solve time median', 'stat-time-median', tm.median, `${fmt(tm.median)} ms`);
    stat(c4, 'solve time p95', 'stat-time-p95', tm.p95, `${fmt(tm.p95)} ms`);
    stat(c4, 'solves/s', 'stat-rate', S.job && S.job.solves_per_s, fmt(S.job && S.job.solves_per_s));

    const rh = s.residual_histogram || { edges: [], counts: [] };
    drawHist($('hist-residual'), rh.edges, rh.counts, { unit: 'mm', title: 'residual gap (mm)', log: true, threshold: s.threshold });
    const mh = mr.histogram || { edges: [], counts: [] };
    drawHist($('hist-maxres'), mh.edges, mh.counts, { unit: 'mm', title: 'max residual gap of a gap (mm)', threshold: s.threshold });
    const nh = na.histogram || { edges: [], counts: [] };
    drawHist($('hist-nact'), nh.edges, nh.counts, { unit: '', title: 'pairs in contact n_act' });
    const th = tm.histogram || { edges: [], counts: [] };
    drawHist($('hist-time'), th.edges, th.counts, { unit: 'ms', title: th.log ? 'solve time (ms, log scale)' : 'solve time (ms)', logx: !!th.log });
    $('cap-residual').textContent = `Residual gaps of open pairs, all gaps (count, log scale); ${rh.in_contact !== undefined ? rh.in_contact.toLocaleString('en') : '?'} pair residuals in contact (w = 0) not in the bars`;
  }

  function drawHist(svg, edges, counts, o) {
    clear(svg);
    const W = 460, H = 210, M = { l: 58, r: 12, t: 12, b: 44 };
    svg.setAttribute('viewBox', `0 0 ${W} ${H}`);
    svg.setAttribute('width', W);
    svg.setAttribute('height', H);
    const pw = W - M.l - M.r, ph = H - M.t - M.b;
    const n = counts.length;
    if (!n) return;
    let lo = edges[0], hi = edges[n];
    if (!(hi > lo)) {
      lo -= 0.5;
      hi += 0.5;
    }
    const logx = o.logx && lo > 0 && hi > lo;
    const X = logx ? (v) => M.l + (Math.log(v / lo) / Math.log(hi / lo)) * pw : (v) => M.l + ((v - lo) / (hi - lo)) * pw;
    const cmax = Math.max(1, ...counts);
    const f = o.log ? (c) => (c > 0 ? Math.log10(c) + 1 : 0) : (c) => c;
    const fmax = o.log ? Math.log10(cmax) + 1 : cmax;
    const Y = (c) => M.t + ph - (f(c) / fmax) * ph;
    const axes = svgEl('g', { class: 'axes' }, svg);
    // y ticks
    let yt;
    if (o.log) {
      yt = [];
      for (let p = 1; p <= cmax; p *= 10) yt.push(p);
    } else yt = niceTicks(0, cmax, 4).filter((t) => Number.isInteger(t));
    for (const t of yt) {
      svgEl('line', { x1: M.l, x2: M.l + pw, y1: Y(t), y2: Y(t), class: 'grid' }, axes);
      svgEl('text', { x: M.l - 6, y: Y(t) + 4, class: 'tick-label', 'text-anchor': 'end' }, axes,
        t >= 1e4 ? t.toExponential(0).replace('e+', 'e') : String(t));
    }
    svgEl('text', { x: 12, y: M.t + ph / 2, class: 'axis-title', 'text-anchor': 'middle',
      transform: `rotate(-90 12 ${M.t + ph / 2})` }, axes, o.log ? 'count (log)' : 'count');
    const bars = svgEl('g', { class: 'bars' }, svg);
    for (let i = 0; i < n; i++) {
      const a = edges[i], b = edges[i + 1];
      const xa = hi > lo && edges[n] > edges[0] ? X(a) : M.l + (i / n) * pw;
      const xb = hi > lo && edges[n] > edges[0] ? X(b) : M.l + ((i + 1) / n) * pw;
      const y = Y(counts[i]);
      const rect = svgEl('rect', { class: 'hist-bar', x: xa + 0.5, y, width: Math.max(0.5, xb - xa - 1),
        height: M.t + ph - y, 'data-count': counts[i], 'data-lo': a, 'data-hi': b }, bars);
      svgEl('title', {}, rect, `${fmt(a)}–${fmt(b)}${o.unit ? ' ' + o.unit : ''}: ${counts[i]}`);
    }
    svgEl('line', { x1: M.l, x2: M.l + pw, y1: M.t + ph, y2: M.t + ph, class: 'axis' }, axes);
    let xt = niceTicks(lo, hi, 5);
    if (logx) { // 1-2-5 ticks in log space
      xt = [];
      for (let d = Math.pow(10, Math.floor(Math.log10(lo))); d <= hi; d *= 10)
        for (const f of [1, 2, 5]) if (f * d >= lo && f * d <= hi) xt.push(f * d);
      if (xt.length < 2) xt = [lo, hi];
    }
    for (const t of xt) {
      svgEl('line', { x1: X(t), x2: X(t), y1: M.t + ph, y2: M.t + ph + 5, class: 'tick' }, axes);
      svgEl('text', { x: X(t), y: M.t + ph + 18, class: 'tick-label', 'text-anchor': 'middle' }, axes, tickLabel(t, xt));
    }
    svgEl('text', { x: M.l + pw / 2, y: M.t + ph + 38, class: 'axis-title', 'text-anchor': 'middle' }, axes, o.title);
    if (o.threshold !== undefined && o.threshold >= lo && o.threshold <= hi) {
      const xx = X(o.threshold);
      svgEl('line', { x1: xx, x2: xx, y1: M.t, y2: M.t + ph, class: 'threshold' }, svg);
      svgEl('text', { x: xx + 4, y: M.t + 10, class: 'threshold-label' }, svg, `threshold ${fmt(o.threshold)} mm`);
    }
  }

  // ---------------------------------------------------------------- demo cloud
  async function submitDemo(nOverride) {
    if (!S.asm || !S.geo) return;
    const k = nOverride || Math.max(1, Math.min(10000, parseInt($('demo-n').value, 10) || 100));
    const frac = Math.min(1, Math.max(0, parseFloat($('demo-fraction').value)));
    const seed = Math.max(0, parseInt($('demo-seed').value, 10) || 0);
    const btn = $('demo-submit');
    btn.disabled = true;
    setProgress(0, k, `generating ${k} gaps…`);
    try {
      await new Promise((res) => setTimeout(res, 0)); // let the text paint
      const body = demoNpy(S.geo, seed, k);
      const picked = editedList();
      const q = S.edit
        ? `solver=auto&fasteners=${picked.length ? picked.join(',') : 'none'}`
        : `solver=auto&fastener_fraction=${encodeURIComponent(Number.isFinite(frac) ? frac : 0.5)}`;
      const job = await api(`/v1/assemblies/${S.asm.id}/clouds?${q}`, {
        method: 'POST', headers: { 'Content-Type': 'application/x-npy' }, body,
      });
      rememberDemo(job.id, seed, k);
      S.edit = null; // the new job shows the pattern it installed
      renderPatternInfo();
      updateURL(); // drops submit_demo: a reload does not submit again
      $('demo-seed').value = String(seed + 1); // next demo: other gaps
      $('progress').dataset.job = job.id;
      await loadJobs();
      pollJob(job.id);
    } catch (e) {
      report(e);
      setProgress(0, 0, 'submission failed');
      btn.disabled = false;
    }
  }

  function setProgress(done, total, text) {
    $('progress').hidden = false;
    $('progress-fill').style.width = `${total > 0 ? (100 * done) / total : 0}%`;
    $('progress').dataset.done = done;
    $('progress').dataset.total = total;
    $('progress-text').textContent = text;
  }

  function stopPolling() {
    clearTimeout(S.pollTimer);
    S.pollTimer = null;
  }

  async function pollJob(id) {
    stopPolling();
    let j;
    try {
      j = await api(`/v1/jobs/${id}`);
    } catch (e) {
      report(e);
      $('demo-submit').disabled = false;
      return;
    }
    const rate = j.solves_per_s ? `${fmt(j.solves_per_s)} solves/s` : '';
    const eta = j.eta_s !== null && j.eta_s !== undefined && j.status !== 'done' ? `ETA ${fmt(j.eta_s, 2)} s` : '';
    setProgress(j.done, j.total, [`${j.id}: ${j.status}`, `${j.done} / ${j.total} gaps`, rate, eta].filter(Boolean).join(' · '));
    $('progress').dataset.status = j.status;
    if (j.status === 'queued' || j.status === 'running') {
      S.pollTimer = setTimeout(() => pollJob(id), 400);
      return;
    }
    S.pollTimer = null;
    $('demo-submit').disabled = !(S.asm && S.asm.status === 'ready');
    if (S.asm && j.assembly_id === S.asm.id) await loadJobs(j.status === 'done' ? id : undefined, 0);
  }

  // ---------------------------------------------------------------- wiring
  function report(e) {
    console.error(e);
    showMessage(String(e && e.message ? e.message : e));
  }

  function wire() {
    for (const id of ['mode-initial', 'mode-residual']) {
      $(id).addEventListener('change', (ev) => {
        if (!ev.target.checked) return;
        S.mode = ev.target.value;
        updateURL();
        recolor();
      });
    }
    // third view: per-pair p95 over the cloud (from the summary)
    const seg = document.querySelector('.seg');
    const lab = htmlEl('label', {}, seg);
    const inp = htmlEl('input', { type: 'radio', name: 'mode', id: 'mode-p95', value: 'p95' }, lab);
    lab.appendChild(document.createTextNode(' cloud p95'));
    inp.addEventListener('change', () => {
      S.mode = 'p95';
      updateURL();
      recolor();
    });
    // fourth view: exceedance map, the share of the cloud's gaps above the threshold per pair
    const labE = htmlEl('label', {}, seg);
    const inpE = htmlEl('input', { type: 'radio', name: 'mode', id: 'mode-exceed', value: 'exceed' }, labE);
    labE.appendChild(document.createTextNode(' share above threshold'));
    inpE.addEventListener('change', () => {
      S.mode = 'exceed';
      updateURL();
      recolor();
    });
    let gapTimer = null;
    const onGap = (v) => {
      if (!S.job) return;
      const last = Math.max(0, S.job.total - 1);
      S.gap = Math.min(last, Math.max(0, parseInt(v, 10) || 0));
      setInput($('gap-slider'), S.gap);
      setInput($('gap-index'), S.gap);
      clearTimeout(gapTimer);
      gapTimer = setTimeout(() => {
        if (S.mode === 'p95' || S.mode === 'exceed') S.mode = 'residual';
        setModeRadio();
        updateURL();
        loadGap().catch(report);
      }, 60);
    };
    $('gap-slider').addEventListener('input', (e) => onGap(e.target.value));
    $('gap-index').addEventListener('change', (e) => onGap(e.target.value));
    setInput($('threshold'), S.threshold);
    setInput($('bins'), S.bins);
    $('threshold').addEventListener('change', (e) => {
      const v = parseFloat(e.target.value);
      if (!(v >= 0)) return;
      S.threshold = v;
      updateURL();
      loadSummary().catch(report);
    });
    $('bins').addEventListener('change', (e) => {
      const v = parseInt(e.target.value, 10);
      if (!(v >= 1 && v <= 1000)) return;
      S.bins = v;
      updateURL();
      loadSummary().catch(report);
    });
    $('demo-submit').addEventListener('click', () => submitDemo());
    $('pattern-clear').addEventListener('click', () => {
      S.edit = null;
      markFasteners();
      renderPatternInfo();
    });
    if (params.has('fraction')) $('demo-fraction').value = params.get('fraction');
    if (params.has('seed') && params.has('submit_demo')) $('demo-seed').value = params.get('seed');
    let resizeTimer = null;
    window.addEventListener('resize', () => {
      clearTimeout(resizeTimer);
      resizeTimer = setTimeout(drawMap, 150);
    });
  }

  async function start() {
    wire();
    setModeRadio();
    try {
      const h = await api('/healthz');
      $('server-status').textContent = `gapsimd ${h.version} · ${h.workers} workers · ${h.jobs_active} jobs running`;
    } catch (e) {
      $('server-status').textContent = 'server not reachable';
    }
    try {
      await loadAssemblies();
      let id = params.get('assembly');
      if (!id) {
        const ready = S.assemblies.find((a) => a.status === 'ready');
        id = ready ? ready.id : S.assemblies.length ? S.assemblies[0].id : null;
      }
      if (id) {
        const demo = parseInt(params.get('submit_demo'), 10);
        await selectAssembly(id, {
          job: params.has('job') ? params.get('job') : null,
          gap: S.gap,
          submitDemo: demo > 0 ? Math.min(demo, 10000) : 0,
        });
      }
      document.body.dataset.ready = '1';
    } catch (e) {
      report(e);
      document.body.dataset.ready = 'error';
    }
  }

  start();
})();
