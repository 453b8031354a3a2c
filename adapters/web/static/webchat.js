// bothub web chat: the branch so far (paged upward as you scroll), lines you send, answers streamed over SSE,
// and per-message actions. Message HTML is rendered on the server with raw HTML off, so innerHTML is safe here.
"use strict";

(function () {
  const log = document.getElementById("log");
  const start = document.getElementById("log-start");
  const composer = document.getElementById("composer");
  const typing = document.getElementById("typing");
  const title = document.getElementById("chat-title");
  const words = JSON.parse(document.body.dataset.strings);
  const state = { more: false, loading: false, quiet: 0, answers: 0 };
  const { el, stamp, codeCopyButtons, actionBar, setEntry, stored, file } = window.bubbles;

  function atBottom() { return log.scrollHeight - log.scrollTop - log.clientHeight < 80; }
  function scrollDown() { log.scrollTop = log.scrollHeight; }

  function unansweredNote() {
    log.querySelector(".unanswered")?.remove();
    const last = Array.from(log.querySelectorAll(".bubble")).pop();
    if (!last || !last.classList.contains("mine") || !last.dataset.id) return;
    const note = el("div", "unanswered", words.wc_unanswered + " ");
    const retry = el("button", "act act-retry primary", words.wc_retry);
    retry.type = "button";
    retry.dataset.act = "retry";
    note.appendChild(retry);
    log.appendChild(note);
  }

  async function fetchPage(before) {
    const query = before ? "?before=" + encodeURIComponent(before) : "";
    const response = await fetch("/webchat/history" + query, { credentials: "same-origin" });
    if (!response.ok) throw new Error(response.status + " " + response.statusText);
    return response.json();
  }

  function showTitle(page) { title.textContent = page.conversation ? (page.title || words.untitled) : words.wc_start; }

  // The branch from the cursor upward: replaces the log (after a reload, a branch move, a switch).
  async function reload(note) {
    const page = await fetchPage(null);
    log.replaceChildren(start);
    for (const entry of page.messages) log.appendChild(stored(entry));
    state.more = page.more;
    start.hidden = page.more;
    showTitle(page);
    if (note) log.appendChild(note);
    unansweredNote();
    scrollDown();
    document.body.dataset.history = "loaded";
    document.dispatchEvent(new CustomEvent("webchat:changed", { detail: page }));
  }

  async function older() {
    const first = log.querySelector(".bubble[data-id]");
    if (!state.more || state.loading || !first) return;
    state.loading = true;
    const height = log.scrollHeight;
    try {
      const page = await fetchPage(first.dataset.id);
      const part = document.createDocumentFragment();
      for (const entry of page.messages) part.appendChild(stored(entry));
      start.after(part);
      state.more = page.more;
      start.hidden = page.more;
      log.scrollTop += log.scrollHeight - height; // the message being read stays where it was
    } finally { state.loading = false; }
  }
  log.addEventListener("scroll", () => { if (log.scrollTop < 120) older(); });

  function addMine(text, files) {
    log.querySelector(".unanswered")?.remove();
    const bubble = el("div", "bubble mine live");
    bubble.appendChild(el("div", "body", text));
    bubble.dataset.text = text;
    for (const file of files || []) bubble.appendChild(el("div", "attached", "📎 " + file.name));
    stamp(bubble);
    actionBar(bubble, null);
    log.appendChild(bubble);
    scrollDown();
  }

  function body(text, button, files) {
    if (!files || files.length === 0) {
      return { headers: { "Content-Type": "application/json" }, body: JSON.stringify({ text: text, button: !!button }) };
    }
    const form = new FormData();
    form.append("text", text);
    for (const file of files) form.append("files", file, file.name);
    return { headers: {}, body: form }; // the browser sets the multipart boundary
  }

  async function send(text, button, files) {
    const request = body(text, button, files);
    request.headers["X-CSRF-Token"] = window.bothub.csrfToken();
    const response = await fetch("/webchat/send", {
      method: "POST", credentials: "same-origin", headers: request.headers, body: request.body,
    });
    if (!response.ok) {
      const problem = await response.json().catch(() => ({ error: response.statusText }));
      log.appendChild(el("p", "error", words.wc_not_sent + " " + problem.error));
      if (state.quiet) state.quiet -= 1;
    }
  }

  // A command that moves around the tree (/goto, /switch, /new): its reply becomes a note under the branch.
  function navigate(command) {
    state.quiet += 1;
    return send(command, true);
  }

  function retry() {
    const mine = Array.from(log.querySelectorAll(".bubble.mine"));
    const last = mine[mine.length - 1];
    while (last && last.nextSibling) last.nextSibling.remove(); // the old answer stays in the tree, not here
    state.answers += 1;
    send("/retry", true);
  }

  function draw(data) {
    let bubble = document.getElementById("m-" + data.id);
    const side = (data.columns || []).length > 0;
    if (!bubble) {
      bubble = el("div", side ? "duel live" : "bubble bot live");
      bubble.id = "m-" + data.id;
      log.appendChild(bubble);
    }
    const follow = atBottom();
    if (side) drawColumns(bubble, data); else fill(bubble, data);
    typing.hidden = true;
    if (follow) scrollDown();
  }

  function fill(bubble, data) {
    bubble.replaceChildren();
    if (data.title) bubble.appendChild(el("h4", "", data.title));
    const text = el("div", "body");
    text.innerHTML = data.html;
    bubble.appendChild(text);
    for (const row of data.buttons) {
      const line = el("div", "buttons");
      for (const b of row) {
        const button = el("button", "", b.label);
        button.type = "button";
        button.dataset.action = b.action;
        line.appendChild(button);
      }
      bubble.appendChild(line);
    }
    bubble.classList.toggle("streaming", !data.final);
    if (data.final) { codeCopyButtons(text); stamp(bubble); actionBar(bubble, null); }
  }

  // Answers side by side (a duel, one column per model): one message, a bubble per column, all growing at once;
  // each update refills the bubbles in place, as for a single answer.
  function drawColumns(box, data) {
    let row = box.querySelector(":scope > .columns");
    if (!row) {
      row = el("div", "columns");
      box.replaceChildren(el("div", "duel-head"), row);
    }
    box.firstChild.textContent = data.title || "";
    while (row.children.length < data.columns.length) row.appendChild(el("div", "bubble bot"));
    data.columns.forEach((column, i) => fill(row.children[i],
      { title: column.title, html: column.html, buttons: column.buttons, final: data.final }));
  }

  // After an answer is stored, its bubble and the line it answers learn their ids (branch, trace).
  async function learnIds(bubble, tries) {
    const page = await fetchPage(null).catch(() => null);
    const answer = page && page.messages[page.messages.length - 1];
    if (!answer || answer.role !== "assistant" || document.getElementById("h-" + answer.id)) {
      if (tries > 0) setTimeout(() => learnIds(bubble, tries - 1), 400);
      return;
    }
    const question = page.messages.slice().reverse().find((m) => m.role === "user");
    const mine = Array.from(log.querySelectorAll(".bubble.mine.live:not([data-id])")).pop();
    if (question && mine) { mine.id = "h-" + question.id; setEntry(mine, question); }
    bubble.id = "h-" + answer.id;
    setEntry(bubble, answer);
  }

  function onMessage(data) {
    if (data.final && state.quiet > 0) {
      state.quiet -= 1;
      const note = el("div", "note");
      note.innerHTML = data.html;
      reload(note);
      return;
    }
    draw(data);
    if (!data.final) return;
    const bubble = document.getElementById("m-" + data.id);
    if (state.answers > 0) {
      state.answers -= 1;
      if (data.buttons.length === 0) learnIds(bubble, 5); // a failure comes with its Retry button instead
    }
    document.dispatchEvent(new CustomEvent("webchat:answered"));
  }

  function copy(button, text, label) {
    const done = () => { button.textContent = words.wc_copied; setTimeout(() => { button.textContent = label; }, 1500); };
    navigator.clipboard.writeText(text).then(done, () => { button.textContent = "✗"; });
  }

  log.addEventListener("click", (event) => {
    const pressed = event.target.closest("button[data-action]");
    if (pressed) {
      if (pressed.dataset.action === "/retry") { retry(); return; }
      addMine(pressed.dataset.action);
      send(pressed.dataset.action, true);
      return;
    }
    const code = event.target.closest("button.copy-code");
    if (code) {
      const text = (code.parentElement.querySelector("code")?.innerText || "").replace(/\n$/, "");
      copy(code, text, words.wc_code_copy);
      return;
    }
    const act = event.target.closest("[data-act]");
    if (!act) return;
    const bubble = act.closest(".bubble");
    if (act.dataset.act === "copy") copy(act, bubble.dataset.text || bubble.querySelector(".body").innerText, words.wc_copy);
    else if (act.dataset.act === "retry") retry();
    else if (act.dataset.act === "branch") navigate("/goto " + bubble.dataset.number);
  });

  composer.addEventListener("submit", (event) => {
    event.preventDefault();
    const field = composer.elements.text;
    const picker = composer.elements.files;
    const text = field.value;
    const files = Array.from(picker.files);
    if (!text.trim() && files.length === 0) return;
    field.value = "";
    picker.value = "";
    addMine(text, files);
    if (!text.trim().startsWith("/")) state.answers += 1;
    send(text, false, files);
  });
  composer.elements.text.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      composer.requestSubmit();
    }
  });

  const events = new EventSource("/webchat/events");
  events.addEventListener("message", (event) => onMessage(JSON.parse(event.data)));
  events.addEventListener("file", (event) => { log.appendChild(file(JSON.parse(event.data))); scrollDown(); });
  events.addEventListener("typing", () => { typing.hidden = false; });
  events.addEventListener("open", () => { document.body.dataset.stream = "open"; });

  window.webchat = { navigate, reload };
  reload().catch(() => { start.hidden = false; });
})();
