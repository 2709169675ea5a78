() => {
  // ViT Anatomy's page script: keys, hover, downloads, projector mode, full screen. Nothing here
  // talks to the server except by clicking the page's own (hidden) buttons.
  const $ = (selector) => document.querySelector(selector);
  const typing = (el) => el && (el.tagName === "INPUT" || el.tagName === "TEXTAREA" || el.tagName === "SELECT"
                               || el.isContentEditable);

  document.addEventListener("keydown", (event) => {
    const el = event.target;
    // Enter in a number box (patch size, depth, ...) commits it, as leaving the box does.
    if (event.key === "Enter" && el && el.tagName === "INPUT" && el.type === "number") {
      el.blur();
      return;
    }
    // In the lesson, the arrow keys and a presenter's clicker (PageDown/PageUp) turn the steps.
    const lesson = document.getElementById("tab-lesson");
    const steps = {ArrowRight: "lesson-next", PageDown: "lesson-next", ArrowLeft: "lesson-prev", PageUp: "lesson-prev"};
    if (lesson && lesson.offsetParent !== null && event.key in steps && !typing(el)) {
      const step = document.getElementById(steps[event.key]);
      if (step) {
        event.preventDefault();
        step.click();
      }
      return;
    }
    // Arrow keys (and a presenter's clicker) move the query patch, unless the student is typing
    // or a slider has the focus (its own arrows move it).
    const arrows = {ArrowUp: "up", ArrowDown: "down", ArrowLeft: "left", ArrowRight: "right"};
    if (!(event.key in arrows) || typing(el) || event.altKey || event.ctrlKey || event.metaKey) return;
    const button = document.getElementById("move-" + arrows[event.key]);
    if (button) {
      event.preventDefault();
      button.click();
    }
  });

  // Hover over the patch grid: row, column and token of the patch under the pointer.
  const tip = document.createElement("div");
  tip.id = "grid-tip";
  document.body.appendChild(tip);
  document.addEventListener("mousemove", (event) => {
    const img = event.target;
    const geometry = $("#grid-geometry");
    if (!geometry || !img || img.tagName !== "IMG" || !img.closest("#patch-grid, #query-view, #rollout-view")) {
      tip.style.display = "none";
      return;
    }
    const d = geometry.dataset;
    const box = img.getBoundingClientRect();
    const scale = box.width / img.naturalWidth;
    const grid = Boolean(img.closest("#patch-grid"));  // margins on fine grids; the overlays start at (0, 0)
    const [x0, y0] = grid ? [Number(d.x0), Number(d.y0)] : [0, 0];
    const [w, h] = grid ? [Number(d.w), Number(d.h)] : [Number(d.overlayW), Number(d.overlayH)];
    const x = (event.clientX - box.left) / scale - x0;
    const y = (event.clientY - box.top) / scale - y0;
    const rows = Number(d.rows), cols = Number(d.cols);
    const r = Math.floor(y / h * rows), c = Math.floor(x / w * cols);
    if (r < 0 || c < 0 || r >= rows || c >= cols) {
      tip.style.display = "none";
      return;
    }
    tip.textContent = `row ${r}, column ${c} → token ${1 + r * cols + c}`;
    tip.style.left = event.clientX + 16 + "px";
    tip.style.top = event.clientY + 16 + "px";
    tip.style.display = "block";
  });

  let lastSaved = null;
  window.vitAnatomy = {
    // After the server wrote a picture with its caption: hand it to the browser's downloads.
    saveDownload() {
      const tries = 40;
      const attempt = (n) => {
        const link = $("#download-file a[download], #download-file a[href]");
        if (link && link.href !== lastSaved) {
          lastSaved = link.href;
          const a = document.createElement("a");
          a.href = link.href;
          a.download = link.getAttribute("download") || "vit-anatomy.png";
          document.body.appendChild(a);
          a.click();
          a.remove();
        } else if (n > 0) {
          setTimeout(() => attempt(n - 1), 100);
        }
      };
      attempt(tries);
    },
    fullscreen(name) {
      const block = document.getElementById(name + "-block");
      if (block && block.requestFullscreen) block.requestFullscreen();
    },
    projector(on) {
      document.body.classList.toggle("projector", Boolean(on));
    },
  };
  // ?projector in the address: start in projector mode.
  if (new URLSearchParams(window.location.search).has("projector")) {
    window.vitAnatomy.projector(true);
    setTimeout(() => {
      const box = document.querySelector("#projector input");
      if (box && !box.checked) box.click();
    }, 500);
  }
}
