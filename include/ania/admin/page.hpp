// ania/admin/page.hpp -- the operator console's page: one HTML document with its style sheet and its script
// inlined, served from the binary (no build step, no external assets, one request). The script builds every
// element with createElement and fills it with textContent: nothing a chat user wrote is ever parsed as
// HTML, and the Content-Security-Policy (served_page below) allows that one script and that one style sheet
// by their SHA-256 and nothing else: an injected script would not run anyway.
// The token is read from the address's fragment (#token=..., never sent to the server) or typed in, kept
// in sessionStorage (no cookie: nothing a forged cross-site request could carry) and sent as a bearer token.
// SPDX-License-Identifier: MIT
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include <ania/text/sha256.hpp>

namespace ania::admin {

inline constexpr std::string_view console_html = R"ania(<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>ania console</title>
<style>@STYLE@</style>
</head>
<body>
<header>
  <h1>ania console</h1>
  <nav><button id="tab-memory" class="tab on">Memory</button><button id="tab-sessions" class="tab">Sessions</button></nav>
  <span id="status" role="status"></span>
</header>
<section id="login" hidden>
  <label>Token <input id="token" type="password" autocomplete="off"></label>
  <button id="login-go">Open</button>
</section>
<main id="memory-pane">
  <div class="bar">
    <label>Scope <select id="scope"></select></label>
    <input id="search" type="search" placeholder="Search this scope">
    <span id="count"></span>
  </div>
  <section id="history" hidden>
    <h2>Versions of <span id="history-id"></span></h2>
    <table id="versions"><thead><tr><th>#</th><th>change</th><th>who</th><th>session</th><th>tool call</th><th>when</th><th>content</th><th>tags</th><th></th></tr></thead><tbody></tbody></table>
  </section>
  <table id="memories" class="rows" role="table"><thead role="rowgroup"><tr role="row"><th role="columnheader">id</th><th role="columnheader">content</th><th role="columnheader">user</th><th role="columnheader">tags</th><th role="columnheader">created</th><th role="columnheader"></th></tr></thead><tbody role="rowgroup"></tbody></table>
  <form id="create" class="bar">
    <input id="new-content" placeholder="New memory for this scope" maxlength="2000">
    <input id="new-user" placeholder="user id (optional)">
    <input id="new-tags" placeholder="tags, comma separated">
    <button type="submit">Add</button>
  </form>
</main>
<main id="sessions-pane" hidden>
  <div class="bar"><span id="session-count"></span><button id="refresh">Refresh</button></div>
  <table id="sessions" class="rows" role="table"><thead role="rowgroup"><tr role="row"><th role="columnheader">session</th><th role="columnheader">idle</th><th role="columnheader">queued</th><th role="columnheader">state</th><th role="columnheader">messages</th><th role="columnheader">tokens</th><th role="columnheader">bytes</th><th role="columnheader">last compression</th><th role="columnheader"></th></tr></thead><tbody role="rowgroup"></tbody></table>
  <section id="session-detail" hidden>
    <h2>Session <span id="detail-key"></span></h2>
    <svg id="chart" width="640" height="160" viewBox="0 0 640 160" role="img" aria-label="context size over turns"></svg>
    <div class="bar"><button id="older">Older</button><button id="newer">Newer</button><span id="page-info"></span></div>
    <table id="stored"><thead><tr><th>#</th><th>role</th><th>content</th></tr></thead><tbody></tbody></table>
  </section>
</main>
<template id="memory-row"><tr role="row"><td role="cell"></td><td role="cell" class="content"></td><td role="cell"></td><td role="cell"></td><td role="cell"></td><td role="cell"><button type="button" class="edit">Edit</button><button type="button" class="history">History</button><button type="button" class="danger delete">Delete</button></td></tr></template>
<template id="session-row"><tr role="row"><td role="cell"></td><td role="cell" class="num"></td><td role="cell" class="num"></td><td role="cell"></td><td role="cell" class="num"></td><td role="cell" class="num"></td><td role="cell" class="num"></td><td role="cell"></td><td role="cell"><button type="button" class="open">Open</button><button type="button" class="evict">Evict</button><button type="button" class="danger clear">Clear</button></td></tr></template>
<script>@SCRIPT@</script>
</body>
</html>
)ania";

inline constexpr std::string_view console_css = R"ania(body{font:14px system-ui,sans-serif;margin:0;color:#1d232a;background:#f6f7f9}
header{display:flex;gap:1.5em;align-items:center;padding:.6em 1.2em;background:#1f3a5f;color:#fff}
h1{font-size:1.1em;margin:0}h2{font-size:1em}
.tab{background:none;border:0;color:#cfe0f5;font-size:1em;padding:.3em .8em;cursor:pointer}
.tab.on{color:#fff;border-bottom:2px solid #fff}
#status{margin-left:auto;font-size:.9em}
main,#login{padding:1em 1.2em}
#history{margin-bottom:1.5em}
.bar{display:flex;gap:.6em;align-items:center;margin:.6em 0}
table{border-collapse:collapse;width:100%;background:#fff}
th,td{border-bottom:1px solid #e3e6ea;padding:.35em .5em;text-align:left;vertical-align:top}
th{background:#eef1f5;font-weight:600}
td.content{white-space:pre-wrap;word-break:break-word;max-width:42em}
td.num{text-align:right;font-variant-numeric:tabular-nums}
table.rows,table.rows>thead,table.rows>tbody{display:block}
table.rows tr{display:grid;grid-template-columns:var(--cols);border-bottom:1px solid #e3e6ea}
table.rows td,table.rows th{border:0;min-width:0;max-width:none}
table.rows td{overflow-wrap:anywhere}
table.rows>tbody>tr{content-visibility:auto;contain-intrinsic-size:auto 2.3em}
#memories{--cols:6.5em minmax(10em,1fr) 7em 7em 20.5em 14em}
@media (max-width:1100px){#memories{--cols:6.5em minmax(10em,1fr) 5em 5em 9.5em 14em}}
#sessions{--cols:minmax(6em,1fr) 4.5em 5em 6.5em 6.5em 5.5em 6.5em 9.5em 12.5em}
button{cursor:pointer}
button.danger{color:#a11}
textarea{width:100%;min-height:4em;font:inherit}
.tag{display:inline-block;background:#e4ecf7;border-radius:3px;padding:0 .35em;margin:0 .2em .2em 0}
svg{background:#fff;border:1px solid #e3e6ea}
.err{color:#a11}
)ania";

inline constexpr std::string_view console_js = R"ania('use strict';
// Every element is made with el() and filled with textContent: data is never parsed as HTML.
(function () {
  const $ = (id) => document.getElementById(id);
  const state = { scope: '', session: '', offset: 0, total: 0, firstPaint: null };
  const con = window.aniaConsole = { ready: false, firstPaintMs: null, rowShownMs: null };
  // When the first memory's text reached the screen, as the browser reports it (Element Timing): the browser
  // test prints it beside the page's own mark, which is taken when the frame after the paint starts.
  if (window.PerformanceObserver && PerformanceObserver.supportedEntryTypes.includes('element')) {
    new PerformanceObserver((list) => {
      for (const e of list.getEntries())
        if (e.identifier === 'ania-first-row' && con.rowShownMs === null) con.rowShownMs = e.renderTime || e.loadTime;
    }).observe({ type: 'element', buffered: true });
  }

  function el(tag, text, cls) {
    const e = document.createElement(tag);
    if (text !== undefined && text !== null) e.textContent = String(text);
    if (cls) e.className = cls;
    return e;
  }
  function button(text, onClick, cls) {
    const b = el('button', text, cls);
    b.type = 'button';
    b.addEventListener('click', onClick);
    return b;
  }
  // A second click confirms (no window.confirm: it blocks automation and looks alike for every action).
  function confirmed(b) {
    if (b.dataset.armed) return true;
    b.dataset.armed = '1';
    b.textContent = 'Sure? ' + b.textContent;
    return false;
  }
  // The two long tables (a scope's memories, the resident sessions) clone a row of the page's <template>
  // and fill its cells with textContent, and one click listener on the table serves every row's buttons,
  // instead of making each cell and button and 600 listeners, which the first paint waited for (building
  // the rows went from 12-19 ms to 2-11 ms with the sessions' table below: docs/console.md).
  function rowOf(id) { return $(id).content.firstElementChild; }
  function onRowButton(table, act) {
    $(table).tBodies[0].addEventListener('click', (ev) => {
      const b = ev.target.closest('button');
      const tr = b && b.closest('tr');
      if (tr && tr.parentNode === ev.currentTarget && b.parentNode === tr.lastElementChild) act(b, tr);
    });
  }
  function status(text, bad) {
    const s = $('status');
    s.textContent = text;
    s.className = bad ? 'err' : '';
  }
  function token() { return sessionStorage.getItem('ania-token') || ''; }

  async function call(method, path, params, body) {
    const q = new URLSearchParams(params || {}).toString();
    const init = { method, headers: { Authorization: 'Bearer ' + token() }, cache: 'no-store' };
    if (body !== undefined) {
      init.headers['Content-Type'] = 'application/json';
      init.body = JSON.stringify(body);
    }
    const r = await fetch(path + (q ? '?' + q : ''), init);
    let data = {};
    try { data = await r.json(); } catch (e) { data = { error: r.statusText }; }
    if (r.status === 401) { showLogin(); throw new Error('the token was refused'); }
    if (!r.ok) throw new Error(data.error || r.statusText);
    return data;
  }
  function guard(p) { return p.catch((e) => status(e.message, true)); }

  function showLogin() { $('login').hidden = false; }

  // ---- memory ----
  function showScopes(scopes, chosen) {
    const sel = $('scope');
    sel.replaceChildren();
    for (const s of scopes) {
      const o = el('option', s);
      o.value = s;
      sel.appendChild(o);
    }
    state.scope = scopes.includes(chosen) ? chosen : scopes[0] || '';
    sel.value = state.scope;
  }
  function tagsCell(tags) {
    const td = el('td');
    for (const t of tags) td.appendChild(el('span', t, 'tag'));
    return td;
  }
  async function loadMemories() {
    if (!state.scope) { showMemories([]); return; }
    const data = await call('GET', '/api/memories', { scope: state.scope, q: $('search').value });
    showMemories(data.memories);
  }
  const listed = new Map();  // id -> the memory as its row shows it
  function showMemories(memories) {
    listed.clear();
    for (const m of memories) listed.set(m.id, m);
    const rows = memories.map(memoryRow);
    if (rows.length && con.rowShownMs === null) rows[0].cells[1].setAttribute('elementtiming', 'ania-first-row');
    $('memories').tBodies[0].replaceChildren(...rows);
    $('count').textContent = state.scope ? rows.length + ' memories' : 'no scopes yet';
  }
  const memoryProto = rowOf('memory-row');
  function memoryRow(m) {
    const tr = memoryProto.cloneNode(true);
    tr.dataset.id = m.id;
    const c = tr.cells;
    c[0].textContent = m.id;
    c[1].textContent = m.content;
    c[2].textContent = m.user_id;
    for (const t of m.tags) c[3].appendChild(el('span', t, 'tag'));
    c[4].textContent = m.created_at;
    return tr;
  }
  onRowButton('memories', (b, tr) => {
    const m = listed.get(tr.dataset.id);
    if (!m) return;
    if (b.classList.contains('edit')) editInPlace(tr, tr.cells[1], m);
    else if (b.classList.contains('history')) guard(showHistory(m.id));
    else if (b.classList.contains('delete') && confirmed(b))
      guard(call('DELETE', '/api/memory', { scope: state.scope, id: m.id }).then(() => { status('deleted ' + m.id); return loadMemories(); }));
  });
  function editInPlace(tr, cell, m) {
    if (cell.querySelector('textarea')) return;
    const area = el('textarea');
    area.value = m.content;
    const save = button('Save', () => guard(call('PUT', '/api/memory', { scope: state.scope, id: m.id }, { content: area.value })
      .then(() => { status('saved ' + m.id); return loadMemories(); })), 'save');
    const cancel = button('Cancel', () => guard(loadMemories()));
    cell.replaceChildren(area, save, cancel);
    area.focus();
  }
  async function showHistory(id) {
    const data = await call('GET', '/api/memory/history', { scope: state.scope, id });
    $('history').hidden = false;
    $('history-id').textContent = id;
    const rows = data.versions.map((v) => {
      const tr = el('tr');
      tr.dataset.seq = v.seq;
      tr.appendChild(el('td', v.seq, 'num'));
      tr.appendChild(el('td', v.kind));
      tr.appendChild(el('td', v.actor || '(not said)'));
      tr.appendChild(el('td', v.session));
      tr.appendChild(el('td', v.tool_call_id));
      tr.appendChild(el('td', v.at));
      tr.appendChild(el('td', v.content, 'content'));
      tr.appendChild(tagsCell(v.tags));
      const td = el('td');
      td.appendChild(button('Restore', () => guard(call('POST', '/api/memory/restore', { scope: state.scope, id }, { seq: v.seq })
        .then(() => { status('restored version ' + v.seq + ' of ' + id); return Promise.all([loadMemories(), showHistory(id)]); })), 'restore'));
      tr.appendChild(td);
      return tr;
    });
    $('versions').tBodies[0].replaceChildren(...rows);
  }
  async function createMemory(ev) {
    ev.preventDefault();
    const tags = $('new-tags').value.split(',').map((t) => t.trim()).filter((t) => t);
    await call('POST', '/api/memories', { }, { scope: state.scope, content: $('new-content').value, user_id: $('new-user').value, tags });
    $('new-content').value = '';
    status('added');
    await loadMemories();
  }

  // ---- sessions ----
  function duration(ms) {
    if (ms === null || ms === undefined) return 'never';
    const s = Math.round(ms / 1000);
    if (s < 90) return s + ' s';
    if (s < 5400) return Math.round(s / 60) + ' min';
    return (s / 3600).toFixed(1) + ' h';
  }
  const sessionProto = rowOf('session-row');
  onRowButton('sessions', (b, tr) => {
    const key = tr.dataset.key;
    if (b.classList.contains('open')) guard(openSession(key, null));
    else if (b.classList.contains('evict'))
      guard(call('POST', '/api/session/evict', { session: key })
        .then((r) => { status(r.evicted ? 'evicted ' + key : key + ' is busy: not evicted'); return loadSessions(); }));
    else if (b.classList.contains('clear') && confirmed(b))
      guard(call('POST', '/api/session/clear', { session: key }).then(() => { status('cleared ' + key); return loadSessions(); }));
  });
  async function loadSessions() {
    showSessions((await call('GET', '/api/sessions')).sessions);
  }
  // The overview's sessions wait for their tab: built while it is hidden, their table would delay the memory
  // page's first paint, and be rebuilt anyway from the fresh list the tab asks for.
  let unshownSessions = null;
  function showSessions(sessions) {
    unshownSessions = $('sessions-pane').hidden ? sessions : null;
    if (unshownSessions) return;
    const rows = sessions.map((s) => {
      const tr = sessionProto.cloneNode(true);
      tr.dataset.key = s.key;
      const text = [s.key, duration(s.idle_ms), s.pending, s.responding ? 'responding' : 'idle', s.messages, s.tokens, s.bytes,
                    s.since_compression_ms === null ? 'never' : duration(s.since_compression_ms) + ' ago'];
      for (let i = 0; i < text.length; ++i) tr.cells[i].textContent = String(text[i]);
      return tr;
    });
    $('sessions').tBodies[0].replaceChildren(...rows);
    $('session-count').textContent = rows.length + ' resident sessions';
  }
  async function openSession(key, offset) {
    state.session = key;
    const limit = 50;
    if (offset === null) {  // the newest page first
      const head = await call('GET', '/api/session/history', { session: key, offset: 0, limit: 1 });
      offset = Math.max(0, head.total - limit);
    }
    const [page, turns] = await Promise.all([
      call('GET', '/api/session/history', { session: key, offset, limit }),
      call('GET', '/api/session/turns', { session: key })]);
    state.offset = page.offset;
    state.total = page.total;
    $('session-detail').hidden = false;
    $('detail-key').textContent = key;
    $('page-info').textContent = (page.total ? (page.offset + 1) + '–' + (page.offset + page.messages.length) : 0) + ' of ' + page.total;
    $('stored').tBodies[0].replaceChildren(...page.messages.map((m, i) => {
      const tr = el('tr');
      tr.appendChild(el('td', page.offset + i + 1, 'num'));
      tr.appendChild(el('td', m.role));
      let text = typeof m.content === 'string' ? m.content : JSON.stringify(m.content);
      if (m.tool_calls) text += (text ? '\n' : '') + m.tool_calls.map((c) => '→ ' + c.function.name + '(' + c.function.arguments + ')').join('\n');
      tr.appendChild(el('td', text, 'content'));
      return tr;
    }));
    drawChart(turns.turns);
  }
  // The context size of each recorded turn: a polyline, compressions marked. SVG made with createElementNS.
  function drawChart(turns) {
    const svg = $('chart');
    const ns = 'http://www.w3.org/2000/svg';
    const mk = (tag, attrs, text) => {
      const e = document.createElementNS(ns, tag);
      for (const k in attrs) e.setAttribute(k, String(attrs[k]));
      if (text !== undefined) e.textContent = text;
      return e;
    };
    svg.replaceChildren();
    if (!turns.length) { svg.appendChild(mk('text', { x: 12, y: 24 }, 'no turns recorded yet')); return; }
    const max = Math.max(1, ...turns.map((t) => t.context_tokens));
    const w = 640, h = 160, pad = 28;
    const x = (i) => pad + (turns.length === 1 ? 0 : i * (w - 2 * pad) / (turns.length - 1));
    const y = (v) => h - pad - v * (h - 2 * pad) / max;
    svg.appendChild(mk('text', { x: 4, y: 14, 'font-size': 11 }, max + ' tokens'));
    svg.appendChild(mk('line', { x1: pad, y1: h - pad, x2: w - pad, y2: h - pad, stroke: '#999' }));
    svg.appendChild(mk('polyline', { points: turns.map((t, i) => x(i) + ',' + y(t.context_tokens)).join(' '), fill: 'none', stroke: '#1f3a5f', 'stroke-width': 2 }));
    turns.forEach((t, i) => {
      if (t.compressed) svg.appendChild(mk('circle', { cx: x(i), cy: y(t.context_tokens), r: 4, fill: '#c60' }));
    });
    svg.appendChild(mk('text', { x: pad, y: h - 8, 'font-size': 11 }, turns.length + ' turns (orange: compressed)'));
  }

  function tab(name) {
    $('memory-pane').hidden = name !== 'memory';
    $('sessions-pane').hidden = name !== 'sessions';
    $('tab-memory').classList.toggle('on', name === 'memory');
    $('tab-sessions').classList.toggle('on', name === 'sessions');
  }

  async function start() {
    $('login').hidden = true;
    const t0 = performance.now();
    // One round trip for the first view (each one more cost first paint 10-30 ms in the browser test).
    const data = await call('GET', '/api/overview', state.scope ? { scope: state.scope } : {});
    performance.mark('ania-data');  // the breakdown the browser test prints: data in, then the memory table built
    showScopes(data.scopes || [], data.scope);
    if (state.scope === data.scope) showMemories(data.memories || []);
    else await loadMemories();  // the scope asked for is gone: the first one's
    showSessions(data.sessions || []);
    performance.mark('ania-built');
    if (con.firstPaintMs === null) {
      // Measured from navigation start to the frame after the one that painted the memory table (a callback of
      // the next frame runs before its paint: one frame later, that paint is done).
      requestAnimationFrame(() => requestAnimationFrame(() => {
        con.firstPaintMs = performance.now(); con.dataMs = performance.now() - t0; con.ready = true;
      }));
    }
    status('');
  }

  document.addEventListener('DOMContentLoaded', () => {
    const m = /^#token=(.+)$/.exec(location.hash);
    if (m) {
      sessionStorage.setItem('ania-token', decodeURIComponent(m[1]));
      history.replaceState(null, '', location.pathname);  // out of the address bar and the history
    }
    $('tab-memory').addEventListener('click', () => tab('memory'));
    $('tab-sessions').addEventListener('click', () => {
      tab('sessions');
      if (unshownSessions) showSessions(unshownSessions);  // at once, then the fresh list
      guard(loadSessions());
    });
    $('scope').addEventListener('change', () => { state.scope = $('scope').value; $('history').hidden = true; guard(loadMemories()); });
    let timer = 0;
    $('search').addEventListener('input', () => { clearTimeout(timer); timer = setTimeout(() => guard(loadMemories()), 200); });
    $('create').addEventListener('submit', (ev) => guard(createMemory(ev)));
    $('refresh').addEventListener('click', () => guard(loadSessions()));
    $('older').addEventListener('click', () => guard(openSession(state.session, Math.max(0, state.offset - 50))));
    $('newer').addEventListener('click', () => guard(openSession(state.session, state.offset + 50 < state.total ? state.offset + 50 : state.offset)));
    $('login-go').addEventListener('click', () => {
      sessionStorage.setItem('ania-token', $('token').value);
      guard(start());
    });
    if (!token()) { showLogin(); return; }
    guard(start());
  });
})();
)ania";

namespace detail {
/// Standard base64 (RFC 4648, padded): what a CSP hash source is written in.
[[nodiscard]] inline std::string base64(const std::uint8_t* p, std::size_t n) {
    static constexpr char digits[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    std::string out;
    out.reserve((n + 2) / 3 * 4);
    for (std::size_t i = 0; i < n; i += 3) {
        const std::uint32_t v = std::uint32_t{p[i]} << 16 | (i + 1 < n ? std::uint32_t{p[i + 1]} << 8 : 0) | (i + 2 < n ? p[i + 2] : 0);
        out += digits[v >> 18 & 63];
        out += digits[v >> 12 & 63];
        out += i + 1 < n ? digits[v >> 6 & 63] : '=';
        out += i + 2 < n ? digits[v & 63] : '=';
    }
    return out;
}
/// `'sha256-...'`: the CSP source that allows exactly this inline text.
[[nodiscard]] inline std::string csp_hash(std::string_view text) {
    const auto d = text::sha256{}.update(text).finish();
    return "'sha256-" + base64(d.data(), d.size()) + "'";
}
} // namespace detail

/// The page as served, and the Content-Security-Policy of every response. Inline, because each request the
/// page made before its data cost a round trip through the browser: the style sheet and the script were two
/// (first paint with the tables filled, measured in headless Chromium: see docs/console.md). The policy allows
/// that script and that style sheet by their hash, nothing else inline, nothing from anywhere.
struct served_page {
    std::string html;
    std::string csp;

    static served_page make() {
        served_page p;
        const auto put = [&p](std::string_view marker, std::string_view text) {
            p.html.replace(p.html.find(marker), marker.size(), text);
        };
        p.html = console_html;
        put("@STYLE@", console_css);
        put("@SCRIPT@", console_js);
        p.csp = "default-src 'none'; script-src " + detail::csp_hash(console_js) + "; style-src " + detail::csp_hash(console_css) +
                "; img-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";
        return p;
    }
};

} // namespace ania::admin
