// bothub: the theme before the first paint (light, dark, or the system's when nothing was chosen), and the toggle.
"use strict";
(function () {
  const root = document.documentElement;
  const chosen = localStorage.getItem("bothub-theme");
  if (chosen === "light" || chosen === "dark") root.dataset.theme = chosen;
  function current() {
    return root.dataset.theme || (matchMedia("(prefers-color-scheme: dark)").matches ? "dark" : "light");
  }
  document.addEventListener("click", (event) => {
    if (!event.target.closest(".theme-toggle")) return;
    const next = current() === "dark" ? "light" : "dark";
    root.dataset.theme = next;
    localStorage.setItem("bothub-theme", next);
  });
})();
