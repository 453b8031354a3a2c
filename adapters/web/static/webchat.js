// bothub web chat: send lines, draw streamed replies (server-rendered safe HTML), refresh the tree panel.
"use strict";

(function () {
  const log = document.getElementById("log");
  const composer = document.getElementById("composer");
  const typing = document.getElementById("typing");
  const panel = document.getElementById("tree-panel");
  let treeTimer = null;

  function scrollDown() { log.scrollTop = log.scrollHeight; }

  function addMine(text) {
    const bubble = document.createElement("div");
    bubble.className = "bubble mine";
    bubble.textContent = text;
    log.appendChild(bubble);
    scrollDown();
  }

  async function send(text, button) {
    const response = await fetch("/webchat/send", {
      method: "POST",
      credentials: "same-origin",
      headers: { "Content-Type": "application/json", "X-CSRF-Token": window.bothub.csrfToken() },
      body: JSON.stringify({ text: text, button: !!button }),
    });
    if (!response.ok) {
      const problem = await response.json().catch(() => ({ error: response.statusText }));
      const note = document.createElement("p");
      note.className = "error";
      note.textContent = "Not sent: " + problem.error;
      log.appendChild(note);
    }
  }

  function draw(data) {
    let bubble = document.getElementById("m-" + data.id);
    if (!bubble) {
      bubble = document.createElement("div");
      bubble.className = "bubble bot";
      bubble.id = "m-" + data.id;
      log.appendChild(bubble);
    }
    bubble.replaceChildren();
    if (data.title) {
      const title = document.createElement("h4");
      title.textContent = data.title;
      bubble.appendChild(title);
    }
    const body = document.createElement("div");
    body.className = "body";
    body.innerHTML = data.html; // Markdown rendered on the server with raw HTML off
    bubble.appendChild(body);
    for (const row of data.buttons) {
      const line = document.createElement("div");
      line.className = "buttons";
      for (const b of row) {
        const button = document.createElement("button");
        button.type = "button";
        button.textContent = b.label;
        button.dataset.action = b.action;
        line.appendChild(button);
      }
      bubble.appendChild(line);
    }
    typing.hidden = true;
    scrollDown();
  }

  async function refreshTree() {
    try {
      const template = document.createElement("template");
      template.innerHTML = await window.bothub.fetchHtml(panel.dataset.src);
      panel.replaceChildren(template.content);
    } catch (err) { /* the next reply tries again */ }
  }

  function treeSoon() {
    clearTimeout(treeTimer);
    treeTimer = setTimeout(refreshTree, 400);
  }

  composer.addEventListener("submit", (event) => {
    event.preventDefault();
    const field = composer.elements.text;
    const text = field.value;
    if (!text.trim()) return;
    field.value = "";
    addMine(text);
    send(text, false).then(treeSoon);
  });
  composer.elements.text.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey) {
      event.preventDefault();
      composer.requestSubmit();
    }
  });
  log.addEventListener("click", (event) => {
    const button = event.target.closest("button[data-action]");
    if (button) {
      addMine(button.dataset.action);
      send(button.dataset.action, true);
    }
  });

  const events = new EventSource("/webchat/events");
  events.addEventListener("message", (event) => {
    const data = JSON.parse(event.data);
    draw(data);
    if (data.final) treeSoon(); // the answer is complete: the tree has its new messages
  });
  events.addEventListener("typing", () => { typing.hidden = false; });
  events.addEventListener("open", () => { document.body.dataset.stream = "open"; });
  refreshTree();
})();
