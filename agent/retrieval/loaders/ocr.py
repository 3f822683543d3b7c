"""OCR for scanned PDF pages: tesseract with its Korean data, through pytesseract.

OCR is used when it is there: ``tesseract`` on the PATH with the ``kor`` language
(Debian: ``apt-get install -y tesseract-ocr tesseract-ocr-kor``). Without it, a PDF's
text pages still go in and its scanned pages are named with that install line.
"""

from __future__ import annotations

import functools
import os
import shutil
from typing import Any

INSTALL = "apt-get install -y tesseract-ocr tesseract-ocr-kor"
LANGUAGES = "kor+eng"
# One page's OCR rarely takes over 10 s on 2 cores; a hung tesseract must not stall a sync.
PAGE_TIMEOUT_S = 120


@functools.lru_cache(maxsize=4)
def _status(search_path: str) -> tuple[bool, str]:
    binary = shutil.which("tesseract", path=search_path)
    if binary is None:
        return False, f"tesseract is not installed; install it: {INSTALL}"
    try:
        import pytesseract

        pytesseract.pytesseract.tesseract_cmd = binary
        languages = set(pytesseract.get_languages(config=""))
        version = str(pytesseract.get_tesseract_version())
    except Exception as exc:  # a broken install: say what it said
        return False, f"tesseract does not run ({type(exc).__name__}: {exc}); reinstall: {INSTALL}"
    if "kor" not in languages:
        return False, f"tesseract {version} has no Korean data; install it: {INSTALL}"
    return True, f"tesseract {version} with Korean (kor) and English"


def ocr_status() -> tuple[bool, str]:
    """Whether scanned pages can be read, and a sentence saying so (or the fix)."""
    return _status(os.environ.get("PATH", os.defpath))


def ocr_images(images: list[Any]) -> str:
    """The text tesseract reads in a page's images (PIL images), in order."""
    import pytesseract

    texts = [
        pytesseract.image_to_string(image, lang=LANGUAGES, timeout=PAGE_TIMEOUT_S)
        for image in images
    ]
    return "\n".join(t.strip() for t in texts if t.strip())
