// Small behaviours htmx does not cover: drag-and-drop uploads, a client-side size check,
// resetting a form after it saved, and a session that expired while a page was open.
(function () {
  "use strict";

  function setupUpload(form) {
    const input = form.querySelector("input[type=file]");
    const zone = form.querySelector(".dropzone");
    const chosen = form.querySelector("#chosen");
    const progress = form.querySelector("#upload-progress");
    const maxBytes = Number(form.dataset.maxMb) * 1024 * 1024;

    function describe() {
      const files = Array.from(input.files);
      const tooBig = files.filter((f) => f.size > maxBytes).map((f) => f.name);
      chosen.textContent = files.length ? files.map((f) => f.name).join(", ") : "";
      if (tooBig.length) {
        chosen.textContent = tooBig.join(", ") + ": larger than the " + form.dataset.maxMb + " MB limit.";
        chosen.className = "flash error";
        return false;
      }
      chosen.className = "muted";
      return true;
    }
    input.addEventListener("change", describe);
    ["dragenter", "dragover"].forEach((type) => zone.addEventListener(type, (e) => { e.preventDefault(); zone.classList.add("over"); }));
    ["dragleave", "drop"].forEach((type) => zone.addEventListener(type, () => zone.classList.remove("over")));
    zone.addEventListener("drop", (e) => {
      e.preventDefault();
      input.files = e.dataTransfer.files;
      describe();
    });
    form.addEventListener("htmx:confirm", (e) => {
      if (!input.files.length) { e.preventDefault(); chosen.textContent = "Choose at least one file."; chosen.className = "flash error"; }
      else if (!describe()) { e.preventDefault(); }
    });
    form.addEventListener("htmx:xhr:progress", (e) => {
      if (e.detail.lengthComputable) { progress.hidden = false; progress.value = (e.detail.loaded / e.detail.total) * 100; }
    });
    form.addEventListener("htmx:afterRequest", (e) => {
      progress.hidden = true;
      if (e.detail.successful) { form.reset(); chosen.textContent = ""; }
    });
  }

  document.addEventListener("DOMContentLoaded", () => {
    const upload = document.getElementById("upload-form");
    if (upload) setupUpload(upload);
  });

  document.addEventListener("htmx:afterRequest", (e) => {
    const form = e.target.closest && e.target.closest("form[data-reset-on-success]");
    if (form && e.detail.successful && e.detail.xhr.status === 200) form.reset();
  });

  // The bank's "select all on this page" ticks the cards' boxes (they belong to #bulk-form).
  document.addEventListener("change", (e) => {
    if (e.target.id !== "select-all") return;
    document.querySelectorAll("#results input.pick").forEach((box) => { box.checked = e.target.checked; });
  });
  document.addEventListener("htmx:confirm", (e) => {
    if (e.target.id === "bulk-form" && !document.querySelector("#results input.pick:checked")) {
      e.preventDefault();
      const flash = document.getElementById("flash");
      if (flash) { flash.innerHTML = '<p class="flash error"></p>'; flash.firstChild.textContent = "Select at least one memory to delete."; }
    }
  });

  // A redirect to the sign-in page means the session ended: go there instead of swapping it in.
  document.addEventListener("htmx:beforeSwap", (e) => {
    const url = e.detail.xhr.responseURL || "";
    if (url.includes("/accounts/login/")) { e.detail.shouldSwap = false; window.location.href = url; }
  });

  document.addEventListener("htmx:responseError", (e) => {
    const flash = document.getElementById("flash");
    if (flash) flash.innerHTML = '<p class="flash error"></p>';
    if (flash) flash.firstChild.textContent = "The server could not do that (" + e.detail.xhr.status + "). Try again, or reload the page.";
  });
})();
