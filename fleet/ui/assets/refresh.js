// Keeps the page current without costing the fleet: every 10 s, while the
// tab is visible and no form field is in use, it asks for the page again
// with the ETag it was served with; the server answers 304 (no body) when
// nothing changed, and the page reloads only when something did. A hidden
// tab asks nothing, and checks at once when shown again.
(function () {
  var meta = document.querySelector('meta[name="agora-etag"]');
  var etag = meta ? '"' + meta.content + '"' : "";
  var busy = false;
  function idle() {
    var a = document.activeElement;
    if (a && (a.tagName === "INPUT" || a.tagName === "BUTTON" || a.tagName === "SELECT")) return false;
    var t = document.querySelector('input[type="password"]');
    return !(t && t.value !== "");
  }
  function check() {
    if (busy || document.hidden || !idle()) return;
    busy = true;
    fetch(location.href, { cache: "no-store", credentials: "same-origin", headers: { "If-None-Match": etag } })
      .then(function (r) {
        busy = false;
        if (r.status === 200) location.reload();
      })
      .catch(function () { busy = false; });
  }
  setInterval(check, 10000);
  document.addEventListener("visibilitychange", function () { if (!document.hidden) check(); });
})();
