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

  // Where a picture is on screen: its frame shows it whole and centred (object-fit: contain).
  const shownBox = (img) => {
    const frame = img.getBoundingClientRect();
    const scale = Math.min(frame.width / img.naturalWidth, frame.height / img.naturalHeight);
    const width = img.naturalWidth * scale, height = img.naturalHeight * scale;
    return {left: frame.left + (frame.width - width) / 2, top: frame.top + (frame.height - height) / 2, width, height};
  };

  // Each tab's picture frames take what is left of the screen under them; the server is told their size
  // (the hidden #screen box) and draws every picture to fill its frame. Hidden tabs cannot be measured: a
  // tab is measured when it is on screen, and the server draws with the last measure of that tab.
  const FRAME_MIN = 220, PHONE = 640;
  const screenState = {p: 0, tabs: {}, frames: {}};
  let sent = "", measures = 0;
  const visibleTab = () => [...document.querySelectorAll("#tabs > .tabitem, #tabs > div > .tabitem")]
    .find((t) => t.offsetParent !== null);
  const measure = (force = false) => {
    const tab = visibleTab();
    if (!tab) return;
    const frames = [...tab.querySelectorAll(".picture:not(.pinned) .picture-frame")].filter((f) => f.offsetParent);
    if (!frames.length) return;
    const top = frames[0].getBoundingClientRect().top + window.scrollY;
    const phone = window.innerWidth <= PHONE;
    const width = frames[0].clientWidth;
    let height = Math.max(FRAME_MIN, window.innerHeight - top - 10);
    if (phone) height = Math.min(Math.round(width * 1.15), Math.round(window.innerHeight * 0.7));
    tab.style.setProperty("--frame-h", height + "px");
    screenState.p = document.body.classList.contains("projector") ? 1 : 0;
    screenState.tabs[tab.id.replace(/^tab-/, "")] = [Math.round(width), Math.round(height)];
    for (const frame of frames) {  // a picture whose frame differs from the tab's first (a full-width one)
      const w = Math.round(frame.clientWidth), own = frame.classList.contains("own-height");  // its height is its own
      const h = own ? Math.round(frame.clientHeight) : Math.round(height);
      if (frame.id && (own || Math.abs(w - width) > 8)) screenState.frames[frame.id] = [w, h];
      else if (frame.id) delete screenState.frames[frame.id];
    }
    const value = JSON.stringify(screenState);
    const box = $("#screen textarea, #screen input");
    if (!box || (value === sent && !force)) return;
    sent = value;
    // Numbered: requests may reach the server in another order than they were sent (a tab's redraw carries the
    // measure of when it was triggered), and the server draws with the newest measure it has seen.
    box.value = JSON.stringify({...screenState, n: ++measures});
    box.dispatchEvent(new Event("input", {bubbles: true}));
  };
  let pending = null;
  const measureSoon = (ms = 120) => {
    clearTimeout(pending);
    pending = setTimeout(() => requestAnimationFrame(() => measure()), ms);
  };
  window.addEventListener("resize", () => measureSoon());
  document.addEventListener("click", (event) => {
    if (!event.target.closest || !event.target.closest("[role=tab], .tab-container button")) return;
    for (const ms of [60, 400, 1200]) setTimeout(() => requestAnimationFrame(() => measure()), ms);  // once shown
    // A redraw can miss its measure (gradio's page defers an always_last event triggered while it runs and may
    // send it with the value it had then): where a picture of the tab is still drawn larger than its frame, the
    // measure goes again, twice at most, and the server draws only what differs.
    for (const ms of [2500, 6000]) setTimeout(() => requestAnimationFrame(() => {
      const tab = visibleTab();
      const off = tab && [...tab.querySelectorAll(".picture:not(.pinned) .picture-frame img")].some((img) => {
        const frame = img.closest(".picture-frame");
        return img.naturalWidth && frame.offsetParent && (img.naturalWidth > frame.clientWidth * 1.1
                                                          || img.naturalHeight > frame.clientHeight * 1.1);
      });
      if (off) measure(true);
    }), ms);
  });
  new ResizeObserver(() => measureSoon()).observe(document.body);
  measureSoon(300);

  // The patch under a pointer on the grid or an overlay: {r, c, token}, or null off the patches.
  const cellAt = (event) => {
    const img = event.target;
    const geometry = $("#grid-geometry");
    if (!geometry || !img || img.tagName !== "IMG" || !img.closest("#patch-grid, #query-view, #rollout-view")) {
      return null;
    }
    const d = geometry.dataset;
    const box = shownBox(img);
    const scale = box.width / img.naturalWidth;
    const grid = Boolean(img.closest("#patch-grid"));  // margins on fine grids; the overlays start at (0, 0)
    const [x0, y0] = grid ? [Number(d.x0), Number(d.y0)] : [0, 0];
    const [w, h] = grid ? [Number(d.w), Number(d.h)] : [Number(d.overlayW), Number(d.overlayH)];
    const x = (event.clientX - box.left) / scale - x0;
    const y = (event.clientY - box.top) / scale - y0;
    const rows = Number(d.rows), cols = Number(d.cols);
    // A click clamps to the nearest patch, as the server's does (vit.views.clicked_fraction).
    const r = Math.min(rows - 1, Math.max(0, Math.floor(y / h * rows)));
    const c = Math.min(cols - 1, Math.max(0, Math.floor(x / w * cols)));
    const inside = x >= 0 && y >= 0 && x < w && y < h;
    return {r, c, token: Number(d.prefix || 1) + r * cols + c, inside};
  };

  // Hover over the patch grid: row, column and token of the patch under the pointer.
  const tip = document.createElement("div");
  tip.id = "grid-tip";
  document.body.appendChild(tip);
  document.addEventListener("mousemove", (event) => {
    const cell = cellAt(event);
    if (!cell || !cell.inside) {
      tip.style.display = "none";
      return;
    }
    tip.textContent = `row ${cell.r}, column ${cell.c} → token ${cell.token}`;
    tip.style.left = event.clientX + 16 + "px";
    tip.style.top = event.clientY + 16 + "px";
    tip.style.display = "block";
  });

  // The query's patch outlined on the patch grid, by the page: the server draws the grid without it, so a click
  // moves the outline the moment the pointer goes down, and needs only the query view from the server. As the
  // server outlines it in a downloaded grid (vit.views.draw.mark_patch): pink inside the patch, black just
  // outside, its number on pink where numbers are in the cells, and on fine grids a ring around it.
  const RING_BELOW_PX = 24;
  let pressed = null;  // the patch pressed, until the server's geometry names the query's
  const markLayer = () => {
    const frame = $("#patch-grid");
    if (!frame) return null;
    let layer = document.getElementById("grid-mark");
    if (!layer || layer.parentElement !== frame) {
      layer = document.createElement("div");
      layer.id = "grid-mark";
      layer.innerHTML = '<div class="mark-ring"></div><div class="mark-cell"></div><span class="mark-number"></span>';
      frame.appendChild(layer);
    }
    return layer;
  };
  const placeMark = () => {
    const img = $("#patch-grid img"), geometry = $("#grid-geometry"), layer = markLayer();
    if (!layer) return;
    const d = geometry ? geometry.dataset : {};
    const cell = pressed || (d.row !== undefined ? {r: Number(d.row), c: Number(d.col), token: Number(d.token)} : null);
    if (!img || !img.naturalWidth || !cell || img.offsetParent === null) {
      layer.style.display = "none";
      return;
    }
    const box = shownBox(img), frame = layer.parentElement.getBoundingClientRect();
    const s = box.width / img.naturalWidth;  // shown px per drawn px
    const cw = Number(d.w) / Number(d.cols), ch = Number(d.h) / Number(d.rows);  // a patch, drawn px
    const left = box.left - frame.left + s * (Number(d.x0) + cell.c * cw);
    const top = box.top - frame.top + s * (Number(d.y0) + cell.r * ch);
    const px = Math.min(cw, ch), inner = Math.max(3, Math.round(px / 8)) * s;
    Object.assign(layer.style, {display: "block"});
    Object.assign(layer.querySelector(".mark-cell").style, {left: left + "px", top: top + "px",
      width: s * cw + "px", height: s * ch + "px", borderWidth: inner + "px"});
    const number = layer.querySelector(".mark-number"), font = Number(d.font || 0);
    number.style.display = font ? "block" : "none";
    if (font) {
      Object.assign(number.style, {left: left + 3 * s - 2 + "px", top: top + 2 * s - 2 + "px",
                                   fontSize: font * s + "px"});
      number.textContent = String(cell.token);
    }
    const ring = layer.querySelector(".mark-ring");
    ring.style.display = px < RING_BELOW_PX ? "block" : "none";
    if (px < RING_BELOW_PX) {
      const radius = s * Math.max(22, 1.2 * px + 12);
      Object.assign(ring.style, {left: left + s * cw / 2 - radius + "px", top: top + s * ch / 2 - radius + "px",
                                 width: 2 * radius + "px", height: 2 * radius + "px"});
    }
  };
  document.addEventListener("pointerdown", (event) => {
    if (!event.target.closest || !event.target.closest("#patch-grid")) return;
    const cell = cellAt(event);
    if (cell) {
      pressed = cell;
      placeMark();
    }
  }, true);
  const watchMark = () => {  // the server's geometry (a new query, a new grid) and the grid's picture itself
    const info = $("#grid-info"), frame = $("#patch-grid");
    if (!info || !frame) {
      setTimeout(watchMark, 200);
      return;
    }
    new MutationObserver(() => { pressed = null; placeMark(); })
      .observe(info, {subtree: true, childList: true, attributes: true, characterData: true});
    new MutationObserver(() => placeMark()).observe(frame, {subtree: true, attributes: true, attributeFilter: ["src"]});
    frame.addEventListener("load", () => placeMark(), true);
  };
  watchMark();
  window.addEventListener("resize", () => requestAnimationFrame(placeMark));
  document.addEventListener("fullscreenchange", () => requestAnimationFrame(placeMark));
  document.addEventListener("click", (event) => {  // another tab shown: the grid may have come back on screen
    if (event.target.closest && event.target.closest("[role=tab], .tab-container button")) {
      for (const ms of [60, 400]) setTimeout(() => requestAnimationFrame(placeMark), ms);
    }
  });

  let lastSaved = null;
  // The page's language (vit/ui/lang.py): ?lang=zh|en in the address, else the switch's last choice in this
  // browser, else the browser's own (gradio picks it from navigator.language). The choice goes to gradio's
  // translations (its changeLocale) and to the vit_lang cookie, which every request carries to the server.
  const LOCALES = {en: "en", zh: "zh-CN"};
  // gradio redraws only the selected tab's name in a new language: the others are named here (vit/ui/layout.py).
  const TAB_NAMES = /*TAB_NAMES*/{};
  const nameTabs = (lang) => {
    for (const [id, names] of Object.entries(TAB_NAMES)) {
      const button = document.getElementById(id + "-button");
      if (button && button.textContent !== names[lang]) button.textContent = names[lang];
    }
  };
  const LANG_KEY = "vit-anatomy-lang";
  const asked = new URLSearchParams(window.location.search).get("lang");
  let pageLang = null;
  const stored = () => { try { return window.localStorage.getItem(LANG_KEY); } catch (e) { return null; } };
  const browserLang = () => ((document.documentElement.lang || navigator.language || "en").toLowerCase()
    .startsWith("zh") ? "zh" : "en");
  const gradioCore = () => performance.getEntriesByType("resource").map((e) => e.name)
    .find((name) => /\/assets\/core-[\w-]+\.js$/.test(name));
  const language = async (lang, remember) => {
    lang = lang in LOCALES ? lang : "en";
    pageLang = lang;
    document.cookie = "vit_lang=" + lang + "; path=/; max-age=31536000; SameSite=Lax";
    if (remember) { try { window.localStorage.setItem(LANG_KEY, lang); } catch (e) { /* private mode */ } }
    const radio = document.querySelector("#lang input[value='" + lang + "']");
    if (radio && !radio.checked) radio.checked = true;
    if (browserLang() !== lang || !document.documentElement.lang) {
      const core = gradioCore();
      if (core) {
        try { (await import(core)).changeLocale(LOCALES[lang]); } catch (e) { console.warn("language:", e); }
      }
      for (const wait of [0, 300, 1500]) setTimeout(() => nameTabs(lang), wait);
    }
  };
  // Another tab of this browser may have set the cookie to its language: this one's comes back with the focus.
  window.addEventListener("focus", () => { if (pageLang) document.cookie = "vit_lang=" + pageLang + "; path=/; max-age=31536000; SameSite=Lax"; });
  language(asked in LOCALES ? asked : (stored() in LOCALES ? stored() : browserLang()), false);

  window.vitAnatomy = {
    language,
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
      if (document.fullscreenElement) {
        document.exitFullscreen();
        return;
      }
      const block = document.getElementById(name + "-block");
      if (block && block.requestFullscreen) block.requestFullscreen();
    },
    projector(on) {
      document.body.classList.toggle("projector", Boolean(on));
      measureSoon(60);
    },
    // "Quiz me" on a tab (vit/ui/tabs/quiz.py): its own pictures step aside while the question is asked.
    quizzing(tabId, on) {
      const tab = document.getElementById(tabId);
      if (tab) tab.classList.toggle("quizzing", on === true);
      for (const ms of [60, 400]) setTimeout(() => requestAnimationFrame(() => measure()), ms);
    },
    measure,
  };
  // In full screen the picture's own button says how to leave it.
  document.addEventListener("fullscreenchange", () => {
    for (const button of document.querySelectorAll("button[id$='-fullscreen']")) {
      const inside = document.fullscreenElement && document.fullscreenElement.contains(button);
      const zh = pageLang === "zh";
      button.textContent = inside ? (zh ? "✕ 退出全屏（Esc）" : "✕ Close full screen (Esc)") : (zh ? "全屏" : "Full screen");
    }
  });

  // ?projector in the address: start in projector mode.
  if (new URLSearchParams(window.location.search).has("projector")) {
    window.vitAnatomy.projector(true);
    setTimeout(() => {
      const box = document.querySelector("#projector input");
      if (box && !box.checked) box.click();
    }, 500);
  }
}
