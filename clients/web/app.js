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
 * assembly; ?wait=0.4 to follow a queued or running cloud), /v1/jobs/{id}/gaps?index=i,
 * /v1/jobs/{id}/results?offset=i&limit=1&fields=w,lambda,
 * /v1/jobs/{id}/summary?threshold=&bins=; POST /v1/assemblies/{id}/clouds
 * with {"generate": {"count", "seed"}, "label", fastener pattern} (the server
 * generates the gaps and keeps them: the page has no generator of its own),
 * or with {"gaps_from": J, "warm_start": J, pattern} (the selected cloud's
 * gaps again under another pattern).
 *
 * Stable ids and classes a test can rely on are listed in docs/web.md.
 */
import { $, htmlEl, clear, setInput, sizeSvg, fmt, pct } from './format.js';
import { api, postJSON } from './api.js';
import { S, MODES, GAP_MODES, params, intParam, updateURL, clampBins, BINS_MIN, BINS_MAX } from './state.js';
import { drawMap, recolor, markFasteners, renderPatternInfo, renderGapInfo, editedList } from './map.js';
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
/* A job still to end: queued or running. */
function isLive(j) {
  return !!j && (j.status === 'queued' || j.status === 'running');
}
/* A summary request of a running cloud at most this often (ms). */
const SUMMARY_EVERY_MS = 2000;

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

/* The line under the assembly list: id, joint, parts, candidates,
 * precomputation; cond(Q), or why Q has no Cholesky factor (dependent
 * pairs: precompute.lq_error, and the methods that cannot run). */
function assemblyInfo(a) {
  const pc = a.precompute || {};
  const t = pc.times_s || {};
  const lq = pc.lq_error;
  let cond = '';
  if (pc.cond_K) {
    // cond(Q): none when Q is singular (said below), or not computed yet
    cond = ` · cond(K) ${fmt(pc.cond_K, 2)}`;
    if (!lq) cond += pc.cond_Q === null || pc.cond_Q === undefined ? ', cond(Q) not computed yet' : `, cond(Q) ${fmt(pc.cond_Q, 2)}`;
  }
  const el = $('assembly-info');
  clear(el);
  htmlEl('span', {}, el,
    `${a.id} · ${a.joint || ''} joint · ${a.n_parts || '?'} parts · ${a.n_fasteners || 0} fastener candidates` +
    (t.total !== undefined ? ` · precomputed in ${fmt(t.total)} s` : '') + cond);
  if (lq)
    htmlEl('div', { id: 'assembly-lq', class: 'warn-note' }, el,
      `Dependent contact pairs: ${lq.message}${lq.field ? ` (${lq.field})` : ''}. Q has no Cholesky factor, ` +
      'so GI dual, NPM and the primal IPM are unavailable (409); auto, GI relative and primal, Lemke and ' +
      'the dual IPM solve it, and gaps that contradict are reported infeasible with their proof.');
}

/* The server's reason for a failed assembly: "message (field)". */
function errorText(e) {
  if (!e) return '';
  if (typeof e === 'string') return e;
  return (e.message || e.code || '') + (e.field ? ` (${e.field})` : '');
}

/* Nothing of the previous assembly stays on screen (or clickable): its
 * clouds, map, fastener legend, gap line, scatter and summary. */
function clearAssemblyView() {
  Object.assign(S, { geo: null, job: null, jobs: [], result: null, g0: null, summary: null, edit: null });
  drawMap(); // no geometry: an empty map, no rings
  clear($('map-legend'));
  clear($('colorbar'));
  sizeSvg($('map'), 0, 0); // no empty frame where the map was
  sizeSvg($('colorbar'), 0, 0);
  $('gap-controls').hidden = true;
  $('scale-pick').hidden = true;
  renderJobs();
  renderGapInfo();
  renderSummary();
  renderScatter();
  renderPatternInfo();
}

async function selectAssembly(id, opt) {
  // a job followed by the progress bar stays followed (it may be another
  // assembly's): its bar and the header's counts keep moving
  const a = S.assemblies.find((x) => x.id === id);
  if (!a) {
    showMessage(`no assembly ${id} on this server`);
    return;
  }
  Object.assign(S, { asm: a, geo: null, job: null, jobs: [], result: null, g0: null, summary: null });
  ++S.resultSeq; // answers for the assembly before are dropped
  ++S.summarySeq;
  for (const tr of document.querySelectorAll('#assemblies tr.asm-row'))
    tr.classList.toggle('selected', tr.dataset.id === id);
  assemblyInfo(a);
  enableSubmit();
  $('map-title').textContent = `Junction nodes of ${a.name || a.id}`;
  if (a.status !== 'ready') {
    clearAssemblyView();
    showMessage(a.status === 'failed'
      ? `assembly ${a.name || a.id} failed: ${errorText(a.error) || 'no reason given'}; nothing can be solved on it (upload a corrected model)`
      : `assembly ${a.name || a.id} is ${a.status}; reload when it is ready`, a.status === 'failed' ? 'error' : 'info');
    return;
  }
  showMessage('');
  const geo = await api(`/v1/assemblies/${a.id}/geometry`);
  if (S.asm !== a) return; // another assembly was selected meanwhile
  S.geo = geo;
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
  const asm = S.asm;
  const d = await api(`/v1/assemblies/${asm.id}/jobs`);
  if (S.asm !== asm) return; // another assembly was selected meanwhile
  S.jobs = (d.jobs || []).slice().sort((a, b) => b.created_at - a.created_at);
  // the selected cloud's row is its newest document
  const fresh = S.job && S.jobs.find((x) => x.id === S.job.id);
  if (fresh) selectedChanged(fresh);
  renderJobs();
  // running clouds: the list is refreshed every 2 s (their counts), and
  // the progress bar follows one when it follows nothing else
  const live = S.jobs.filter(isLive);
  clearTimeout(S.listTimer);
  if (live.length) S.listTimer = setTimeout(() => { refreshHealth(); loadJobs().catch(report); }, 2000);
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
  if (!S.polling && live.length) follow((isLive(S.job) ? S.job : live[0]).id, false);
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

/* Why a job ended without its gaps (failed: the server's error; cancelled). */
function jobWhy(j) {
  if (j.status === 'failed') return `failed: ${j.error || 'no reason given'}`;
  if (j.status === 'cancelled') return 'cancelled';
  return '';
}

function renderJobs() {
  const tb = $('jobs').tBodies[0];
  clear(tb);
  let matched = 0, keptSelected = false;
  for (const j of S.jobs) {
    const sel = !!(S.job && S.job.id === j.id);
    const match = matchesFilter(j);
    if (match) matched++;
    else if (sel) keptSelected = true; // the selected cloud stays listed
    else continue;
    const why = jobWhy(j);
    const tr = htmlEl('tr', { class: 'job-row', 'data-id': j.id, title: j.id + (why ? '\n' + why : '') }, tb);
    if (sel) tr.classList.add('selected');
    const td = htmlEl('td', {}, tr);
    const lab = labelOf(j);
    if (lab) htmlEl('span', { class: 'job-label' }, td, lab);
    htmlEl('span', { class: lab ? 'muted small job-id' : 'job-id' }, td, (lab ? ' ' : '') + j.id.slice(0, 10));
    if (j.status === 'failed' && j.error) htmlEl('div', { class: 'job-error small' }, td, j.error);
    htmlEl('td', {}, tr).appendChild(badge(j.status));
    htmlEl('td', { class: 'num' }, tr, j.status === 'done' ? String(j.total) : `${j.done}/${j.total}`);
    htmlEl('td', {}, tr, fastenerText(j.options));
    tr.addEventListener('click', () => selectJob(j.id, 0).catch(report));
  }
  const empty = $('jobs-empty');
  empty.hidden = S.jobs.length > 0 || !S.asm;
  empty.textContent = S.asm && S.asm.status !== 'ready' ? `No cloud: the assembly is ${S.asm.status}.`
    : 'No cloud yet: submit one below.';
  // the count is of the clouds that match; the selected one kept apart
  $('jobs-filtered').textContent = S.filter.trim() && matched < S.jobs.length
    ? `${matched} of ${S.jobs.length} clouds match "${S.filter}"` + (keptSelected ? ' (and the selected cloud)' : '') : '';
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
  S.result = null;
  S.g0 = null;
  renderJobs(); // the row before leaves a filtered list
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
  // a cloud still running is followed (progress bar, its gaps and summary as
  // they come); one that failed or was cancelled says why in the progress
  // line, unless the bar follows a running cloud
  if (isLive(j) || (j.status !== 'done' && !S.polling)) follow(j.id, false);
  await Promise.all([loadGap(), loadSummary()]);
}

/* A newer document of the selected cloud (polled or listed). While it runs,
 * its summary (every 2 s) and the shown gap (until it is solved) follow it;
 * when it ends, both once more: the final summary. */
function selectedChanged(j) {
  const old = S.job;
  if (!old || old.id !== j.id) return;
  // an older document (a list asked before the last poll's answer): kept out
  if ((!isLive(old) && isLive(j)) || (isLive(j) && j.done < old.done)) return;
  S.job = j;
  if (old.status === j.status && old.done === j.done) return;
  const ended = isLive(old) && !isLive(j);
  renderGapInfo();
  if (!ended && Date.now() - S.summaryAt < SUMMARY_EVERY_MS) return;
  loadSummary().catch(report);
  if (ended || !S.result) loadGap().catch(report);
}

// ---------------------------------------------------------------- one gap
async function loadGap() {
  if (!S.job || !S.geo) return;
  const seq = ++S.resultSeq;
  const job = S.job, gap = S.gap;
  // gaps are solved in any order: ask for gap's result whenever some are
  // (a gap not solved yet is absent from the page of results)
  const solved = job.done > 0 || job.status === 'done';
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
  const seq = ++S.summarySeq;
  if (!S.job) {
    S.summary = null;
    return renderSummary();
  }
  const job = S.job;
  S.summaryAt = Date.now();
  const d = await api(`/v1/jobs/${job.id}/summary?threshold=${encodeURIComponent(S.threshold)}&bins=${S.bins}`);
  if (seq !== S.summarySeq || !S.job || S.job.id !== job.id) return; // a newer request (another cloud) won
  S.summary = d;
  renderSummary();
  if (S.mode === 'p95' || S.mode === 'exceed') recolor();
  else renderGapInfo();
}

function stat(parent, label, id, value, text) {
  const row = htmlEl('div', { class: 'stat-row' }, parent);
  htmlEl('span', { class: 'stat-label' }, row, label);
  return htmlEl('span', { class: 'stat', id, 'data-value': String(value) }, row, text);
}

/* The summary's answers (results of status optimal), which its statistics of
 * w, lambda and n_act cover; a summary from before the field: its count. */
function answersOf(s) {
  return s.answers !== undefined ? s.answers : s.count;
}

function renderSummary() {
  const s = S.summary;
  $('summary').hidden = !s;
  $('summary-empty').hidden = !!s;
  if (!s) return;
  const box = $('summary-stats');
  clear(box);
  const live = isLive(S.job);
  const c1 = htmlEl('div', { class: 'stat-col' }, box);
  htmlEl('h3', {}, c1, !live ? 'Cloud' : S.job.status === 'running' ? 'Cloud (running: so far)' : 'Cloud (queued)');
  stat(c1, 'gaps solved', 'stat-count', s.count, `${s.count} of ${s.total}`);
  // the statistics of w, lambda and n_act cover the answers (status optimal) only
  const answers = answersOf(s);
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
  // no answer: the API's figures are null (of no value); say so instead
  $('summary-charts').hidden = answers === 0;
  if (answers === 0) {
    const none = htmlEl('div', { class: 'stat-col', id: 'summary-none' }, box);
    htmlEl('h3', {}, none, live ? 'No answer yet' : s.count === 0 ? 'No answer' : 'No optimal result');
    htmlEl('div', { class: 'small' }, none, noAnswerText(s, live));
    return;
  }
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

/* Why a summary has no statistics: nothing solved yet, or no result optimal. */
function noAnswerText(s, live) {
  const why = S.job && S.job.status !== 'done' && !live ? ` The cloud ${jobWhy(S.job)}.` : '';
  if (s.count === 0)
    return (live ? `no answer yet: none of the ${s.total} gaps is solved so far; the statistics come as gaps are solved.`
      : `no answer: none of the ${s.total} gaps was solved.`) + why;
  const st = Object.entries(s.statuses || {}).map(([k, v]) => `${k} ${v}`).join(', ');
  return `no optimal result: the ${s.count} gaps solved${live ? ' so far' : ''} ended ${st || 'otherwise'}; ` +
    'they are not answers, and the statistics of residual gaps, forces and contacts cover answers only.' + why;
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
    follow(job.id, true);
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

/* The progress bar follows job id (one at a time: the last submitted or
 * selected running cloud); select: show the cloud when it ends (a cloud
 * just submitted). Following it already: only the flag is added. */
function follow(id, select) {
  if (S.follow && S.follow.id === id && S.polling) {
    S.follow.select = S.follow.select || select;
    return;
  }
  S.follow = { id, select };
  $('progress').dataset.job = id;
  pollJob(id);
}

/* The progress line of job j: status, counts, rate, time left, and why it
 * failed (the server's error) or was cancelled. */
function progressText(j) {
  const rate = j.solves_per_s ? `${fmt(j.solves_per_s)} solves/s` : '';
  const eta = j.eta_s !== null && j.eta_s !== undefined && isLive(j) ? `ETA ${fmt(j.eta_s, 2)} s` : '';
  const why = j.status === 'failed' ? j.error || 'no reason given' : '';
  return [`${labelOf(j) || j.id}: ${j.status}`, `${j.done} / ${j.total} gaps`, rate, eta, why].filter(Boolean).join(' · ');
}

/* A newer document of a listed job: its row, and the view if it is selected. */
function jobChanged(j) {
  const i = S.jobs.findIndex((x) => x.id === j.id);
  if (i < 0) return;
  const old = S.jobs[i];
  S.jobs[i] = j;
  selectedChanged(j);
  if (old.status !== j.status) renderJobs();
  else if (old.done !== j.done) {
    // the count alone: the list is not redrawn (nor scrolled) every 0.4 s
    const tr = document.querySelector(`#jobs tr.job-row[data-id="${CSS.escape(j.id)}"]`);
    if (tr) tr.cells[2].textContent = `${j.done}/${j.total}`;
  }
}

// Follows a job: each request is held by the daemon until the job ends or
// 0.4 s pass (GET /v1/jobs/{id}?wait=0.4), so the bar moves every 0.4 s and
// the end shows as it happens. A newer pollJob (or stopPolling) supersedes
// a request still held: its answer is dropped. Switching assemblies does
// not stop it.
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
    S.follow = null;
    report(e);
    enableSubmit();
    return;
  }
  if (gen !== S.pollGen) return;
  setProgress(j.done, j.total, progressText(j));
  $('progress').dataset.job = j.id;
  $('progress').dataset.status = j.status;
  $('progress').classList.toggle('failed', j.status === 'failed');
  refreshHealth();
  jobChanged(j);
  if (isLive(j)) {
    S.pollTimer = setTimeout(() => pollJob(id), 0); /* the daemon held the request */
    return;
  }
  S.pollTimer = null;
  S.polling = false;
  // a cloud just submitted is shown when it ends (unless it is shown already)
  const select = !!(S.follow && S.follow.id === id && S.follow.select) && !(S.job && S.job.id === id);
  S.follow = null;
  enableSubmit();
  // the list again (the selected cloud's end is shown by selectedChanged);
  // another running cloud is followed next
  if (S.asm && j.assembly_id === S.asm.id) await loadJobs(select && j.status === 'done' ? id : undefined, 0);
  else if (S.asm) await loadJobs();
}

// ---------------------------------------------------------------- wiring
/* Bins asked outside the API's 1..1000 are clamped; the note says so. */
function showBinsNote(asked) {
  const n = $('bins-note');
  const a = asked === null || asked === undefined ? null : parseInt(asked, 10);
  n.hidden = a === null || !Number.isFinite(a) || a === S.bins;
  n.textContent = n.hidden ? '' : `${asked} is outside ${BINS_MIN}–${BINS_MAX}: ${S.bins} used`;
}

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
  showBinsNote(S.binsAsked);
  $('bins').addEventListener('change', (e) => {
    const v = parseInt(e.target.value, 10);
    if (!Number.isFinite(v)) return;
    S.bins = clampBins(v);
    setInput($('bins'), S.bins);
    showBinsNote(String(v));
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

/* Test hook: ?steps=S,S,... a user's steps once the page has loaded its
 * selection, in turn: an assembly or cloud id clicks its row (#assemblies /
 * #jobs tr[data-id]) as soon as it is listed (up to 5 s), without waiting
 * for the click before to finish loading (quick clicks); filter:TEXT types
 * TEXT into the cloud filter. */
async function userSteps(steps) {
  const row = (id) => document.querySelector(`#assemblies tr.asm-row[data-id="${CSS.escape(id)}"], #jobs tr.job-row[data-id="${CSS.escape(id)}"]`);
  for (const step of steps) {
    if (step.startsWith('filter:')) {
      setInput($('job-filter'), step.slice(7));
      $('job-filter').dispatchEvent(new Event('input', { bubbles: true }));
      continue;
    }
    let tr = row(step);
    for (let t = 0; !tr && t < 100; t++) {
      await new Promise((r) => setTimeout(r, 50));
      tr = row(step);
    }
    if (tr) tr.dispatchEvent(new MouseEvent('click', { bubbles: true }));
  }
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
    await userSteps((params.get('steps') || '').split(',').filter((v) => v !== ''));
    document.body.dataset.ready = '1';
  } catch (e) {
    report(e);
    document.body.dataset.ready = 'error';
  }
}

start();
