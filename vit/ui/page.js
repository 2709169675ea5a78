() => {
  // ViT Anatomy's page script: keys, clicks on pictures, the query's outline, hover, downloads, full screen, the
  // language switch. Nothing here talks to the server except through the page's own events and (hidden) buttons.
  const $ = (selector) => document.querySelector(selector);
  const typing = (el) => el && (el.tagName === "INPUT" || el.tagName === "TEXTAREA" || el.tagName === "SELECT"
                               || el.isContentEditable);
  const inTabList = (el) => Boolean(el && el.closest && el.closest("[role=tablist]"));

  // The tab list takes the arrow keys as a tab list should: the next or previous tab, selected.
  const stepTab = (el, key) => {
    const tabs = [...el.closest("[role=tablist]").querySelectorAll("[role=tab]")].filter((t) => t.offsetParent);
    const at = tabs.indexOf(el.closest("[role=tab]"));
    const to = {ArrowRight: at + 1, ArrowLeft: at - 1, Home: 0, End: tabs.length - 1}[key];
    if (at < 0 || to === undefined || !tabs[(to + tabs.length) % tabs.length]) return false;
    const tab = tabs[(to + tabs.length) % tabs.length];
    tab.focus();
    tab.click();
    return true;
  };

  document.addEventListener("keydown", (event) => {
    const el = event.target;
    // Enter in a number box (patch size, depth, ...) commits it, as leaving the box does.
    if (event.key === "Enter" && el && el.tagName === "INPUT" && el.type === "number") {
      el.blur();
      return;
    }
    if (inTabList(el)) {
      if (stepTab(el, event.key)) event.preventDefault();
      return;
    }
    // In the lesson, the arrow keys and a presenter's clicker (PageDown/PageUp) turn the steps.
    const lesson = document.getElementById("tab-lesson");
    const steps = {ArrowRight: "lesson-next", PageDown: "lesson-next", ArrowLeft: "lesson-prev", PageUp: "lesson-prev"};
    if (lesson && lesson.offsetParent !== null && event.key in steps && !typing(el)) {
      const step = document.getElementById(steps[event.key]);
      if (step && !step.disabled) {
        event.preventDefault();
        step.click();
      }
      return;
    }
    // Arrow keys (and a presenter's clicker) move the query patch, unless the student is typing or a control that
    // takes the arrows itself (a slider, a radio) has the focus.
    const arrows = {ArrowUp: "up", ArrowDown: "down", ArrowLeft: "left", ArrowRight: "right"};
    if (!(event.key in arrows) || typing(el) || event.altKey || event.ctrlKey || event.metaKey) return;
    const button = document.getElementById("move-" + arrows[event.key]);
    if (button) {
      event.preventDefault();
      button.click();
    }
  });

  // A picture that takes clicks names its cells in its file name (vit.ui.state.picture_file): the box (x0, y0, w,
  // h) they fill, in the picture's own pixels, and their rows and columns. The one relation between a picture's
  // pixels and the screen: its box on screen (shown whole, centred where its frame is larger: full screen) and
  // the scale shown / drawn. Every click, hover and outline goes through it.
  const CELLS = /\.cells-([\d.]+)-([\d.]+)-([\d.]+)-([\d.]+)-(\d+)-(\d+)\.(?:png|jpg)/;
  const cellsOf = (img) => {
    const m = img && img.src ? CELLS.exec(decodeURIComponent(img.src)) : null;
    if (!m) return null;
    const [x0, y0, w, h, rows, cols] = m.slice(1).map(Number);
    return {x0, y0, w, h, rows, cols};
  };
  const shownBox = (img) => {
    const box = img.getBoundingClientRect();
    const scale = Math.min(box.width / img.naturalWidth, box.height / img.naturalHeight);
    const width = img.naturalWidth * scale, height = img.naturalHeight * scale;
    return {left: box.left + (box.width - width) / 2, top: box.top + (box.height - height) / 2, width, height, scale};
  };
  // The cell under a pointer on a picture: {r, c} (0-based), or null off its cells.
  const cellAt = (img, x, y) => {
    const cells = cellsOf(img);
    if (!cells || !img.naturalWidth) return null;
    const box = shownBox(img);
    const px = (x - box.left) / box.scale - cells.x0, py = (y - box.top) / box.scale - cells.y0;
    if (px < 0 || py < 0 || px >= cells.w || py >= cells.h) return null;
    return {r: Math.floor(py / cells.h * cells.rows), c: Math.floor(px / cells.w * cells.cols)};
  };
  const pictureOf = (el) => el && el.closest ? el.closest(".clickable") : null;

  let pageLang = null;
  const zh = () => pageLang === "zh";
  const prefix = () => Number(($("#grid-geometry") || {dataset: {}}).dataset.prefix || 1);
  const tipText = (frame, cell, img) => {
    if (frame.id === "whatif-heads") return zh() ? `第 ${cell.r + 1} 层，第 ${cell.c + 1} 个 head`
                                                  : `layer ${cell.r + 1}, head ${cell.c + 1}`;
    const token = prefix() + cell.r * cellsOf(img).cols + cell.c;
    return zh() ? `第 ${cell.r} 行，第 ${cell.c} 列 → token ${token}` : `row ${cell.r}, column ${cell.c} → token ${token}`;
  };

  // Hover over a picture that takes clicks: the patch (or head) under the pointer.
  const tip = document.createElement("div");
  tip.id = "grid-tip";
  tip.setAttribute("aria-hidden", "true");
  document.body.appendChild(tip);
  document.addEventListener("mousemove", (event) => {
    const frame = pictureOf(event.target);
    const cell = frame && event.target.tagName === "IMG" ? cellAt(event.target, event.clientX, event.clientY) : null;
    if (!cell) {
      tip.style.display = "none";
      return;
    }
    tip.textContent = tipText(frame, cell, event.target);
    tip.style.left = event.clientX + 16 + "px";
    tip.style.top = event.clientY + 16 + "px";
    tip.style.display = "block";
  });

  // A click on a picture: the cell under it goes to the server through the picture's own hidden button (its event
  // asks clicked(), below: vit.ui.tabs.parts.on_click); on the patch grid the outline moves at once.
  const pressedOn = {};  // picture id -> {r, c}, until its click's event takes it
  let pressed = null;  // the grid's cell clicked, until the server names the query's patch
  document.addEventListener("click", (event) => {
    const frame = pictureOf(event.target);
    if (!frame || event.target.tagName !== "IMG") return;
    const cell = cellAt(event.target, event.clientX, event.clientY);
    const button = document.getElementById(frame.id + "-click");
    if (!cell || !button) return;
    pressedOn[frame.id] = cell;
    if (frame.id === "patch-grid") {
      pressed = cell;
      placeMark();
    }
    button.click();
  }, true);

  // The query's patch outlined on the patch grid, by the page: the server draws the grid without it, so a click
  // moves the outline the moment the pointer goes down. As vit.views.draw.mark_patch outlines it in a downloaded
  // grid: pink inside the patch, black just outside, its number on pink where the cells are large enough, and on
  // small cells a ring around it.
  const RING_BELOW_PX = 24;
  const markLayer = (frame) => {
    let layer = document.getElementById("grid-mark");
    if (!layer || layer.parentElement !== frame) {
      if (layer) layer.remove();
      layer = document.createElement("div");
      layer.id = "grid-mark";
      layer.setAttribute("aria-hidden", "true");
      layer.innerHTML = '<div class="mark-ring"></div><div class="mark-cell"></div><span class="mark-number"></span>';
      frame.appendChild(layer);
    }
    return layer;
  };
  const placeMark = () => {
    const frame = $("#patch-grid");
    if (!frame) return;
    const img = frame.querySelector("img"), layer = markLayer(frame), d = ($("#grid-geometry") || {}).dataset || {};
    const cells = cellsOf(img);
    const cell = pressed || (d.row !== undefined ? {r: Number(d.row), c: Number(d.col)} : null);
    if (!img || !img.naturalWidth || !cells || !cell || img.offsetParent === null) {
      layer.style.display = "none";
      return;
    }
    const box = shownBox(img), at = frame.getBoundingClientRect(), s = box.scale;
    const cw = s * cells.w / cells.cols, ch = s * cells.h / cells.rows;  // a patch on screen
    const left = box.left - at.left + s * cells.x0 + cell.c * cw, top = box.top - at.top + s * cells.y0 + cell.r * ch;
    layer.style.display = "block";
    Object.assign(layer.querySelector(".mark-cell").style, {left: left + "px", top: top + "px", width: cw + "px",
      height: ch + "px", borderWidth: Math.max(3, Math.round(Math.min(cw, ch) / 8)) + "px"});
    const number = layer.querySelector(".mark-number"), big = Math.min(cw, ch) >= 30;
    number.style.display = big ? "block" : "none";
    if (big) {
      Object.assign(number.style, {left: left + 2 + "px", top: top + 1 + "px", fontSize: Math.round(ch * 0.3) + "px"});
      number.textContent = String(prefix() + cell.r * cells.cols + cell.c);
    }
    const ring = layer.querySelector(".mark-ring"), small = Math.min(cw, ch) < RING_BELOW_PX;
    ring.style.display = small ? "block" : "none";
    if (small) {
      const radius = Math.max(22, 1.2 * Math.min(cw, ch) + 12);
      Object.assign(ring.style, {left: left + cw / 2 - radius + "px", top: top + ch / 2 - radius + "px",
                                 width: 2 * radius + "px", height: 2 * radius + "px"});
    }
  };
  // Draw on a phone: beside the canvas, the picture of the tab on screen that follows the pen (the first it shows
  // after the patch grid, which is the drawing itself; on Patches & shapes the clicked patch's attention), with its
  // own text alternative and title, so a student sees a stroke's effect without scrolling (vit/ui/page.css shows it).
  // A tab asking its quiz shows no picture, and neither does this.
  const penView = () => {
    const view = $("#pen-view");
    if (!view) return;
    const from = [...document.querySelectorAll("#tabs .picture:not(.pinned) .picture-frame:not(#patch-grid) img")]
      .find((img) => img.offsetParent !== null && img.naturalWidth);
    view.hidden = !from;
    if (!from) return;
    const img = view.querySelector("img"), title = from.closest(".picture").querySelector(".picture-title");
    if (img.src !== from.src) img.src = from.src;
    img.alt = from.alt;
    const caption = view.querySelector("figcaption"), words = title ? title.textContent.trim() : "";
    if (caption.textContent !== words) caption.textContent = words;
  };
  // Whatever changes on the page (a new grid, the server's query, another tab shown, the layout): the outline follows,
  // once per frame.
  let queued = false;
  const follow = (mutations) => {
    if (mutations && mutations.every((m) => m.target.id === "grid-mark" || (m.target.closest && m.target.closest("#grid-mark, #grid-tip, #pen-view")))) return;
    if (mutations && mutations.some((m) => m.target.id === "grid-info" || (m.target.closest && m.target.closest("#grid-info")))) pressed = null;
    if (mutations && mutations.some((m) => m.attributeName === "src")) tip.style.display = "none";  // a new picture
    if (queued) return;
    queued = true;
    requestAnimationFrame(() => { queued = false; placeMark(); penView(); });
  };
  new MutationObserver(follow).observe(document.body, {subtree: true, childList: true, attributes: true,
                                                        attributeFilter: ["src", "class", "style"]});
  new ResizeObserver(() => follow()).observe(document.body);
  document.addEventListener("load", (event) => { if (event.target.tagName === "IMG") follow(); }, true);
  document.addEventListener("fullscreenchange", () => follow());

  // Draw (vit/ui/tabs/controls.py): a canvas in the upload box's place, for a mouse, a finger or a pen. The strokes
  // are kept here, so an undo redraws the others; a finished stroke (and an undo) presses the hidden "drawn" button,
  // whose event asks drawing() for the canvas: a PNG, or a JPEG where the PNG would not fit in a request
  // (vit.ui.inputs.drawing checks and decodes it). Clear wipes the canvas and sends nothing.
  const DRAWING_CHARS = /*MAX_DRAWING_CHARS*/60000;
  const strokes = [];
  let stroke = null;
  const board = () => document.getElementById("draw-canvas");
  const paint = (ctx, s) => {
    ctx.strokeStyle = ctx.fillStyle = "#000";
    ctx.lineWidth = s.width;
    ctx.lineCap = ctx.lineJoin = "round";
    const [x0, y0] = s.points[0];
    ctx.beginPath();
    if (s.points.length === 1) {  // a tap: a dot as wide as the pen
      ctx.arc(x0, y0, s.width / 2, 0, 2 * Math.PI);
      ctx.fill();
      return;
    }
    ctx.moveTo(x0, y0);
    for (const [x, y] of s.points.slice(1)) ctx.lineTo(x, y);
    ctx.stroke();
  };
  const repaint = () => {
    const cv = board();
    if (!cv) return;
    const ctx = cv.getContext("2d");
    ctx.fillStyle = "#fff";
    ctx.fillRect(0, 0, cv.width, cv.height);
    for (const s of strokes) paint(ctx, s);
    cv.dataset.painted = "1";
  };
  const onBoard = (cv, event) => {
    const box = cv.getBoundingClientRect();
    return [(event.clientX - box.left) * cv.width / box.width, (event.clientY - box.top) * cv.height / box.height];
  };
  const sendDrawing = () => { const b = document.getElementById("drawn"); if (b) b.click(); };
  document.addEventListener("pointerdown", (event) => {
    const cv = event.target;
    if (cv.id !== "draw-canvas" || event.button > 0) return;
    event.preventDefault();
    if (!cv.dataset.painted) repaint();
    cv.setPointerCapture(event.pointerId);
    const width = Number((document.querySelector("#pen input:checked") || {}).value) || 8;
    stroke = {width, points: [onBoard(cv, event)]};
    strokes.push(stroke);
    paint(cv.getContext("2d"), stroke);
  });
  document.addEventListener("pointermove", (event) => {
    const cv = event.target;
    if (!stroke || cv.id !== "draw-canvas") return;
    const moves = event.getCoalescedEvents ? event.getCoalescedEvents() : [event];
    const ctx = cv.getContext("2d");
    for (const move of moves.length ? moves : [event]) {
      const from = stroke.points[stroke.points.length - 1], to = onBoard(cv, move);
      stroke.points.push(to);
      paint(ctx, {width: stroke.width, points: [from, to]});
    }
  });
  const strokeEnds = () => {
    if (!stroke) return;
    stroke = null;
    sendDrawing();
  };
  document.addEventListener("pointerup", strokeEnds);
  document.addEventListener("pointercancel", strokeEnds);

  let lastSaved = null;
  // The page's language (vit/ui/lang.py): ?lang=zh|en in the address, else the switch's last choice in this
  // browser, else the browser's own (gradio picks it from navigator.language). The choice goes to gradio's
  // translations and to the vit_lang cookie, which every request carries to the server.
  const LOCALES = {en: "en", zh: "zh-CN"};
  // Only the page's own languages: `in` would take Object's inherited names too (?lang=constructor named every tab
  // "function Object() { [native code] }"); hasOwnProperty through the prototype: older browsers lack Object.hasOwn.
  const known = (lang) => typeof lang === "string" && Object.prototype.hasOwnProperty.call(LOCALES, lang);
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
  const stored = () => { try { return window.localStorage.getItem(LANG_KEY); } catch (e) { return null; } };
  const browserLang = () => ((document.documentElement.lang || navigator.language || "en").toLowerCase()
    .startsWith("zh") ? "zh" : "en");
  // gradio's components in another language: the one use of gradio's internals in the page (vit/ui/gradio_internals.py).
  const gradioLocale = /*GRADIO_LOCALE*/null;
  const language = async (lang, remember) => {
    lang = known(lang) ? lang : "en";
    pageLang = lang;
    document.cookie = "vit_lang=" + lang + "; path=/; max-age=31536000; SameSite=Lax";
    if (remember) { try { window.localStorage.setItem(LANG_KEY, lang); } catch (e) { /* private mode */ } }
    if (browserLang() !== lang || !document.documentElement.lang) {
      try { await gradioLocale(LOCALES[lang]); } catch (e) { console.warn("language:", e); }
      for (const wait of [0, 300, 1500]) setTimeout(() => nameTabs(lang), wait);
    }
  };
  // Another tab of this browser may have set the cookie to its language: this one's comes back with the focus.
  window.addEventListener("focus", () => { if (pageLang) document.cookie = "vit_lang=" + pageLang + "; path=/; max-age=31536000; SameSite=Lax"; });
  language(known(asked) ? asked : (known(stored()) ? stored() : browserLang()), false);

  window.vitAnatomy = {
    language,
    // The Draw switch: the canvas in the upload box's place (the class "drawing" on <body>, vit/ui/page.css).
    drawMode(on) {
      document.body.classList.toggle("drawing", on === true);
      const cv = board();
      if (on !== true || !cv) return;
      cv.setAttribute("role", "img");
      cv.setAttribute("aria-label", zh() ? "画布：用鼠标、手指或笔在上面画" : "Canvas: draw on it with a mouse, a finger or a pen");
      repaint();
    },
    canvas(action) {
      if (action === "undo" && strokes.length) {
        strokes.pop();
        repaint();
        if (strokes.length) sendDrawing();
      } else if (action === "clear") {
        strokes.length = 0;
        repaint();
      }
    },
    // The drawn event's input: the canvas as a data: URL, or "" with nothing drawn.
    drawing() {
      const cv = board();
      if (!cv || !strokes.length) return [""];
      let url = cv.toDataURL("image/png");
      for (const quality of [0.9, 0.7, 0.5]) {
        if (url.length <= DRAWING_CHARS) break;
        url = cv.toDataURL("image/jpeg", quality);
      }
      return [url];
    },
    // A click on picture ``name``: the event's last input becomes the cell the pointer was pressed on ("[r, c]"),
    // or "" off its cells (vit.ui.tabs.parts.clicked_js); the server checks it against the grid it drew.
    clicked(name, args) {
      const cell = pressedOn[name];
      delete pressedOn[name];
      return [...args.slice(0, -1), cell ? JSON.stringify([cell.r, cell.c]) : ""];
    },
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
    // "Quiz me" on a tab (vit/ui/tabs/quiz.py): its own pictures step aside while the question is asked.
    quizzing(tabId, on) {
      const tab = document.getElementById(tabId);
      if (tab) tab.classList.toggle("quizzing", on === true);
    },
  };
  // In full screen the picture's own button says how to leave it.
  document.addEventListener("fullscreenchange", () => {
    for (const button of document.querySelectorAll("button[id$='-fullscreen']")) {
      const inside = document.fullscreenElement && document.fullscreenElement.contains(button);
      button.textContent = inside ? (zh() ? "✕ 退出全屏（Esc）" : "✕ Close full screen (Esc)") : (zh() ? "全屏" : "Full screen");
    }
  });
}
