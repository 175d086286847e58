// pi-index web view: the little the pages need beyond HTML. Every result
// is drawn by the server (escaped there); this script only fetches it,
// puts it in place, and handles keys, toggles, copying and freshness.
// It never builds HTML from strings of its own.

const $ = (sel, root = document) => root.querySelector(sel);
const $$ = (sel, root = document) => Array.from(root.querySelectorAll(sel));

// ---- search as you type -------------------------------------------------

function searchPage() {
  const box = $("#q");
  const sort = $("#sort");
  const results = $("#results");
  if (!box || !results) return;
  let seq = 0;
  let shown = 0;
  let lastPush = 0;

  const urlFor = (q, s, fragment) => {
    const p = new URLSearchParams();
    if (q) p.set("q", q);
    if (s && s !== "relevance") p.set("sort", s);
    if (fragment) p.set("fragment", "1");
    const qs = p.toString();
    return "/" + (qs ? "?" + qs : "");
  };

  async function run(push) {
    const q = box.value.trim();
    const s = sort ? sort.value : "relevance";
    const mine = ++seq;
    const url = urlFor(q, s, false);
    if (url !== location.pathname + location.search) {
      // Typing replaces the history entry; a pause makes a new one, so
      // Back goes to the previous search, not the previous keystroke.
      const now = Date.now();
      if (push && now - lastPush > 1000) {
        history.pushState({ q, s }, "", url);
      } else {
        history.replaceState({ q, s }, "", url);
      }
      lastPush = now;
    }
    const resp = await fetch(urlFor(q, s, true), { credentials: "same-origin" });
    const html = await resp.text();
    if (mine < shown) return; // an older answer arriving late
    shown = mine;
    results.innerHTML = html; // drawn and escaped by the server
    results.dataset.query = q;
    document.title = (q || "Search") + " · pi-index";
    select(-1);
  }

  // Each keystroke searches at once when no search is on its way; while
  // one is, the box's latest text waits and goes when it comes back. So
  // a page has at most one search in flight, and typing never waits on
  // a timer.
  let busy = false;
  let again = false;
  async function typed() {
    if (busy) {
      again = true;
      return;
    }
    busy = true;
    do {
      again = false;
      try {
        await run(true);
      } catch (e) {
        console.error("search failed:", e); // the server is gone; the next keystroke tries again
      }
    } while (again);
    busy = false;
  }
  box.addEventListener("input", typed);
  if (sort) sort.addEventListener("change", () => run(true));
  $("#search").addEventListener("submit", (e) => {
    e.preventDefault();
    run(true);
  });
  window.addEventListener("popstate", () => {
    const p = new URLSearchParams(location.search);
    box.value = p.get("q") || "";
    if (sort) sort.value = p.get("sort") || "relevance";
    run(false);
  });
  results.dataset.query = box.value.trim();

  // Keys: / focuses the box, arrows or j/k move, Enter opens.
  let at = -1;
  // The hits when there are (each session's best), else the sessions.
  const hits = () => {
    const h = $$("a.hit", results);
    return h.length ? h : $$("a.session", results);
  };
  function select(i) {
    const list = hits();
    list.forEach((a) => a.classList.remove("selected"));
    at = Math.max(-1, Math.min(i, list.length - 1));
    if (at >= 0) {
      list[at].classList.add("selected");
      list[at].scrollIntoView({ block: "nearest" });
    }
  }
  document.addEventListener("keydown", (e) => {
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    const typing = document.activeElement === box;
    if (e.key === "/" && !typing) {
      e.preventDefault();
      box.focus();
      box.select();
    } else if (e.key === "ArrowDown" || (e.key === "j" && !typing)) {
      e.preventDefault();
      select(at + 1);
    } else if (e.key === "ArrowUp" || (e.key === "k" && !typing)) {
      e.preventDefault();
      select(at - 1);
    } else if (e.key === "Enter" && at >= 0) {
      e.preventDefault();
      location.href = hits()[at].href;
    } else if (e.key === "Escape" && typing) {
      box.blur();
    }
  });
}

// ---- the session page -----------------------------------------------------

function sessionPage() {
  const toggle = (id, sel, what) => {
    const b = $(id);
    if (!b) return;
    b.addEventListener("click", () => {
      const all = $$(sel);
      const open = !all.every((d) => d.open);
      all.forEach((d) => (d.open = open));
      b.textContent = (open ? "hide all " : "show all ") + what;
    });
  };
  toggle("#toggle-thinking", "details.thinking", "thinking");
  toggle("#toggle-tools", "details.tool", "tool output");

  // The next window of entries, as the reader scrolls near it.
  const more = () => {
    const link = $("a.more[data-fragment]");
    if (!link || link.dataset.loading) return;
    const seen = new IntersectionObserver(async (es) => {
      if (!es.some((e) => e.isIntersecting)) return;
      seen.disconnect();
      link.dataset.loading = "1";
      const resp = await fetch(link.dataset.fragment, { credentials: "same-origin" });
      if (!resp.ok) {
        delete link.dataset.loading;
        return;
      }
      const t = document.createElement("template");
      t.innerHTML = await resp.text(); // drawn and escaped by the server
      link.replaceWith(t.content);
      more();
    }, { rootMargin: "800px" });
    seen.observe(link);
  };
  more();
}

// ---- copying --------------------------------------------------------------

async function copy(text, button) {
  try {
    await navigator.clipboard.writeText(text);
    button.dataset.copied = text;
    const was = button.textContent;
    button.textContent = "copied";
    setTimeout(() => (button.textContent = was), 1200);
  } catch (_) {
    window.prompt("Copy:", text);
  }
}

document.addEventListener("click", (e) => {
  const b = e.target.closest("button.copy, button.copy-link");
  if (!b) return;
  if (b.classList.contains("copy-link")) {
    const u = new URL(location.href);
    u.hash = b.dataset.anchor;
    copy(u.href, b);
  } else {
    copy(b.dataset.copy, b);
  }
});

// ---- freshness ------------------------------------------------------------

function live() {
  const banner = $("#live");
  const note = $("#index-note");
  const loaded = document.body.dataset.generation;
  const reload = $("#live-reload");
  if (reload) {
    reload.addEventListener("click", (e) => {
      e.preventDefault();
      location.reload();
    });
  }
  const poll = async () => {
    try {
      const r = await fetch("/api/status", { credentials: "same-origin" });
      if (r.ok) {
        const s = await r.json();
        if (String(s.generation) !== loaded && banner) {
          banner.hidden = false;
          $("#live-reload").href = location.href;
        }
        if (note) {
          const busy = s.index && (s.index.status === "busy" || s.index.status === "failed");
          note.hidden = !busy;
          note.textContent = busy ? s.index.note || "" : "";
        }
      }
    } catch (_) {
      // The server stopped: say nothing, try again.
    }
    setTimeout(poll, 1000);
  };
  setTimeout(poll, 1000);
}

searchPage();
sessionPage();
live();
