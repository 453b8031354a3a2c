// bothub web chat: send lines, draw streamed replies (server-rendered safe HTML), refresh the tree panel.
"use strict";

(function () {
  const log = document.getElementById("log");
  const composer = document.getElementById("composer");
  const typing = document.getElementById("typing");
  const panel = document.getElementById("tree-panel");
  let treeTimer = null;

  function scrollDown() { log.scrollTop = log.scrollHeight; }

  function addMine(text, files) {
    const bubble = document.createElement("div");
    bubble.className = "bubble mine";
    bubble.textContent = text;
    for (const file of files || []) {
      const line = document.createElement("div");
      line.className = "attached";
      line.textContent = "📎 " + file.name;
      bubble.appendChild(line);
    }
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
      method: "POST",
      credentials: "same-origin",
      headers: request.headers,
      body: request.body,
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

  function drawFile(data) {
    const bubble = document.createElement("div");
    bubble.className = "bubble bot file";
    bubble.id = "f-" + data.id;
    const link = document.createElement("a");
    link.href = data.url;
    link.setAttribute("download", data.name);
    if (data.image) {
      const picture = document.createElement("img");
      picture.src = data.url;
      picture.alt = data.name;
      link.appendChild(picture);
    } else {
      link.textContent = "📄 " + data.name;
    }
    bubble.appendChild(link);
    if (data.caption) {
      const caption = document.createElement("div");
      caption.className = "body";
      caption.textContent = data.caption;
      bubble.appendChild(caption);
    }
    log.appendChild(bubble);
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
    const picker = composer.elements.files;
    const text = field.value;
    const files = Array.from(picker.files);
    if (!text.trim() && files.length === 0) return;
    field.value = "";
    picker.value = "";
    addMine(text, files);
    send(text, false, files).then(treeSoon);
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
  events.addEventListener("file", (event) => drawFile(JSON.parse(event.data)));
  events.addEventListener("typing", () => { typing.hidden = false; });
  events.addEventListener("open", () => { document.body.dataset.stream = "open"; });
  refreshTree();
})();
