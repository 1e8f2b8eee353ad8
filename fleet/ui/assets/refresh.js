// Reloads the page every 5 s, except while a form field is in use.
setInterval(function () {
  var a = document.activeElement;
  if (a && (a.tagName === "INPUT" || a.tagName === "BUTTON")) return;
  var t = document.querySelector('input[name="token"]');
  if (t && t.value !== "") return;
  location.reload();
}, 5000);
