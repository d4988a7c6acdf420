// The timeline: open the newest end first, and drag across bars to open a range of them
// in the memory bank (a click on one bar is a plain link).
(function () {
  "use strict";

  document.addEventListener("DOMContentLoaded", () => {
    const scroll = document.getElementById("timeline-scroll");
    if (!scroll) return;
    scroll.scrollLeft = scroll.scrollWidth;
    const pick = document.getElementById("range-pick");
    let start = null;

    function rangeOf(target) { return target && target.closest ? target.closest("a.range") : null; }
    function between(a, b) {
      const lo = a.dataset.from < b.dataset.from ? a : b;
      const hi = lo === a ? b : a;
      return { by: a.dataset.by, from: lo.dataset.from, to: hi.dataset.to };
    }
    function mark(a, b) {
      const r = between(a, b);
      scroll.querySelectorAll("a.range").forEach((el) => {
        el.classList.toggle("chosen", el.dataset.by === r.by && el.dataset.from >= r.from && el.dataset.to <= r.to);
      });
      pick.textContent = "Open " + (r.by === "stored" ? "stored" : "happened") + " " + r.from + " – " + r.to;
      return r;
    }

    scroll.addEventListener("pointerdown", (e) => {
      const a = rangeOf(e.target);
      if (!a || e.button !== 0) return;
      start = a;
      pick.textContent = "";
      scroll.querySelectorAll("a.range.chosen").forEach((el) => el.classList.remove("chosen"));
    });
    scroll.addEventListener("pointermove", (e) => {
      if (!start) return;
      const a = rangeOf(document.elementFromPoint(e.clientX, e.clientY));
      if (a && a !== start && a.dataset.by === start.dataset.by) mark(start, a);
    });
    scroll.addEventListener("pointerup", (e) => {
      const a = rangeOf(document.elementFromPoint(e.clientX, e.clientY));
      const from = start;
      start = null;
      if (!from || !a || a === from || a.dataset.by !== from.dataset.by) return;
      const r = mark(from, a);
      const url = new URL(from.getAttribute("href"), window.location.href);
      url.searchParams.set("date_from", r.from);
      url.searchParams.set("date_to", r.to);
      window.location.href = url.toString();
    });
    // A drag ends with a click on the bar it started on: that one is not a navigation.
    scroll.addEventListener("click", (e) => {
      if (scroll.querySelector("a.range.chosen") && pick.textContent) e.preventDefault();
    }, true);
    // Dragging a link would otherwise start the browser's own link drag.
    scroll.addEventListener("dragstart", (e) => e.preventDefault());
  });
})();
