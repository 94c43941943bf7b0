"""The interface document's values, each defined once (``spec/interface.md``; the section in each comment).

Everything that judges, generates or serves the interface (the checks, the store arithmetic, the
coverage tally, the reference server) reads them from here.
"""

from __future__ import annotations

STATUSES = ("available", "pending", "sold")  # §2 PetStatus: allowed values
INT64_MIN = -(2**63)  # §2 id and categoryId: "integer, format int64"
INT64_MAX = 2**63 - 1
LIMIT_MIN, LIMIT_MAX, LIMIT_DEFAULT = 1, 100, 20  # §4.1, §8: minimum 1, maximum 100, default 20
SUNSET_DATE = (2030, 12, 5)  # §4.3, §9.3: GET /pets/{petId} "is removed on 5 December 2030"
# §9.3: GET /pets is the deprecated read's replacement and POST /pets is current: neither is deprecated.
CURRENT_OPERATIONS = ("listPets", "createPet")
