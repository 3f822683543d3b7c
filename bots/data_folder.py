"""The data folder is the owner's alone: accounts, conversations, thread memory, usage,
feedback, the answer cache, the catalog, the vectors and the token secret live there.

At start every command makes it private in one place (:func:`make_private`): the
process's umask becomes 077, so every file SQLite, Chroma or we create afterwards is
0600 and every folder 0700, and what an older version left readable by others
(0644 files in a 0755 folder) is tightened once, said once in the log.
"""

from __future__ import annotations

import logging
import os
import stat
from pathlib import Path

log = logging.getLogger(__name__)

PRIVATE_UMASK = 0o077


class DataFolderError(OSError):
    """The data folder cannot be made; the message says which and what to set."""


def make_private(folder: Path) -> list[Path]:
    """Set the umask to 077 for the rest of the process, and take group and other
    permissions off what ``folder`` holds. Returns what was tightened.

    A missing folder is not made here: a command that stops on a bad setting must leave
    nothing behind, and whatever store makes it later makes it 0700 under the umask."""
    os.umask(PRIVATE_UMASK)
    if folder.exists() and not folder.is_dir():
        raise DataFolderError(
            f"the data folder {folder} is a file; set TEAMRAG_DATA_DIR to a folder"
        )
    if not folder.exists():
        return []
    tightened: list[Path] = []
    refused: list[Path] = []
    for path in (folder, *folder.rglob("*")):
        try:
            mode = path.lstat().st_mode
            if stat.S_ISLNK(mode) or not mode & 0o077:
                continue  # a link's own mode means nothing; its target is not ours to change
            path.chmod(stat.S_IMODE(mode) & 0o700)
            tightened.append(path)
        except FileNotFoundError:
            continue  # removed meanwhile (a SQLite journal, a Chroma temp file)
        except PermissionError:
            refused.append(path)
    if tightened:
        log.warning(
            "data folder %s: took group and other access off %d files and folders "
            "(they were readable by other users of this host); it is the owner's alone now",
            folder,
            len(tightened),
        )
    if refused:
        log.warning(
            "data folder %s: %d files are not yours and stay readable by others (%s): "
            "chown them to the user that runs teamrag",
            folder,
            len(refused),
            ", ".join(str(p) for p in refused[:3]),
        )
    return tightened
