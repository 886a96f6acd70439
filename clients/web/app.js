/*
 * app.js -- the gapsim web page (served by gapsimd at / from clients/web):
 * loading and selecting assemblies, clouds and gap vectors, the cloud
 * summary, the gap scatter, submitting a cloud, and the wiring of the
 * controls. ES modules, no build step, no third-party code:
 *   format.js  DOM/SVG helpers, number formats, ticks, viridis
 *   api.js     requests (same origin, bearer token when the daemon asks)
 *   state.js   the page state S and its URL form
 *   map.js     the junction map, its colour bar and the fastener rings
 *   charts.js  histograms and the initial-vs-residual scatter
 *
 * Requests: GET /healthz, /v1/assemblies, /v1/assemblies/{id}/geometry,
 * /v1/assemblies/{id}/jobs, /v1/jobs/{id} (also on opening a ?job= link: its
 * assembly), /v1/jobs/{id}/gaps?index=i,
 * /v1/jobs/{id}/results?offset=i&limit=1&fields=w,lambda,
 * /v1/jobs/{id}/summary?threshold=&bins=; POST /v1/assemblies/{id}/clouds
 * with {"generate": {"count", "seed"}, "label", fastener pattern} (the server
 * generates the gaps and keeps them: the page has no generator of its own),
 * or with {"gaps_from": J, "warm_start": J, pattern} (the selected cloud's
 * gaps again under another pattern).
 *
 * Stable ids and classes a test can rely on are listed in docs/web.md.
 */
import { $, htmlEl, clear, setInput, fmt, pct } from './format.js';
import { api, postJSON } from './api.js';
import { S, MODES, GAP_MODES, params, intParam, updateURL } from './state.js';
import { drawMap, recolor, markFasteners, renderPatternInfo, editedList } from './map.js';
import { drawHist, drawScatter } from './charts.js';

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
function report(e) {
  console.error(e);
  showMessage(String(e && e.message ? e.message : e));
}
function badge(status) {
  return htmlEl('span', { class: 'badge ' + status }, null, status);
}

// ---------------------------------------------------------------- server
async function refreshHealth() {
  try {
    const h = await api('/healthz');
    const st = $('server-status');
    st.dataset.jobsActive = String(h.jobs_active);
    st.dataset.assembliesLoaded = String(h.assemblies_loaded);
    const mem = h.assemblies_mb === undefined ? '' : ` (${Math.round(h.assemblies_mb)} MiB)`;
    st.textContent = `gapsimd ${h.version} · ${h.workers} workers · ${h.jobs_active} job${h.jobs_active === 1 ? '' : 's'} running` +
      ` · ${h.assemblies_loaded} assembl${h.assemblies_loaded === 1 ? 'y' : 'ies'} loaded${mem}` +
      (h.status && h.status !== 'ok' ? ` · ${h.status}` : '');
    // on hover: why it is degraded, and the BLAS kernel it runs
    const blas = h.blas ? `BLAS kernel ${h.blas.kernel}${h.blas.pinned ? ' (OPENBLAS_CORETYPE)' : ''}` : '';
    st.title = [...(h.reasons || []), blas].filter(Boolean).join('\n');
  } catch (e) {
    $('server-status').textContent = 'server not reachable';
  }
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

async function selectAssembly(id, opt) {
  stopPolling();
  const a = S.assemblies.find((x) => x.id === id);
  if (!a) {
    showMessage(`no assembly ${id} on this server`);
    return;
  }
  Object.assign(S, { asm: a, geo: null, job: null, result: null, g0: null, summary: null });
  for (const tr of document.querySelectorAll('#assemblies tr.asm-row'))
    tr.classList.toggle('selected', tr.dataset.id === id);
  const pc = a.precompute || {};
  const t = pc.times_s || {};
  $('assembly-info').textContent =
    `${a.id} · ${a.joint || ''} joint · ${a.n_parts || '?'} parts · ${a.n_fasteners || 0} fastener candidates` +
    (t.total !== undefined ? ` · precomputed in ${fmt(t.total)} s` : '') +
    (pc.cond_K ? ` · cond(K) ${fmt(pc.cond_K, 2)}, cond(Q) ${fmt(pc.cond_Q, 2)}` : '');
  enableSubmit();
  $('map-title').textContent = `Junction nodes of ${a.name || a.id}`;
  if (a.status !== 'ready') {
    clear($('map'));
    clear($('colorbar'));
    showMessage(`assembly ${a.id} is ${a.status}` + (a.status === 'failed' ? '' : '; reload when it is ready'), 'info');
    renderSummary();
    renderScatter();
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
  if (opt.submitDemo) await submitDemo(opt.submitDemo);
  else if (opt.submitAgain) await submitAgain();
}

// ---------------------------------------------------------------- jobs
async function loadJobs(wantJob, wantGap) {
  if (!S.asm) return;
  const d = await api(`/v1/assemblies/${S.asm.id}/jobs`);
  S.jobs = (d.jobs || []).slice().sort((a, b) => b.created_at - a.created_at);
  renderJobs();
  const running = S.jobs.some((j) => j.status === 'queued' || j.status === 'running');
  clearTimeout(S.listTimer);
  if (running && !S.polling) S.listTimer = setTimeout(() => { refreshHealth(); loadJobs().catch(report); }, 2000);
  if (wantJob !== undefined) {
    const j = S.jobs.find((x) => x.id === wantJob) || (wantJob === null ? S.jobs.find((x) => x.status === 'done') : null);
    if (wantJob && !j) showMessage(`no job ${wantJob} for assembly ${S.asm.id}`);
    if (j) await selectJob(j.id, wantGap || 0);
    else {
      recolor();
      renderSummary();
      renderScatter();
    }
  }
}

function fastenerText(opts) {
  if (!opts) return '';
  const n = Array.isArray(opts.installed) ? ` (${opts.installed.length})` : '';
  if (opts.fastener_fraction !== undefined) return `${Math.round(100 * opts.fastener_fraction)} %${n}`;
  if (Array.isArray(opts.fasteners)) return `${opts.fasteners.length} listed`;
  return (opts.fasteners || 'none') + n;
}
function labelOf(j) {
  return (j.options && j.options.label) || '';
}
/* The filter box matches the label, the id or the status (case-insensitive). */
function matchesFilter(j) {
  const f = S.filter.trim().toLowerCase();
  if (!f) return true;
  return [labelOf(j), j.id, j.status].some((s) => s.toLowerCase().includes(f));
}

function renderJobs() {
  const tb = $('jobs').tBodies[0];
  clear(tb);
  let shown = 0;
  for (const j of S.jobs) {
    if (!matchesFilter(j) && !(S.job && S.job.id === j.id)) continue;
    shown++;
    const tr = htmlEl('tr', { class: 'job-row', 'data-id': j.id, title: j.id }, tb);
    if (S.job && S.job.id === j.id) tr.classList.add('selected');
    const td = htmlEl('td', {}, tr);
    const lab = labelOf(j);
    if (lab) htmlEl('span', { class: 'job-label' }, td, lab);
    htmlEl('span', { class: lab ? 'muted small job-id' : 'job-id' }, td, (lab ? ' ' : '') + j.id.slice(0, 10));
    htmlEl('td', {}, tr).appendChild(badge(j.status));
    htmlEl('td', { class: 'num' }, tr, j.status === 'done' ? String(j.total) : `${j.done}/${j.total}`);
    htmlEl('td', {}, tr, fastenerText(j.options));
    tr.addEventListener('click', () => selectJob(j.id, 0).catch(report));
  }
  $('jobs-empty').hidden = S.jobs.length > 0;
  $('jobs-filtered').textContent = S.filter && shown < S.jobs.length ? `${shown} of ${S.jobs.length} clouds match "${S.filter}"` : '';
  keepSelectedInView();
}
/* The selected cloud stays visible in the (scrolling) list. */
function keepSelectedInView() {
  const tr = document.querySelector('#jobs tr.job-row.selected');
  if (tr) tr.scrollIntoView({ block: 'nearest' });
}

async function selectJob(id, gap) {
  const j = S.jobs.find((x) => x.id === id);
  if (!j) return;
  S.job = j;
  for (const tr of document.querySelectorAll('#jobs tr.job-row')) tr.classList.toggle('selected', tr.dataset.id === id);
  keepSelectedInView();
  const last = Math.max(0, j.total - 1);
  S.gap = Math.min(Math.max(0, gap | 0), last);
  for (const e of [$('gap-slider'), $('gap-index')]) {
    e.max = String(last);
    setInput(e, S.gap);
  }
  $('gap-total').textContent = `of 0–${last}`;
  $('again-submit').disabled = $('demo-submit').disabled || !S.job;
  setModeRadio();
  markFasteners();
  updateURL();
  await Promise.all([loadGap(), loadSummary()]);
}

// ---------------------------------------------------------------- one gap
async function loadGap() {
  if (!S.job || !S.geo) return;
  const seq = ++S.resultSeq;
  const job = S.job, gap = S.gap;
  const solved = gap < job.done || job.status === 'done';
  const [init, res] = await Promise.all([
    api(`/v1/jobs/${job.id}/gaps?index=${gap}`).catch((e) => { report(e); return null; }),
    solved ? api(`/v1/jobs/${job.id}/results?offset=${gap}&limit=1&fields=w,lambda`) : Promise.resolve(null),
  ]);
  if (seq !== S.resultSeq) return; // a newer request won
  S.g0 = init && Array.isArray(init.g) ? init.g : null;
  const r = res && (res.results || [])[0];
  S.result = r && r.job_index === gap ? r : null;
  recolor();
  renderScatter();
}

function setModeRadio() {
  for (const m of MODES) {
    const e = $('mode-' + m);
    if (e) setChecked(e, m === S.mode);
  }
  setChecked($('scale-auto'), S.scaleAuto);
}

/* checked property and attribute (the attribute is what a DOM dump shows) */
function setChecked(e, on) {
  e.checked = on;
  e.toggleAttribute('checked', on);
}

function renderScatter() {
  // an answer's residual gaps only (not a proof's, nor a stopped iterate's)
  const ok = S.g0 && S.result && S.result.w && S.result.status === 'optimal';
  $('scatter-panel').hidden = !ok;
  if (!ok) return;
  const c = drawScatter($('scatter'), S.g0, S.result.w, S.result.lambda, S.threshold);
  $('scatter-title').textContent = `Initial vs residual gap, gap ${S.gap} of ${labelOf(S.job) || S.job.id}`;
  const box = $('scatter-info');
  box.dataset.contact = c.contact;
  box.dataset.open = c.open;
  box.dataset.opened = c.opened;
  box.textContent = `${c.contact} pairs in contact (force > 0, w = 0: on the x axis) · ${c.open} open, below w = g + threshold · ` +
    `${c.opened} opened by fastening (w > g + ${fmt(S.threshold)} mm: prying, in red)`;
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
  return htmlEl('span', { class: 'stat', id, 'data-value': String(value) }, row, text);
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
  // the statistics of w, lambda and n_act cover the answers (status optimal) only
  const answers = s.answers !== undefined ? s.answers : s.count;
  if (answers !== s.count)
    stat(c1, 'answers in the statistics (optimal)', 'stat-answers', answers, `${answers} of ${s.count}`);
  stat(c1, 'statuses', 'stat-statuses', JSON.stringify(s.statuses),
    Object.entries(s.statuses || {}).map(([k, v]) => `${k} ${v}`).join(', ') || '–');
  stat(c1, 'solvers', 'stat-solvers', JSON.stringify(s.solvers),
    Object.entries(s.solvers || {}).map(([k, v]) => `${k} ${v}`).join(', ') || '–');
  stat(c1, 'warm started', 'stat-warm', s.warm_started, `${s.warm_started} of ${s.count}`);
  stat(c1, 'finished by GI relative', 'stat-crossovers', s.crossovers,
    `${s.crossovers} of ${s.count}`).title =
    "gaps whose method's own loop did not finish (NPM, GI dual, Lemke): GI relative finished them from its contact set";
  stat(c1, 'pairs m', 'stat-m', s.m, String(s.m));
  const c2 = htmlEl('div', { class: 'stat-col' }, box);
  htmlEl('h3', {}, c2, `Above ${fmt(s.threshold)} mm`);
  stat(c2, 'gaps with max residual above', 'stat-share-gaps', s.share_gaps_above, pct(s.share_gaps_above));
  stat(c2, 'pair residuals above', 'stat-share-values', s.share_values_above, pct(s.share_values_above));
  if (s.residual_histogram && s.residual_histogram.in_contact !== undefined)
    stat(c2, 'pair residuals in contact (w = 0)', 'stat-in-contact', s.residual_histogram.in_contact,
      pct(s.residual_histogram.in_contact / Math.max(1, answers * s.m)));
  if (s.opened) {
    const e = stat(c2, 'opened by fastening (w > g + threshold)', 'stat-opened', s.opened.pairs,
      `${s.opened.pairs} pairs, in ${pct(s.opened.share_gaps)} of gaps`);
    e.title = s.opened.why;
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

  const none = { edges: [], counts: [] };
  const rh = s.residual_histogram || none;
  drawHist($('hist-residual'), rh.edges, rh.counts, { unit: 'mm', title: 'residual gap (mm)', log: true, threshold: s.threshold });
  const mh = mr.histogram || none;
  drawHist($('hist-maxres'), mh.edges, mh.counts, { unit: 'mm', title: 'max residual gap of a gap (mm)', threshold: s.threshold });
  const nh = na.histogram || none;
  drawHist($('hist-nact'), nh.edges, nh.counts, { unit: '', title: 'pairs in contact n_act' });
  const th = tm.histogram || none;
  drawHist($('hist-time'), th.edges, th.counts, { unit: 'ms', title: th.log ? 'solve time (ms, log scale)' : 'solve time (ms)', logx: !!th.log });
  $('cap-residual').textContent = `Residual gaps of open pairs, all gaps (count, log scale); ${rh.in_contact !== undefined ? rh.in_contact.toLocaleString('en') : '?'} pair residuals in contact (w = 0) not in the bars`;
}

// ---------------------------------------------------------------- new cloud
/* The pattern of a new cloud: the clicked candidates, else the fraction. */
function patternOptions(body) {
  const frac = Math.min(1, Math.max(0, parseFloat($('demo-fraction').value)));
  if (S.edit) body.fasteners = editedList();
  else body.fastener_fraction = Number.isFinite(frac) ? frac : 0.5;
  const label = $('demo-label').value.trim();
  if (label) body.label = label;
  return body;
}

/* POST a cloud body, then show the new job and follow its progress. */
async function submitCloud(body, total, what) {
  const btns = [$('demo-submit'), $('again-submit')];
  for (const b of btns) b.disabled = true;
  setProgress(0, total, `submitting ${what}…`);
  try {
    const job = await postJSON(`/v1/assemblies/${S.asm.id}/clouds`, body);
    S.edit = null; // the new job shows the pattern it installed
    renderPatternInfo();
    updateURL(); // drops the submit hooks: a reload does not submit again
    $('progress').dataset.job = job.id;
    await loadJobs();
    await refreshHealth();
    pollJob(job.id);
    return job;
  } catch (e) {
    report(e);
    setProgress(0, 0, 'submission failed');
    enableSubmit();
    return null;
  }
}

/* A cloud whose gaps the server generates (gapsim-gen's generator). */
async function submitDemo(nOverride) {
  if (!S.asm || !S.geo) return;
  const k = nOverride || Math.max(1, Math.min(10000, parseInt($('demo-n').value, 10) || 100));
  const seed = Math.max(0, parseInt($('demo-seed').value, 10) || 0);
  const scatter = Math.min(1, Math.max(0, parseFloat($('demo-scatter').value)));
  const chain = $('demo-chain').value;
  const body = { solver: 'auto', generate: { count: k, seed } };
  if (Number.isFinite(scatter) && scatter < 1) body.generate.scatter = scatter;
  if (chain !== 'off') body.chain = chain;
  if (await submitCloud(patternOptions(body), k, `${k} gaps`))
    setInput($('demo-seed'), seed + 1); // next cloud: other gaps
}

/* The selected cloud's gaps again under the pattern shown (gaps_from), each
 * gap warm-started from its solution in that cloud: patterns compared on
 * the same gaps. */
async function submitAgain() {
  if (!S.asm || !S.geo || !S.job) return;
  const from = S.job;
  const body = { solver: 'auto', gaps_from: from.id, warm_start: from.id };
  await submitCloud(patternOptions(body), from.total, `the ${from.total} gaps of ${labelOf(from) || from.id}`);
}

/* The submit buttons: a ready assembly; "same gaps" also a selected cloud. */
function enableSubmit() {
  const ready = !!(S.asm && S.asm.status === 'ready');
  $('demo-submit').disabled = !ready;
  $('again-submit').disabled = !(ready && S.job);
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
  S.pollGen++; /* a request still held: its answer is dropped */
  S.polling = false;
}

// Follows a job: each request is held by the daemon until the job ends or
// 0.4 s pass (GET /v1/jobs/{id}?wait=0.4), so the bar moves every 0.4 s and
// the end shows as it happens. A newer pollJob (or stopPolling) supersedes
// a request still held: its answer is dropped.
async function pollJob(id) {
  stopPolling();
  const gen = ++S.pollGen;
  S.polling = true;
  let j;
  try {
    j = await api(`/v1/jobs/${id}?wait=0.4`);
  } catch (e) {
    if (gen !== S.pollGen) return;
    S.polling = false;
    report(e);
    enableSubmit();
    return;
  }
  if (gen !== S.pollGen) return;
  const rate = j.solves_per_s ? `${fmt(j.solves_per_s)} solves/s` : '';
  const eta = j.eta_s !== null && j.eta_s !== undefined && j.status !== 'done' ? `ETA ${fmt(j.eta_s, 2)} s` : '';
  setProgress(j.done, j.total, [`${labelOf(j) || j.id}: ${j.status}`, `${j.done} / ${j.total} gaps`, rate, eta].filter(Boolean).join(' · '));
  $('progress').dataset.status = j.status;
  refreshHealth();
  if (j.status === 'queued' || j.status === 'running') {
    S.pollTimer = setTimeout(() => pollJob(id), 0); /* the daemon held the request */
    return;
  }
  S.pollTimer = null;
  S.polling = false;
  enableSubmit();
  if (S.asm && j.assembly_id === S.asm.id) await loadJobs(j.status === 'done' ? id : undefined, 0);
}

// ---------------------------------------------------------------- wiring
function setMode(m) {
  S.mode = m;
  updateURL();
  recolor();
}

function wire() {
  for (const m of MODES)
    $('mode-' + m).addEventListener('change', (ev) => { if (ev.target.checked) setMode(m); });
  $('scale-auto').addEventListener('change', (ev) => {
    S.scaleAuto = ev.target.checked;
    setChecked(ev.target, S.scaleAuto);
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
      if (!GAP_MODES.includes(S.mode)) S.mode = 'residual';
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
    renderScatter();
    loadSummary().catch(report);
  });
  $('bins').addEventListener('change', (e) => {
    const v = parseInt(e.target.value, 10);
    if (!(v >= 1 && v <= 1000)) return;
    S.bins = v;
    updateURL();
    loadSummary().catch(report);
  });
  setInput($('job-filter'), S.filter);
  $('job-filter').addEventListener('input', (e) => {
    S.filter = e.target.value;
    updateURL();
    renderJobs();
  });
  $('demo-submit').addEventListener('click', () => submitDemo());
  $('again-submit').addEventListener('click', () => submitAgain());
  $('pattern-clear').addEventListener('click', () => {
    S.edit = null;
    markFasteners();
    renderPatternInfo();
  });
  if (params.has('fraction')) setInput($('demo-fraction'), params.get('fraction'));
  if (params.has('seed')) setInput($('demo-seed'), params.get('seed'));
  if (params.has('label')) setInput($('demo-label'), params.get('label'));
  if (params.has('scatter')) setInput($('demo-scatter'), params.get('scatter'));
  if (params.has('chain') && ['off', 'auto', 'on'].includes(params.get('chain'))) $('demo-chain').value = params.get('chain');
  let resizeTimer = null;
  window.addEventListener('resize', () => {
    clearTimeout(resizeTimer);
    resizeTimer = setTimeout(drawMap, 150);
  });
}

async function start() {
  wire();
  setModeRadio();
  await refreshHealth();
  try {
    await loadAssemblies();
    let id = params.get('assembly');
    const wantJob = params.get('job');
    if (wantJob) {
      // a link to a cloud (?job=j_...) shows it with its own assembly, whichever
      // that is (GET /v1/jobs/{id} names it), not with the first ready one;
      // an unknown job keeps the assembly and loadJobs says so
      const j = await api(`/v1/jobs/${encodeURIComponent(wantJob)}`).catch(() => null);
      if (j && j.assembly_id) id = j.assembly_id;
    }
    if (!id) {
      const ready = S.assemblies.find((a) => a.status === 'ready');
      id = ready ? ready.id : S.assemblies.length ? S.assemblies[0].id : null;
    }
    if (id) {
      const demo = intParam('submit_demo', 0);
      await selectAssembly(id, {
        job: params.has('job') ? params.get('job') : null,
        gap: S.gap,
        submitDemo: demo > 0 ? Math.min(demo, 10000) : 0,
        submitAgain: params.get('submit_again') === '1',
      });
    }
    document.body.dataset.ready = '1';
  } catch (e) {
    report(e);
    document.body.dataset.ready = 'error';
  }
}

start();
