(() => {
'use strict';
/* LSREP report script (the only one the page runs; its hash is in the page's CSP).
   1. A link to a section (table of contents, #anchor, URL fragment) opens the section it targets.
   2. The Observations drill-down: decodes the compressed JSON block on first open and renders
      observations on demand. Every data-derived string goes through textContent, never as HTML. */

function reveal(id) {
  const el = id ? document.getElementById(id) : null;
  if (!el) return null;
  if (el.tagName === 'SECTION') {
    const d = el.querySelector(':scope > details');
    if (d) d.open = true;
  }
  for (let p = el.parentElement; p; p = p.parentElement) if (p.tagName === 'DETAILS') p.open = true;
  return el;
}
function hashId(h) {
  const raw = (h || '').replace(/^#/, '');
  try { return decodeURIComponent(raw); } catch (e) { return raw; }
}
function onHash() {
  const id = hashId(location.hash);
  if (id.startsWith('obs:')) { openObservation(id.slice(4)); return; }
  const el = reveal(id);
  if (el) el.scrollIntoView();
}
document.addEventListener('click', ev => {
  const a = ev.target.closest ? ev.target.closest('a[href^="#"]') : null;
  if (a) reveal(hashId(a.getAttribute('href')));
});
window.addEventListener('hashchange', onHash);

const box = document.getElementById('dd');
const blob = document.getElementById('lsrep-observations');
const PAGE = 100;
let doc = null, loading = null, matches = [], shown = 0;
const $ = id => document.getElementById(id);

function node(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined && text !== null) e.textContent = String(text);
  return e;
}
function add(parent, ...kids) { for (const k of kids) if (k) parent.append(k); return parent; }
function S(i) { return i === null || i === undefined ? null : doc.s[i]; }
function clip(t, n) {
  t = (t || '').replace(/\s+/g, ' ').trim();
  return t.length <= n ? t : t.slice(0, n - 1) + '\u2026';
}

async function load() {
  if (doc) return doc;
  if (!loading) {
    loading = (async () => {
      $('dd-status').textContent = 'Decoding observations\u2026';
      const bin = atob(blob.textContent.trim());
      const bytes = new Uint8Array(bin.length);
      for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
      const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream('deflate'));
      doc = JSON.parse(await new Response(stream).text());
      const F = {};
      doc.fields.forEach((f, i) => { F[f] = i; });
      doc.F = F;
      doc.byId = new Map(doc.obs.map((o, i) => [S(o[F.id]), i]));
      doc.turnMap = {};
      for (const [traj, rows] of Object.entries(doc.turns)) {
        const m = new Map();
        rows.forEach(t => m.set(S(t[0]), t));
        doc.turnMap[traj] = m;
      }
      filter();
      return doc;
    })().catch(err => {
      $('dd-status').textContent = 'Could not decode the observations: ' + err;
      throw err;
    });
  }
  return loading;
}

function field(o, name) { return o[doc.F[name]]; }
function probeOf(o) { return doc.probes[field(o, 'probe')]; }
function alarms(o) { return Object.keys(field(o, 'flags')).filter(k => doc.alarms.includes(k)); }
function flagged(o) { return alarms(o).length > 0; }

function filter() {
  const cond = $('dd-cond').value, label = $('dd-label').value, flag = $('dd-flagged').checked;
  const q = $('dd-probe').value.trim().toLowerCase();
  matches = [];
  doc.obs.forEach((o, i) => {
    if (cond && doc.conditions[field(o, 'cond')] !== cond) return;
    const outcome = S(field(o, 'outcome')) || 'unjudged';
    if (label && outcome !== label) return;
    if (flag && !flagged(o)) return;
    if (q) {
      const p = probeOf(o);
      const hay = (S(p[1]) + ' ' + S(p[4]) + ' ' + S(p[0])).toLowerCase();
      if (!hay.includes(q)) return;
    }
    matches.push(i);
  });
  shown = 0;
  $('dd-rows').replaceChildren();
  more();
}

function more() {
  const body = $('dd-rows');
  for (const i of matches.slice(shown, shown + PAGE)) body.append(listRow(i));
  shown = Math.min(matches.length, shown + PAGE);
  $('dd-status').textContent = `${matches.length} of ${doc.obs.length} observations match` +
    (matches.length ? ` (showing ${shown}; select one to open it)` : '');
  $('dd-more').hidden = shown >= matches.length;
}

function swatch(ci) {
  const s = node('span', 'cond');
  const sw = node('span', 'sw');
  sw.style.background = doc.colors[ci];
  return add(s, sw, document.createTextNode(doc.conditions[ci]));
}
function badge(outcome) {
  const b = node('span', 'oc', outcome || 'unjudged');
  b.style.borderColor = doc.outcome_colors[outcome] || '#999';
  return b;
}

function listRow(i) {
  const o = doc.obs[i], p = probeOf(o);
  const tr = node('tr', 'dd-row');
  tr.tabIndex = 0;
  tr.dataset.i = String(i);
  const cells = [
    swatch(field(o, 'cond')), node('code', '', S(p[0])), node('code', '', S(p[1])),
    document.createTextNode(String(field(o, 'cp'))), badge(S(field(o, 'outcome'))),
    node('span', 'ut', clip(S(p[4]), 90)), node('span', 'ut', clip(S(field(o, 'answer')), 90)),
    node('span', 'dd-flag', alarms(o).map(k => k.replace(/_/g, ' ')).join(', ')),
  ];
  cells.forEach((c, k) => add(tr, add(node('td', k === 3 ? 'r' : 'l'), c)));
  return tr;
}

function turnLine(traj, tid) {
  const t = doc.turnMap[traj] ? doc.turnMap[traj].get(tid) : null;
  const line = node('div', 'dd-turn');
  add(line, node('code', '', tid));
  if (!t) { add(line, node('span', 'dd-bad', ' not a turn of this trajectory')); return line; }
  const meta = [S(t[1]) || S(t[4]), S(t[2]), S(t[3])].filter(Boolean).join(' \u00b7 ');
  add(line, node('span', 'dd-meta', ' ' + meta + ' '), node('span', 'ut', S(t[5]) ?? '(text not stored)'));
  return line;
}

function facts(pairs) {
  const dl = node('dl', 'facts dd-facts');
  for (const [k, v] of pairs) {
    if (v === null || v === undefined || v === '') continue;
    const d = node('div');
    add(d, node('dt', '', k), add(node('dd'), typeof v === 'object' ? v : node('span', 'ut', v)));
    dl.append(d);
  }
  return dl;
}

function table(headers, rows) {
  const wrap = node('div', 'tablewrap');
  const t = node('table');
  const hr = node('tr');
  headers.forEach(h => hr.append(node('th', 'l', h)));
  add(t, add(node('thead'), hr));
  const tb = node('tbody');
  for (const r of rows) {
    const tr = node('tr');
    for (const c of r) tr.append(add(node('td', 'l'), typeof c === 'object' && c ? c : node('span', 'ut', c ?? '\u2014')));
    tb.append(tr);
  }
  return add(wrap, add(t, tb));
}

function versions(o, traj) {
  let exp;
  try { exp = JSON.parse(S(field(o, 'expected')) || '{}'); } catch (e) { return node('p', 'empty', 'Reference not readable.'); }
  const rows = [];
  const role = { in_force: 'current (in force)', superseded: 'superseded', later: 'later (not yet true)' };
  for (const key of ['in_force', 'superseded', 'later']) {
    for (const v of exp[key] || []) {
      const from = node('span');
      if (v.valid_from) add(from, turnMeta(traj, v.valid_from));
      rows.push([role[key], v.answer, (v.aliases || []).join(' / ') || '\u2014', from,
                 v.valid_until ? turnMeta(traj, v.valid_until) : 'still valid', (v.evidence || []).join(', ')]);
    }
  }
  const out = node('div', 'block');
  add(out, node('h3', '', 'Reference versions at this checkpoint'));
  if (exp.expect_abstain) add(out, node('p', 'dd-note', 'Abstention expected here' + (exp.reason ? ': ' + exp.reason : '.')));
  add(out, rows.length ? table(['Version', 'Answer', 'Aliases', 'Valid from', 'Valid until', 'Evidence'], rows)
                       : node('p', 'empty', 'No reference version.'));
  return out;
}
function turnMeta(traj, tid) {
  const t = doc.turnMap[traj] ? doc.turnMap[traj].get(tid) : null;
  const s = node('span');
  add(s, node('code', '', tid));
  if (t && S(t[3])) add(s, node('span', 'dd-meta', ' ' + S(t[3])));
  return s;
}

const FLAG_TEXT = {
  proven_leak: 'context holds text first said after this checkpoint (or cites such a turn)',
  content_leaks: 'fragments copied from turns not yet replayed',
  unsourced: 'fragments whose text matches no replayed turn',
  misattributed: 'fragments whose text does not match the turns they cite',
  duplicate_citations: 'fragments repeating an earlier fragment of this context',
  unattributed: 'fragments citing no turn',
  budget_violation: 'context over the retrieval budget the system declares it honours',
  stale_in_context: 'a superseded version is in the context',
  future_in_context: 'a later version is in the context',
};

function fragment(f, rank, traj) {
  const d = node('div', 'dd-frag');
  const head = node('div', 'dd-fhead');
  add(head, node('span', 'dd-rank', String(rank + 1) + '.'), node('code', '', S(f[2]) || 'fragment'));
  if (f[3].length) add(head, node('span', 'dd-meta', ' ' + f[3].map(S).join(', ')));
  if (f[4] !== null) add(head, node('span', 'dd-meta', ' score ' + f[4]));
  doc.frag_flags.forEach((name, b) => {
    if (f[5] & (1 << b)) add(head, node('span', 'badge b-defective', name.replace('_', ' ')));
  });
  if (S(f[6])) add(head, node('span', 'dd-meta', ' leaked from ' + S(f[6])));
  if (S(f[7]) && !f[1].includes(f[7])) add(head, node('span', 'dd-meta', ' text matches ' + S(f[7])));
  add(d, head, node('div', 'ut dd-ftext', S(f[0]) ?? '(no text)'));
  if (f[1].length) {
    const cited = node('div', 'dd-cited');
    add(cited, node('div', 'dd-meta', 'cites'));
    for (const tid of f[1]) cited.append(turnLine(traj, S(tid)));
    d.append(cited);
  } else {
    d.append(node('div', 'dd-meta', 'cites no turn'));
  }
  return d;
}

function contextBlock(o, traj) {
  const ids = [];
  const runs = field(o, 'ctx');
  for (let k = 0; k < runs.length; k += 2) for (let j = 0; j < runs[k + 1]; j++) ids.push(runs[k] + j);
  const out = add(node('div', 'block dd-context'),
    node('h3', '', `Context returned (${ids.length} fragments, ${field(o, 'ctx_tokens') ?? '?'} tokens)`));
  const list = node('div', 'dd-frags');
  const FIRST = 40;
  const show = n => {
    list.replaceChildren();
    ids.slice(0, n).forEach((fi, r) => list.append(fragment(doc.frags[fi], r, traj)));
  };
  show(FIRST);
  out.append(list);
  if (!ids.length) out.append(node('p', 'empty', 'The system returned no context.'));
  if (ids.length > FIRST) {
    const b = node('button', 'dd-btn', `Show all ${ids.length} fragments`);
    b.type = 'button';
    b.addEventListener('click', () => { show(ids.length); b.remove(); });
    out.append(b);
  }
  return out;
}

function render(i) {
  const o = doc.obs[i], p = probeOf(o), traj = S(p[0]);
  const view = $('dd-view');
  view.replaceChildren();
  const head = node('div', 'dd-head');
  const link = node('a', 'anchor', '#');
  link.href = '#obs:' + encodeURIComponent(S(field(o, 'id')));
  add(head, link, swatch(field(o, 'cond')), node('code', '', S(p[1])),
      node('span', 'dd-meta', ` ${traj} \u00b7 repetition ${field(o, 'rep')} \u00b7 checkpoint ${field(o, 'cp')}` +
        (S(field(o, 'sim_time')) ? ` \u00b7 ${S(field(o, 'sim_time'))}` : '')));
  const label = add(node('span'), badge(S(field(o, 'outcome'))),
    node('span', 'dd-meta', field(o, 'correct') === null ? ' not judged' :
      (field(o, 'correct') ? ' credited' : ' not credited') +
      ` \u00b7 judge ${S(field(o, 'label_judge')) || doc.judge}` +
      (field(o, 'f1') !== null ? ` \u00b7 token-F1 ${field(o, 'f1')}` : '') +
      (field(o, 'exact') !== null ? ` \u00b7 exact ${field(o, 'exact') ? 'yes' : 'no'}` : '')));
  add(view, head, facts([
    ['Question', S(p[4])], ['Probe', `${S(p[2])} \u00b7 ${S(p[3])}`], ['Answer', S(field(o, 'answer'))],
    ['System answer', S(field(o, 'system_answer'))], ['Label', label],
    ['Status', S(field(o, 'status')) === 'ok' ? null : S(field(o, 'status'))], ['Error', S(field(o, 'error'))],
  ]));
  const flags = field(o, 'flags');
  if (Object.keys(flags).length) {
    const fl = add(node('div', 'block'), node('h3', '', 'Integrity and evidence flags'));
    const ul = node('ul', 'dd-flags');
    for (const [k, v] of Object.entries(flags)) {
      add(ul, add(node('li'), node('span', doc.alarms.includes(k) ? 'badge b-defective' : 'badge b-never', k.replace(/_/g, ' ')),
                  node('span', '', ` ${v === true || v === 1 ? '' : v + ' \u00b7 '}${FLAG_TEXT[k] || ''}`)));
    }
    view.append(add(fl, ul));
  }
  const judges = (doc.judges[String(i)] || []).map(j => [
    S(j[0]), badge(S(j[1])), j[2] === null ? '\u2014' : (j[2] ? 'yes' : 'no'), j[3] ?? '\u2014', S(j[4]),
    S(j[5]) || S(j[6]) || '\u2014']);
  add(view, add(node('div', 'block'), node('h3', '', 'Judges'),
    judges.length ? table(['Judge', 'Label', 'Credited', 'Rubric', 'Status', 'Reasons'], judges)
                  : node('p', 'empty', 'No judgement stored.')));
  view.append(versions(o, traj));
  const ev = field(o, 'evidence');
  const evb = add(node('div', 'block'), node('h3', '', 'Evidence turns of the probe'));
  ev.forEach(t => evb.append(turnLine(traj, S(t))));
  if (!ev.length) evb.append(node('p', 'empty', 'None declared.'));
  add(view, evb, contextBlock(o, traj));
  view.hidden = false;
  view.dataset.obs = S(field(o, 'id'));
  for (const r of document.querySelectorAll('#dd-rows tr.sel')) r.classList.remove('sel');
  const row = document.querySelector(`#dd-rows tr[data-i="${i}"]`);
  if (row) row.classList.add('sel');
}

async function openObservation(obsId) {
  reveal('observations');
  await load();
  const i = doc.byId.get(obsId);
  if (i === undefined) { $('dd-status').textContent = 'No observation ' + obsId + ' in this report.'; return; }
  render(i);
  $('dd-view').scrollIntoView();
}

if (box && blob) {
  const details = box.closest('details');
  details.addEventListener('toggle', () => { if (details.open) load(); });
  for (const id of ['dd-cond', 'dd-label', 'dd-flagged']) $(id).addEventListener('change', () => { if (doc) filter(); });
  $('dd-probe').addEventListener('input', () => { if (doc) filter(); });
  $('dd-more').addEventListener('click', () => more());
  const pick = ev => {
    const tr = ev.target.closest('tr.dd-row');
    if (!tr) return;
    if (ev.type === 'keydown' && ev.key !== 'Enter' && ev.key !== ' ') return;
    ev.preventDefault();
    render(Number(tr.dataset.i));
    $('dd-view').scrollIntoView({ block: 'nearest' });
  };
  $('dd-rows').addEventListener('click', pick);
  $('dd-rows').addEventListener('keydown', pick);
  if (details.open) load();
}
if (location.hash) onHash();
})();
