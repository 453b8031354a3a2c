// bothub dashboard: progressive enhancement only. Every link and form works without this file;
// with it, tree parts load in place and a node's detail opens beside the tree.
"use strict";

function csrfToken() {
  const meta = document.querySelector('meta[name="csrf-token"]');
  return meta ? meta.content : "";
}

async function fetchHtml(url) {
  const response = await fetch(url, { credentials: "same-origin", headers: { "X-Requested-With": "fetch" } });
  if (!response.ok) throw new Error(response.status + " " + response.statusText);
  return response.text();
}

// Server-rendered fragments (escaped by the template engine) replace their placeholder.
function replaceWithHtml(element, html) {
  const template = document.createElement("template");
  template.innerHTML = html;
  element.replaceWith(template.content);
}

async function loadPart(button) {
  button.disabled = true;
  try {
    replaceWithHtml(button.closest("li"), await fetchHtml(button.dataset.src));
  } catch (err) {
    button.disabled = false;
    button.textContent = "could not load (" + err.message + "), try again";
  }
}

async function showNode(link) {
  const detail = document.getElementById("detail");
  if (!detail) return false;
  try {
    detail.innerHTML = "";
    const template = document.createElement("template");
    template.innerHTML = await fetchHtml(link.dataset.detail);
    detail.appendChild(template.content);
    document.querySelectorAll("a.node.selected").forEach((a) => a.classList.remove("selected"));
    link.classList.add("selected");
    history.replaceState(null, "", link.href);
    return true;
  } catch (err) {
    return false;
  }
}

document.addEventListener("click", (event) => {
  const load = event.target.closest("button.load[data-src]");
  if (load) {
    event.preventDefault();
    loadPart(load);
    return;
  }
  const node = event.target.closest("a.node[data-detail]");
  if (node && !event.ctrlKey && !event.metaKey && !event.shiftKey) {
    event.preventDefault();
    showNode(node).then((ok) => { if (!ok) window.location.href = node.href; });
  }
});

window.bothub = { csrfToken, fetchHtml, replaceWithHtml };

// The log view follows the log: its lines are fetched again every few seconds while "follow" is on.
(function () {
  const lines = document.getElementById("log-lines");
  const follow = document.getElementById("follow");
  if (!lines || !follow) return;
  setInterval(async () => {
    if (!follow.checked) return;
    try { lines.innerHTML = await fetchHtml(lines.dataset.src); } catch (err) { /* next time */ }
  }, 3000);
})();

// The overview's live feed: one line per event, newest first, at most 50.
(function () {
  const feed = document.getElementById("feed");
  if (!feed) return;
  const events = new EventSource(feed.dataset.src);
  events.addEventListener("open", () => { feed.dataset.stream = "open"; });
  events.addEventListener("event", (message) => {
    const e = JSON.parse(message.data);
    const line = document.createElement("li");
    line.className = "kind-" + e.kind;
    const when = new Date(e.at * 1000).toISOString().slice(11, 19);
    const what = [e.kind, e.platform, e.detail].filter(Boolean).join(" · ");
    line.textContent = when + "  " + what + (e.value ? "  " + e.value.toFixed(2) + " s" : "");
    feed.prepend(line);
    while (feed.children.length > 50) feed.lastElementChild.remove();
  });
})();
