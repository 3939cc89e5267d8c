// wsrkit console: live refresh by polling. Every page reads and works
// without this script; with it, the page's <main> is fetched again every
// few seconds and swapped in, unless the operator is using a control in
// it, the tab is hidden, or refresh is paused.
(function () {
  "use strict";
  var secs = Number(document.body.getAttribute("data-refresh"));
  var btn = document.getElementById("live");
  var stamp = document.getElementById("updated");
  if (!secs || !btn) return;
  var paused = false;
  btn.hidden = false;
  btn.addEventListener("click", function () {
    paused = !paused;
    btn.setAttribute("aria-pressed", String(paused));
    btn.textContent = paused ? "Resume live refresh" : "Pause live refresh";
  });
  function busy(main) {
    var a = document.activeElement;
    return a && a !== main && a !== document.body && main.contains(a);
  }
  function tick() {
    var main = document.getElementById("main");
    if (paused || document.hidden || !main || busy(main)) return;
    fetch(location.href, { credentials: "same-origin", headers: { Accept: "text/html" } })
      .then(function (r) { return r.ok ? r.text() : null; })
      .then(function (html) {
        if (!html) return;
        var fresh = new DOMParser().parseFromString(html, "text/html").getElementById("main");
        var now = document.getElementById("main");
        if (!fresh || !now || busy(now)) return;
        now.replaceWith(fresh);
        if (stamp) stamp.textContent = "Updated " + new Date().toLocaleTimeString();
      })
      .catch(function () {});
  }
  if (stamp) stamp.textContent = "Live refresh every " + secs + " s";
  setInterval(tick, secs * 1000);
})();
