"""The ``gdrive`` kind: the files of a Google Drive folder and its sub-folders (Drive
API v3). Google Docs are exported as Markdown, Sheets as XLSX (every sheet, rows cited),
Slides as PPTX (slide numbers cited), and files of every type teamrag reads (PDF, Office,
HWP/HWPX, text; agent/retrieval/loaders: FILE_TYPES) are downloaded; a file is fetched
again only when its ``modifiedTime`` moved. The token is an OAuth access token with the
drive.readonly scope.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from agent.retrieval.loaders import is_supported, loader_name
from agent.sources.base import Item, KindContext, SourceSpec, skipped
from agent.sources.listed import Entry, ListedSource

FOLDER = "application/vnd.google-apps.folder"
_XLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
_PPTX = "application/vnd.openxmlformats-officedocument.presentationml.presentation"
# Google's own formats -> (export type, a file name for the loader)
EXPORTS = {
    "application/vnd.google-apps.document": ("text/markdown", "doc.md"),
    "application/vnd.google-apps.spreadsheet": (_XLSX, "sheet.xlsx"),
    "application/vnd.google-apps.presentation": (_PPTX, "slides.pptx"),
}
FIELDS = "nextPageToken,files(id,name,mimeType,modifiedTime,webViewLink)"


class DriveSource(ListedSource):
    service = "Google Drive"

    def __init__(self, spec: SourceSpec, ctx: KindContext) -> None:
        token = ctx.secret(spec, "token_env", "Google Drive OAuth access token")
        super().__init__(spec, ctx, {"Authorization": f"Bearer {token}"})
        self.base = str(spec.option("api_url", "https://www.googleapis.com")).rstrip("/")

    def entries(self) -> Iterator[Entry]:
        folders, seen = [self.spec.target], set()
        while folders:
            folder = folders.pop(0)
            seen.add(folder)
            for file in self._files(folder):
                if file["mimeType"] == FOLDER:
                    if file["id"] not in seen:
                        folders.append(file["id"])
                    continue
                link = (
                    file.get("webViewLink") or f"https://drive.google.com/file/d/{file['id']}/view"
                )
                yield Entry(file["id"], file.get("modifiedTime", ""), link, file["name"], file)

    def _files(self, folder: str) -> Iterator[dict[str, Any]]:
        token: str | None = None
        while True:
            params = {
                "q": f"'{folder}' in parents and trashed = false",
                "fields": FIELDS,
                "pageSize": 1000,
                **({"pageToken": token} if token else {}),
            }
            found = self.api("GET", f"{self.base}/drive/v3/files", params=params)
            yield from found.get("files", [])
            token = found.get("nextPageToken")
            if not token:
                return

    def fetch(self, entry: Entry) -> Item:
        mime = entry.extra["mimeType"]
        files = f"{self.base}/drive/v3/files/{entry.id}"
        if mime in EXPORTS:
            export, name = EXPORTS[mime]
            return self.download(entry, f"{files}/export", name, params={"mimeType": export})
        if mime.startswith("application/vnd.google-apps."):
            return skipped(entry.key, f"{entry.title}: Google type {mime} cannot be exported")
        # A file named without its extension is read by its type ("보고서" of type HWP).
        name = entry.title if is_supported(Path(entry.title)) else loader_name(mime) or entry.title
        return self.download(entry, files, name, params={"alt": "media"})
