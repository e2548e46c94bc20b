"""A CJK font for the Chinese pages, served by this app from the machine's own fonts.

``scripts/setup.sh`` installs Debian's ``fonts-wqy-zenhei`` (文泉驿正黑); ``/fonts/cjk`` serves the
first face of the first installed font of ``CANDIDATES``, repacked as a plain TrueType file that
Chromium's sanitiser accepts (``app/i18n/sfnt.py``), and ``static/css/i18n.css`` names it in an ``@font-face``
restricted to CJK code points, so English pages never load it and nothing is fetched from
outside (the page's CSP allows fonts from 'self' only). No font file is committed.
"""
import functools
import io
import os

from flask import Blueprint, abort, send_file

from .sfnt import extract_face

CANDIDATES = (
    "/usr/share/fonts/truetype/wqy/wqy-zenhei.ttc",
    "/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc",
    "/usr/share/fonts/truetype/wqy/wqy-microhei.ttc",
)

bp = Blueprint("i18n_fonts", __name__)


def cjk_font_path():
    return next((p for p in CANDIDATES if os.path.isfile(p)), None)


@bp.get("/fonts/cjk")
def cjk_font():
    path = cjk_font_path()
    if path is None:
        abort(404)
    data, mtime = _face(path, os.stat(path).st_mtime)
    return send_file(io.BytesIO(data), mimetype="font/ttf", max_age=7 * 24 * 3600, conditional=True,
                     etag=f"cjk-{len(data)}-{int(mtime)}", last_modified=mtime)


@functools.lru_cache(maxsize=2)
def _face(path, mtime):
    """The collection's first face as a plain font (app/i18n/sfnt.py: browsers refuse the .ttc)."""
    with open(path, "rb") as f:
        return extract_face(f.read(), 0), mtime
