// Small behaviours htmx does not cover: drag-and-drop uploads, a client-side size check,
// resetting a form after it saved, and a session that expired while a page was open.
(function () {
  "use strict";

  function setupUpload(form) {
    const input = form.querySelector("input[type=file]");
    const zone = form.querySelector(".dropzone");
    const chosen = form.querySelector("#chosen");
    const list = form.querySelector("#upload-list");
    const button = form.querySelector("button[type=submit]");
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

    function row(file) {
      const li = document.createElement("li");
      const name = document.createElement("span");
      name.className = "name";
      name.textContent = file.name;
      const bar = document.createElement("progress");
      bar.max = 100;
      bar.value = 0;
      const state = document.createElement("span");
      state.className = "state";
      state.textContent = "waiting";
      li.append(name, bar, state);
      list.append(li);
      return { li, bar, state };
    }

    // One request a file: each gets its own bar, and one refused file does not hold up the rest.
    function send(file, source, view) {
      return new Promise((resolve) => {
        const data = new FormData();
        data.append("csrfmiddlewaretoken", form.querySelector("[name=csrfmiddlewaretoken]").value);
        data.append("source", source);
        data.append("files", file, file.name);
        const xhr = new XMLHttpRequest();
        xhr.open("POST", form.action);
        xhr.setRequestHeader("HX-Request", "true");
        xhr.setRequestHeader("HX-Target", "new-items");
        xhr.upload.addEventListener("progress", (e) => {
          if (e.lengthComputable) { view.bar.value = (e.loaded / e.total) * 100; view.state.textContent = Math.round(view.bar.value) + "%"; }
        });
        xhr.addEventListener("load", () => resolve(xhr));
        xhr.addEventListener("error", () => resolve(xhr));
        view.state.textContent = "0%";
        xhr.send(data);
      });
    }

    function absorb(xhr, view, flashes) {
      if ((xhr.responseURL || "").includes("/accounts/login/")) { window.location.href = xhr.responseURL; return; }
      const tpl = document.createElement("template");
      tpl.innerHTML = xhr.responseText || "";
      if (xhr.status === 200) {
        const flash = tpl.content.querySelector("#flash");
        if (flash) { flashes.push(...flash.childNodes); flash.remove(); }
        const empty = tpl.content.querySelector("#empty-latest");
        if (empty) { empty.remove(); const shown = document.getElementById("empty-latest"); if (shown) shown.remove(); }
        const cards = Array.from(tpl.content.children);
        document.getElementById("new-items").prepend(tpl.content);
        cards.forEach((card) => window.htmx.process(card));
        view.bar.value = 100;
        view.state.textContent = "saved";
        view.state.className = "state good";
        document.body.dispatchEvent(new CustomEvent("memories-changed", { bubbles: true }));
      } else if (xhr.status >= 400 && xhr.status < 500 && xhr.getResponseHeader("HX-Retarget") === "#flash") {
        flashes.push(...tpl.content.childNodes);
        view.state.textContent = "refused";
        view.state.className = "state bad";
      } else {
        const p = document.createElement("p");
        p.className = "flash error";
        p.textContent = view.li.firstChild.textContent + ": the server could not take it (" + (xhr.status || "no connection") + "). Try again.";
        flashes.push(p);
        view.state.textContent = "failed";
        view.state.className = "state bad";
      }
    }

    form.addEventListener("submit", async (e) => {
      e.preventDefault();
      if (!input.files.length) { chosen.textContent = "Choose at least one file."; chosen.className = "flash error"; return; }
      if (!describe()) return;
      const files = Array.from(input.files);
      const source = form.querySelector("[name=source]").value;
      list.replaceChildren();
      const views = files.map(row);
      const flashes = [];
      button.disabled = true;
      for (let i = 0; i < files.length; i++) {
        absorb(await send(files[i], source, views[i]), views[i], flashes);
      }
      button.disabled = false;
      const flash = document.getElementById("flash");
      flash.replaceChildren(...flashes);
      window.htmx.process(flash);
      form.reset();
      chosen.textContent = "";
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

  // "Copy" beside a configuration block: the text of the block it names, as it is shown.
  document.addEventListener("click", (e) => {
    const button = e.target.closest && e.target.closest("button[data-copy]");
    if (!button) return;
    const block = document.getElementById(button.dataset.copy);
    if (!block || !navigator.clipboard) return;
    navigator.clipboard.writeText(block.textContent).then(
      () => { button.textContent = "Copied"; },
      () => { button.textContent = "Select and copy"; },
    );
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
