// /ui/overnight: a RAPTOR node's link (#cluster-ID) opens that node's entry (a <details>)
// and scrolls to it; the page works without this, the entries then open by a click.
(function () {
  function openTarget() {
    var id = decodeURIComponent(window.location.hash.slice(1));
    if (!id) { return; }
    var el = document.getElementById(id);
    if (el && el.tagName === "DETAILS") {
      el.open = true;
      el.scrollIntoView();
    }
  }
  window.addEventListener("hashchange", openTarget);
  document.addEventListener("DOMContentLoaded", openTarget);
}());
