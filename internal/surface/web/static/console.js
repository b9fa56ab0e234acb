// warden console: countdowns, and live lists over Server-Sent Events.
// Every [data-live] container is re-fetched from its URL on each event
// and reconciled by data-key, so a card being typed into is kept.
'use strict';
(function () {
  function fmtLeft(ms) {
    if (ms <= 0) return 'expired';
    const s = Math.round(ms / 1000);
    const pad = (n) => String(n).padStart(2, '0');
    if (s >= 3600) return Math.floor(s / 3600) + 'h ' + pad(Math.floor(s % 3600 / 60)) + 'm left';
    if (s >= 60) return Math.floor(s / 60) + 'm ' + pad(s % 60) + 's left';
    return s + 's left';
  }
  function tick() {
    const now = Date.now();
    // An ended card keeps what it said when it ended: no countdown.
    for (const el of document.querySelectorAll('.ended [data-deadline]')) stopClock(el);
    for (const el of document.querySelectorAll('[data-deadline]')) {
      const ms = Date.parse(el.dataset.deadline) - now;
      el.textContent = fmtLeft(ms);
      el.classList.toggle('soon', ms > 0 && ms < 30000);
      el.classList.toggle('expired', ms <= 0);
    }
  }
  function stopClock(el) {
    delete el.dataset.deadline;
    el.classList.remove('soon', 'expired');
    el.textContent = 'ended';
  }
  tick();
  setInterval(tick, 1000);

  const lists = Array.from(document.querySelectorAll('[data-live]'));
  if (lists.length === 0 || !window.EventSource) return;

  function reconcile(box, fresh) {
    const old = new Map();
    for (const el of box.children) if (el.dataset.key) old.set(el.dataset.key, el);
    const next = [];
    for (const el of Array.from(fresh.children)) {
      const k = el.dataset.key;
      if (k && old.has(k)) { next.push(old.get(k)); old.delete(k); } else next.push(document.importNode(el, true));
    }
    // A card that ended stays a moment, saying how, instead of vanishing.
    for (const el of old.values()) if (el.classList.contains('ended')) next.push(el);
    box.replaceChildren(...next);
    tick();
    count();
  }

  // The pending page's count and title follow the live list.
  function count() {
    const el = document.getElementById('count');
    const box = document.getElementById('pending');
    if (!el || !box) return;
    const n = box.querySelectorAll('.card:not(.ended)').length;
    el.textContent = String(n);
    document.title = 'Pending (' + n + ') · warden';
  }

  let busy = false, again = false;
  async function refresh() {
    if (busy) { again = true; return; }
    busy = true;
    try {
      for (const box of lists) {
        const r = await fetch(box.dataset.live, { credentials: 'same-origin', cache: 'no-store' });
        if (r.status === 401) { location.assign('/login?next=' + encodeURIComponent(location.pathname + location.search)); return; }
        if (!r.ok) continue;
        const doc = new DOMParser().parseFromString('<div>' + (await r.text()) + '</div>', 'text/html');
        reconcile(box, doc.body.firstElementChild);
      }
    } catch (e) {
      // offline: the next event or reconnect fetches again
    } finally {
      busy = false;
      if (again) { again = false; refresh(); }
    }
  }

  function ended(data) {
    const card = document.getElementById('req-' + data.id);
    if (!card || card.classList.contains('ended')) return;
    card.classList.add('ended');
    for (const el of card.querySelectorAll('[data-deadline]')) stopClock(el);
    for (const d of card.querySelectorAll('details')) d.open = false;
    for (const b of card.querySelectorAll('button, input, select, textarea, summary')) { b.disabled = true; b.setAttribute('aria-disabled', 'true'); }
    const note = card.querySelector('.ended-note');
    if (note) { note.textContent = data.text || 'Ended.'; note.hidden = false; }
    setTimeout(() => { card.remove(); count(); }, 10000);
    count();
  }

  const live = document.getElementById('live');
  const es = new EventSource('/events');
  es.addEventListener('open', () => { if (live) { live.hidden = false; live.textContent = 'live'; live.classList.remove('off'); } refresh(); });
  es.addEventListener('error', () => {
    if (live) { live.textContent = es.readyState === EventSource.CLOSED ? 'offline' : 'reconnecting'; live.classList.add('off'); }
    if (es.readyState === EventSource.CLOSED) refresh(); // logged out? refresh sends us to the login page
  });
  es.addEventListener('created', refresh);
  es.addEventListener('run', refresh);
  es.addEventListener('ended', (e) => {
    try { ended(JSON.parse(e.data)); } catch (err) { /* malformed: just refresh */ }
    refresh();
  });
})();
