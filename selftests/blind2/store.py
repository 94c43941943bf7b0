"""Store backends: a SQLite store (real SQL schema) and an in-memory store.

Both hand out plain dicts ``{"id", "name", "categoryId", "status"}``; ``status``
is ``None`` when the creator left it out. The flags of the catalog entry switch
the faulty column types and queries on.
"""

from __future__ import annotations

import random
import sqlite3
import threading
from typing import Any

Pet = dict[str, Any]

STATUSES = ("available", "pending", "sold")
PRELOAD_NAMES = (
    "Rex",
    "Bella",
    "Milo",
    "Luna",
    "Charlie",
    "Nala",
    "Oscar",
    "Coco",
    "Pepper",
    "Ziggy",
    "Biscuit",
    "Mochi",
)
PRELOAD_CATEGORIES = (1, 2, 3, 7, 12, 42, 100, 2024)


def preload_rows(n: int) -> list[tuple[str, int, str]]:
    """N animals: statuses take turns, names and categories vary."""
    rows = []
    for i in range(n):
        name = f"{PRELOAD_NAMES[i % len(PRELOAD_NAMES)]} {i + 1}"
        category = PRELOAD_CATEGORIES[(i * 5) % len(PRELOAD_CATEGORIES)]
        rows.append((name, category, STATUSES[i % 3]))
    return rows


class SqliteStore:
    """Animals in SQLite (in memory), one connection behind a lock."""

    def __init__(self, flags: frozenset[str], order: str = "id ASC") -> None:
        self.flags = flags
        self.order = order
        self.lock = threading.Lock()
        self.db = sqlite3.connect(":memory:", check_same_thread=False)
        category_type = "INTEGER"
        if "category_real_column" in flags:
            category_type = "REAL"
        id_column = "id INTEGER PRIMARY KEY AUTOINCREMENT"
        if "ids_duplicate_after_100" in flags:
            id_column = "id INTEGER NOT NULL"  # the service computes ids itself
            self.order = order.replace("id", "rowid")
        self.db.execute(
            "CREATE TABLE pets ("
            f" {id_column},"
            " name TEXT NOT NULL,"
            f" category_id {category_type},"
            " status TEXT,"
            " created_at TEXT DEFAULT CURRENT_TIMESTAMP)"
        )
        self.db.execute("CREATE INDEX pets_status ON pets (status)")
        if "huge_ids" in flags:
            # ids are not sequential: the first one sits above 2**53
            self.next_huge = 2**53 + random.randrange(1, 2**40)

    # rows -----------------------------------------------------------------
    def _pet(self, row: tuple[Any, ...]) -> Pet:
        pet_id, name, category, status, created = row
        if isinstance(category, float):
            category = int(category)
        return {
            "id": pet_id,
            "name": name,
            "categoryId": category,
            "status": status,
            "createdAt": created,
        }

    COLUMNS = "id, name, category_id, status, created_at"

    def add(self, name: str, category: int | None, status: str | None) -> Pet:
        with self.lock:
            if "ids_duplicate_after_100" in self.flags:
                # "next id = how many animals we have + 1", counted on one page
                page = self.db.execute("SELECT id FROM pets LIMIT 100").fetchall()
                cur = self.db.execute(
                    "INSERT INTO pets (id, name, category_id, status) VALUES (?, ?, ?, ?)",
                    (len(page) + 1, name, category, status),
                )
                row = self.db.execute(f"SELECT {self.COLUMNS} FROM pets WHERE rowid = ?", (cur.lastrowid,)).fetchone()
                return self._pet(row)
            if "name_apostrophe_500" in self.flags:
                # the query is built by string formatting
                sql = f"INSERT INTO pets (name, category_id, status) VALUES ('{name}', ?, ?)"
                cur = self.db.execute(sql, (category, status))
            elif "huge_ids" in self.flags:
                self.next_huge += random.randrange(1, 2**32)
                cur = self.db.execute(
                    "INSERT INTO pets (id, name, category_id, status) VALUES (?, ?, ?, ?)",
                    (self.next_huge, name, category, status),
                )
            else:
                cur = self.db.execute(
                    "INSERT INTO pets (name, category_id, status) VALUES (?, ?, ?)",
                    (name, category, status),
                )
            row = self.db.execute(f"SELECT {self.COLUMNS} FROM pets WHERE id = ?", (cur.lastrowid,)).fetchone()
        return self._pet(row)

    def get(self, pet_id: int) -> Pet | None:
        with self.lock:
            row = self.db.execute(f"SELECT {self.COLUMNS} FROM pets WHERE id = ?", (pet_id,)).fetchone()
        return self._pet(row) if row else None

    def list(self, limit: int | None, status: str | None, after: int | None = None) -> list[Pet]:
        sql = f"SELECT {self.COLUMNS} FROM pets WHERE 1 = 1"
        args: list[Any] = []
        if status is not None:
            sql += " AND status = ?"
            args.append(status)
        if after is not None:
            sql += " AND id > ?"
            args.append(after)
        sql += f" ORDER BY {self.order}"
        if limit is not None:
            sql += " LIMIT ?"
            args.append(limit)
        with self.lock:
            rows = self.db.execute(sql, args).fetchall()
        return [self._pet(r) for r in rows]

    def count(self, status: str | None = None) -> int:
        with self.lock:
            if status is None:
                return self.db.execute("SELECT COUNT(*) FROM pets").fetchone()[0]
            sql = "SELECT COUNT(*) FROM pets WHERE status = ?"
            return self.db.execute(sql, (status,)).fetchone()[0]

    def preload(self, n: int) -> None:
        for name, category, status in preload_rows(n):
            self.add(name, category, status)


class MemoryStore:
    """Animals in a Python list; the list order is a choice of the variant."""

    def __init__(self, order: str = "newest", sorted_no_limit: bool = False) -> None:
        self.order = order
        self.sorted_no_limit = sorted_no_limit
        self.pets: list[Pet] = []
        self.lock = threading.Lock()

    def add(self, name: str, category: int, status: str | None) -> Pet:
        with self.lock:
            pet = {
                "id": len(self.pets) + 1,
                "name": name,
                "categoryId": category,
                "status": status,
            }
            self.pets.append(pet)
            return dict(pet)

    def by_index(self, index: int) -> Pet | None:
        """The naive lookup: ``pets[id - 1]`` (negative indexes wrap around)."""
        with self.lock:
            try:
                return dict(self.pets[index])
            except IndexError:
                return None

    def get(self, pet_id: int) -> Pet | None:
        with self.lock:
            if 1 <= pet_id <= len(self.pets):
                return dict(self.pets[pet_id - 1])
        return None

    def list(self, limit: int, status: str | None) -> list[Pet]:
        with self.lock:
            pets = [p for p in self.pets if status is None or p["status"] == status]
        if self.order == "newest":
            pets = pets[::-1]
        elif self.order == "name":
            pets = sorted(pets, key=lambda p: (p["name"].casefold(), p["id"]))
            if self.sorted_no_limit:
                return [dict(p) for p in pets]  # the sorted branch forgot the slice
        return [dict(p) for p in pets[:limit]]

    def preload(self, n: int) -> None:
        for name, category, status in preload_rows(n):
            self.add(name, category, status)
