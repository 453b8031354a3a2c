"""sqlite-vec in the store's connection: `vec_distance_cosine` ranks memories by meaning inside SQLite.

Some Python builds (pyenv's default among them) leave out `Connection.enable_load_extension` although the
SQLite library they link can load extensions; there the extension is loaded through that same library's C
API. Where neither works, a Python function of the same name takes its place: slower, same answers.
"""

from __future__ import annotations

import ctypes
import logging
import sqlite3
import sys

import sqlite_vec

from bot.store.memories import unpack

log = logging.getLogger("bothub.store")


def _cosine_distance(a: bytes | None, b: bytes | None) -> float | None:
    """vec_distance_cosine's meaning for unit vectors (1 - dot), for a SQLite without the extension."""
    if a is None or b is None or len(a) != len(b):
        return None
    return 1.0 - sum(x * y for x, y in zip(unpack(a), unpack(b), strict=True))


def _load_through_c_api(conn: sqlite3.Connection) -> None:
    """Load the extension with sqlite3_load_extension on the connection's own handle. The handle is the
    first field after the object header in CPython's connection object (3.11-3.13); it is checked by asking
    the library for the database's name before anything is loaded."""
    import _sqlite3  # the module that links the library this connection lives in

    if not (3, 11) <= sys.version_info[:2] <= (3, 13):
        raise OSError("unknown connection layout")
    lib = ctypes.CDLL(_sqlite3.__file__)
    handle = ctypes.c_void_p.from_address(id(conn) + object.__basicsize__).value
    lib.sqlite3_db_readonly.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
    if not handle or lib.sqlite3_db_readonly(ctypes.c_void_p(handle), b"main") not in (0, 1):
        raise OSError("connection handle not found")
    lib.sqlite3_enable_load_extension.argtypes = [ctypes.c_void_p, ctypes.c_int]
    lib.sqlite3_load_extension.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p,
                                           ctypes.POINTER(ctypes.c_char_p)]
    error = ctypes.c_char_p()
    lib.sqlite3_enable_load_extension(ctypes.c_void_p(handle), 1)
    try:
        code = lib.sqlite3_load_extension(ctypes.c_void_p(handle), sqlite_vec.loadable_path().encode(), None,
                                          ctypes.byref(error))
    finally:
        lib.sqlite3_enable_load_extension(ctypes.c_void_p(handle), 0)
    if code != 0:
        raise OSError((error.value or b"load failed").decode(errors="replace"))


def load_vectors(conn: sqlite3.Connection) -> str:
    """Make `vec_distance_cosine` available on `conn`; returns the sqlite-vec version, or "python"."""
    try:
        if hasattr(conn, "enable_load_extension"):
            conn.enable_load_extension(True)
            try:
                sqlite_vec.load(conn)
            finally:
                conn.enable_load_extension(False)
        else:
            _load_through_c_api(conn)
        return str(conn.execute("SELECT vec_version()").fetchone()[0])
    except (OSError, AttributeError, sqlite3.Error) as e:
        log.warning("sqlite-vec could not be loaded (%s): memories are ranked by a Python function", e)
        conn.create_function("vec_distance_cosine", 2, _cosine_distance, deterministic=True)
        return "python"
