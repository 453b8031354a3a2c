// bothub web chat: how one message looks — its text, time, code blocks with copy buttons and its actions
// (copy, branch from here, retry, trace), for stored messages, streamed answers and files alike.
"use strict";

(function () {
  const words = JSON.parse(document.body.dataset.strings);
  const chat = document.body.dataset.chat;

  function el(tag, cls, text) {
    const node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined) node.textContent = text;
    return node;
  }
  function stamp(bubble, iso) {
    const when = new Date(iso || Date.now());
    const time = el("time", "when", when.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" }));
    time.dateTime = when.toISOString();
    time.title = when.toLocaleString();
    bubble.appendChild(time);
  }

  function codeCopyButtons(body) {
    for (const pre of body.querySelectorAll("pre")) {
      const button = el("button", "copy-code", words.wc_code_copy);
      button.type = "button";
      button.dataset.copy = "code";
      pre.classList.add("code");
      pre.prepend(button);
    }
  }

  function actionBar(bubble, entry) {
    const bar = el("div", "actions");
    const add = (act, label, extra) => {
      const b = el(extra ? "a" : "button", "act act-" + act, label);
      if (extra) { b.href = extra; b.target = "_blank"; b.rel = "noopener"; } else { b.type = "button"; }
      b.dataset.act = act;
      bar.appendChild(b);
    };
    add("copy", words.wc_copy);
    if (entry && entry.number) add("branch", words.wc_branch);
    if (entry && entry.role === "assistant") add("retry", words.wc_retry);
    if (entry && entry.trace) add("trace", words.wc_trace, "/trace?chat=" + encodeURIComponent(chat) + "&id=" + entry.trace);
    bubble.querySelector(".actions")?.remove();
    bubble.appendChild(bar);
  }

  function setEntry(bubble, entry) {
    bubble.dataset.id = entry.id;
    bubble.dataset.number = entry.number;
    bubble.dataset.text = entry.text;
    bubble.querySelector("time")?.remove();
    stamp(bubble, entry.at);
    actionBar(bubble, entry);
  }

  // One stored message of the branch: text, tools it used, time, actions.
  function stored(entry) {
    const bubble = el("div", "bubble " + (entry.role === "user" ? "mine" : "bot"));
    bubble.id = "h-" + entry.id;
    if (entry.tools.length) bubble.appendChild(el("div", "tools", "🔧 " + words.wc_tools + ": " + entry.tools.join(", ")));
    const body = el("div", "body");
    body.innerHTML = entry.html;
    codeCopyButtons(body);
    if (entry.text.trim() || !entry.tools.length) bubble.appendChild(body);
    if (entry.interrupted) bubble.appendChild(el("div", "tag", words.wc_interrupted));
    setEntry(bubble, entry);
    return bubble;
  }

  function file(data) {
    const bubble = el("div", "bubble bot file");
    bubble.id = "f-" + data.id;
    const link = el("a");
    link.href = data.url;
    link.setAttribute("download", data.name);
    if (data.voice) {  // a spoken answer: a player, the file still downloadable below it
      const player = el("audio");
      player.controls = true;
      player.preload = "metadata";
      player.src = data.url;
      bubble.appendChild(player);
      link.textContent = "🔊 " + data.name;
    } else if (data.image) {
      const picture = el("img");
      picture.src = data.url;
      picture.alt = data.name;
      link.appendChild(picture);
    } else {
      link.textContent = "📄 " + data.name;
    }
    bubble.appendChild(link);
    if (data.caption) bubble.appendChild(el("div", "body", data.caption));
    return bubble;
  }

  window.bubbles = { el, stamp, codeCopyButtons, actionBar, setEntry, stored, file };
})();
