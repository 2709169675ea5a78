"""Reading a request: the controls as the page shows them (``vit.validate``'s clamp mode), and the one gate for
images."""

from __future__ import annotations

import base64
import binascii
import html
import json

from vit import validate
from vit.errors import InputError
from vit.images import decode_cost
from vit.model.families import ASSETS
from vit.serve.decode import load_image_bounded
from vit.serve.files import proven_file
from vit.serve.uploads import gradio_upload_folder
from vit.ui import gradio_internals
from vit.views.draw import COLORMAPS
from vit.views.registry import CENTRE, SCREENS, screen_frame

# What a request sends: checked (clamped for the page, validated for the API) before anything uses it.
Number = float | int | str | None  # a control's number
Query = tuple[float, float] | list | None  # the query patch, fractions (x, y) of the picture


def clamp(value: Number, lo: int, hi: int, default: int) -> int:
    """A control's integer as the page shows it (:func:`vit.validate.integer`'s clamp mode)."""
    return validate.integer("", value, lo, hi, clamp=True, default=default)


def opacity(value: Number, default: float) -> float:
    return validate.opacity(value, clamp=True, default=default)


def discard_ratio(value: Number) -> float:
    return validate.discard_ratio(value, clamp=True)


def top_k(value: Number, num_classes: int) -> int:
    return validate.top_k(value, num_classes, clamp=True)


def colormap_name(value) -> str:
    if isinstance(value, str) and value.strip().lower() in COLORMAPS:
        return value.strip().lower()
    raise InputError(f"colormap must be one of {', '.join(map(repr, COLORMAPS))}, got {validate.show(value)}")


MAX_SCREEN_CHARS = 40  # "laptop+projector" and the like: anything longer is not read


def screen(value, tab: str, picture: str | None = None) -> tuple[bool, tuple[int, int] | None]:
    """(projector mode, the frame ``tab``'s pictures, or ``picture``, are drawn for) on the screen the page named
    (vit/ui/page.js); a bare bool (a script) is projector mode, anything else normal mode at the fixed sizes."""
    if isinstance(value, bool):
        return value, None
    if not isinstance(value, str) or len(value) > MAX_SCREEN_CHARS:
        return False, None
    name, _, mode = value.partition("+")
    frame = screen_frame(name, tab, picture) if name in SCREENS else None
    return mode == "projector", frame


def clicked_cell(value, rows: int, cols: int) -> tuple[int, int] | None:
    """The cell (row, col) of a ``rows`` x ``cols`` grid the page says was clicked (``"[row, col]"``, mapped through
    the picture as shown by vit/ui/page.js); None for anything else."""
    if not isinstance(value, str) or len(value) > 40:
        return None
    try:
        r, c = json.loads(value)
    except (ValueError, TypeError):
        return None
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in (r, c)):
        return None
    return (r, c) if 0 <= r < rows and 0 <= c < cols else None


def query_fraction(value) -> tuple[float, float]:
    """The query patch as fractions (x, y) of the picture; anything else is the centre."""
    try:
        fx, fy = (float(v) for v in value)
    except (TypeError, ValueError, OverflowError):
        return CENTRE
    return (fx, fy) if 0 <= fx < 1 and 0 <= fy < 1 else CENTRE


def image_source(image: object):
    """The one gate for every image that comes with a request: (what ``load_image`` reads, the name the student
    knows the file by). Only a file proven to lie under :func:`upload_roots` is ever opened."""
    if image is None or image == "" or image == {}:
        raise InputError(key="refusal-no-image")
    if isinstance(image, dict):
        path, name = image.get("path"), image.get("orig_name")
    elif isinstance(image, str):
        path, name = image, None
    elif hasattr(image, "path"):  # a gradio FileData object
        path, name = image.path, getattr(image, "orig_name", None)
    else:
        return image, None  # a PIL image or an array, from Python: nothing on disk
    real = proven_file(path, upload_roots())
    return real, (name if isinstance(name, str) and name else real.name)


DRAWING_PX = 256  # the page's canvas, square (vit/ui/page.js): 4 x the shapes model's 64 px drawings
# A drawing comes as a data: URL inside the event's body, within the middleware's 64 KiB (vit.serve.limits.MAX_BODY):
# a PNG of strokes is a few kB; where one is larger the page sends a JPEG.
MAX_DRAWING_CHARS = 60_000
DRAWING_TYPES = ("data:image/png;base64,", "data:image/jpeg;base64,")


def drawing(value: object):
    """The page's canvas as an RGB image: a ``data:`` URL of a PNG or JPEG, DRAWING_PX square (read from the
    header first), not blank; decoded as an upload is, and nothing touches the disk."""
    if value is None or value == "":
        raise InputError(key="refusal-empty-canvas")
    kind = next((k for k in DRAWING_TYPES if isinstance(value, str) and value.startswith(k)), None)
    if kind is None or len(value) > MAX_DRAWING_CHARS:
        raise InputError(key="refusal-not-a-drawing")
    try:
        data = base64.b64decode(value[len(kind):], validate=True)
    except (binascii.Error, ValueError):
        raise InputError(key="refusal-not-a-drawing") from None
    if decode_cost(data).size != (DRAWING_PX, DRAWING_PX):  # from the header: nothing else is decoded
        raise InputError(key="refusal-not-a-drawing")
    image = load_image(data, None)
    if image.convert("L").getextrema()[0] >= 250:  # white, or all but white after a JPEG's rounding
        raise InputError(key="refusal-empty-canvas")
    return image


def upload_roots() -> tuple[str, ...]:
    """The folders whose files a request may name: gradio's upload folder and the app's assets."""
    return gradio_upload_folder(), str(ASSETS)


SHOWN_NAME_CHARS = 60  # an upload's own name is cut to this in messages (a name may be megabytes long)


def shown_name(name: str) -> str:
    """An upload's file name as a message may show it: cut, quoted, and HTML-escaped (toasts render HTML)."""
    cut = name if len(name) <= SHOWN_NAME_CHARS else name[:SHOWN_NAME_CHARS - 1] + "…"
    return html.escape(repr(cut), quote=False)  # <, > and &: enough for a toast, and quotes stay readable


def load_image(source: object, name: str | None, reader: gradio_internals.Reader | None = None):
    """Decode the upload within the server's decode budget (``vit.serve.decode``), fairly between clients (one
    whose client has gone leaves the line); messages name the file as the student knows it, never the path."""
    reader = reader or gradio_internals.reader()
    try:
        return load_image_bounded(source, client=reader.client(), give_up=lambda: not reader.there())
    except InputError as exc:
        if name is None:
            raise
        path, shown = str(source), shown_name(name)
        if exc.key is None:
            raise InputError(str(exc).replace(path, shown)) from None
        fields = {k: v.replace(path, shown) if isinstance(v, str) else v for k, v in exc.fields.items()}
        raise InputError(key=exc.key, **fields) from None


def image_id(image) -> str:
    """Which picture a page request is about: gradio names every upload with a fresh path."""
    if isinstance(image, dict):
        return str(image.get("path"))
    return str(getattr(image, "path", id(image)))
