// bothub web chat, beside the chat: the chat's conversations (searchable) and its tree, both as navigation
// inside the chat: a conversation switches to it, a tree node shows the branch it is on.
"use strict";

(function () {
  const list = document.getElementById("conversations");
  const search = document.getElementById("conversation-search");
  const panel = document.getElementById("tree-panel");
  const words = JSON.parse(document.body.dataset.strings);
  let current = "";
  let conversations = [];
  let treeTimer = null;

  function drawList() {
    const wanted = search.value.trim().toLowerCase();
    const shown = conversations.filter((c) => !wanted || (c.title || "").toLowerCase().includes(wanted)
      || c.id.startsWith(wanted));
    list.replaceChildren();
    for (const c of shown) {
      const item = document.createElement("li");
      const button = document.createElement("button");
      button.type = "button";
      button.dataset.conversation = c.id;
      button.className = c.id === current ? "current" : "";
      const name = document.createElement("span");
      name.className = "name";
      name.textContent = c.title || words.untitled;
      const facts = document.createElement("span");
      facts.className = "facts";
      const when = c.updated_at ? new Date(c.updated_at).toLocaleDateString() : "";
      facts.textContent = [c.messages + " " + words.wc_messages, when].filter(Boolean).join(" · ");
      button.append(name, facts);
      item.appendChild(button);
      list.appendChild(item);
    }
    if (shown.length === 0 && conversations.length > 0) {
      const none = document.createElement("li");
      none.className = "hint";
      none.textContent = words.wc_no_match;
      list.appendChild(none);
    }
  }

  async function refreshList() {
    const response = await fetch("/webchat/conversations", { credentials: "same-origin" });
    if (response.ok) {
      conversations = (await response.json()).conversations;
      drawList();
    }
  }

  async function refreshTree() {
    try {
      const template = document.createElement("template");
      template.innerHTML = await window.bothub.fetchHtml(panel.dataset.src);
      panel.replaceChildren(template.content);
      panel.dataset.loaded = String(Date.now());
    } catch (err) { /* the next answer tries again */ }
  }

  function refreshSoon() {
    clearTimeout(treeTimer);
    treeTimer = setTimeout(() => { refreshTree(); refreshList(); }, 400);
  }

  function closeDrawers() { document.body.removeAttribute("data-drawer"); }

  search.addEventListener("input", drawList);
  list.addEventListener("click", (event) => {
    const button = event.target.closest("button[data-conversation]");
    if (button && button.dataset.conversation !== current) {
      closeDrawers();
      window.webchat.navigate("/switch " + button.dataset.conversation);
    }
  });
  document.getElementById("new-conversation").addEventListener("click", () => {
    closeDrawers();
    window.webchat.navigate("/new");
  });
  panel.addEventListener("click", (event) => {
    const node = event.target.closest("a.node[data-tip]");
    if (!node || event.ctrlKey || event.metaKey || event.shiftKey) return; // a modifier opens the full tree
    event.preventDefault();
    event.stopPropagation(); // not the dashboard's detail view: here a node is a place to go
    closeDrawers();
    window.webchat.navigate("/goto " + node.dataset.tip);
  });
  for (const toggle of document.querySelectorAll(".drawer-toggle")) {
    toggle.addEventListener("click", () => {
      const open = document.body.dataset.drawer === toggle.dataset.drawer;
      if (open) closeDrawers(); else document.body.dataset.drawer = toggle.dataset.drawer;
    });
  }

  document.addEventListener("webchat:changed", (event) => {
    current = event.detail.conversation;
    refreshTree();
    refreshList();
  });
  document.addEventListener("webchat:answered", refreshSoon);
})();
