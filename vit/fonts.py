"""The fonts for Chinese text: a CJK family after DejaVu Sans for matplotlib, which falls back glyph by glyph (so
English is drawn as before), and a CJK file for PIL, which does not. matplotlib's font cache may predate Debian's
``fonts-noto-cjk`` (``.ci/run``, a Space's ``packages.txt``), so its files are added here. Without any CJK font
Chinese text falls back (matplotlib warns of the missing glyphs), never an error.
"""

from __future__ import annotations

import functools
import logging
from pathlib import Path

log = logging.getLogger("vit.fonts")

BASE = "DejaVu Sans"  # matplotlib's own, always there
CJK_NAMES = ("Noto Sans CJK SC", "Noto Sans SC", "Source Han Sans SC", "WenQuanYi Zen Hei", "Droid Sans Fallback")
CJK_FILES = ("NotoSansCJK-Regular.ttc", "NotoSansCJK-Bold.ttc", "NotoSansCJKsc-Regular.otf", "NotoSansCJKsc-Bold.otf")
FONT_DIRS = ("/usr/share/fonts", "/usr/local/share/fonts", "~/.local/share/fonts", "~/.fonts",
             "/System/Library/Fonts", "/Library/Fonts")


@functools.cache
def families() -> tuple[str, ...]:
    """``("DejaVu Sans", <a CJK font>)`` where one is installed, else ``("DejaVu Sans",)``."""
    from matplotlib import font_manager  # noqa: PLC0415 - matplotlib on first use

    def installed() -> list[str]:
        have = {f.name for f in font_manager.fontManager.ttflist}
        return [n for n in CJK_NAMES if n in have]

    if not installed():
        for folder in FONT_DIRS:
            root = Path(folder).expanduser()
            if not root.is_dir():
                continue
            for name in CJK_FILES:
                for path in root.rglob(name):
                    try:
                        font_manager.fontManager.addfont(str(path))
                    except (OSError, RuntimeError, ValueError):  # an unreadable file: the next one
                        log.info("could not read the font %s", path)
    cjk = installed()
    if not cjk:
        log.info("no CJK font found (Debian: apt-get install fonts-noto-cjk): Chinese text falls back")
    return (BASE, *cjk[:1])


def family_list() -> list[str]:
    """:func:`families` as matplotlib's ``font.family`` takes it."""
    return list(families())


@functools.cache
def cjk_file(bold: bool = False) -> tuple[str, int] | None:
    """(path, face index) of a Simplified Chinese font for PIL, or None: a Chinese page's pictures are drawn in it
    throughout, its Latin letters too."""
    from PIL import ImageFont  # noqa: PLC0415

    names = ("NotoSansCJK-Bold.ttc", "NotoSansCJKsc-Bold.otf") if bold else ()
    names += ("NotoSansCJK-Regular.ttc", "NotoSansCJKsc-Regular.otf", "wqy-zenhei.ttc", "DroidSansFallbackFull.ttf")
    for folder in FONT_DIRS:
        root = Path(folder).expanduser()
        if not root.is_dir():
            continue
        for name in names:
            for path in root.rglob(name):
                for index in range(10):  # a collection's faces: JP, KR, SC, TC, HK ... the SC one
                    try:
                        family = ImageFont.truetype(str(path), 12, index=index).getname()[0]
                    except OSError:
                        break
                    if family.endswith(" SC") or not path.suffix == ".ttc" or "Zen Hei" in family:
                        return str(path), index
    log.info("no CJK font for the pictures (Debian: apt-get install fonts-noto-cjk): Chinese shows as boxes")
    return None
