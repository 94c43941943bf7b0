"""Faults of GET /pets (§4.1): the query it takes, the animals it lists, the page and its answer."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from devtools.catalog.faulty.registry import fault
from petstore_contract.interface.document import INT64_MAX, STATUSES
from petstore_contract.reference.app import PetStore
from petstore_contract.reference.rules import DEPRECATION, INTEGER, SUNSET, Rules

Pets = list[dict[str, Any]]

# -- limit and status, as read ----------------------------------------------------------------------------


@fault("list_default_50")
class ListDefault50(Rules):
    def parse_limit(self, raw: str | None) -> int:
        return 50 if raw is None else super().parse_limit(raw)


@fault("list_default_5")
class ListDefault5(Rules):
    def parse_limit(self, raw: str | None) -> int:
        return 5 if raw is None else super().parse_limit(raw)


@fault("list_500_on_non_integer_limit")
class List500OnNonIntegerLimit(Rules):
    def parse_limit(self, raw: str | None) -> int:
        if raw is not None and not INTEGER.fullmatch(raw):
            raise RuntimeError("limit is not an integer")
        return super().parse_limit(raw)


@fault("list_500_on_negative_limit")
class List500OnNegativeLimit(Rules):
    def parse_limit(self, raw: str | None) -> int:
        if raw is not None and INTEGER.fullmatch(raw) and int(raw) < 0:
            raise RuntimeError("negative limit")
        return super().parse_limit(raw)


class ZeroLimitReturnsAll(Rules):
    def parse_limit(self, raw: str | None) -> int:
        if raw is not None and INTEGER.fullmatch(raw) and int(raw) == 0:
            return len(self.pets) + 1
        return super().parse_limit(raw)


@fault("list_zero_limit_returns_all", rules=ZeroLimitReturnsAll)
class ListZeroLimitReturnsAll(PetStore):
    def page_size(self, limit: int) -> int:
        return limit  # every animal: no page cap either


@fault("list_rejects_limit_1")
class ListRejectsLimit1(Rules):
    def limit_in_range(self, value: int) -> bool:
        return value != 1 and super().limit_in_range(value)


@fault("list_rejects_limit_100")
class ListRejectsLimit100(Rules):
    def limit_in_range(self, value: int) -> bool:
        return value != 100 and super().limit_in_range(value)


class NoMaximum(Rules):
    def limit_in_range(self, value: int) -> bool:
        return 1 <= value <= 1000


@fault("list_no_maximum", rules=NoMaximum)
class ListNoMaximum(PetStore):
    def page_size(self, limit: int) -> int:
        return limit  # no page cap either


@fault("list_500_on_unknown_status")
class List500OnUnknownStatus(Rules):
    def parse_status_filter(self, raw: str | None) -> str | None:
        if raw is not None and raw not in STATUSES:
            raise RuntimeError("unknown status")
        return super().parse_status_filter(raw)


# -- limit and status, as used ------------------------------------------------------------------------------


@fault("list_500_on_filtered_small_page")
class List500OnFilteredSmallPage(PetStore):
    def check_query(self, request: Request) -> tuple[int, str | None]:
        limit, wanted = super().check_query(request)
        if wanted is not None and limit < 10:
            raise RuntimeError("small filtered page")
        return limit, wanted


@fault("list_ignores_status")
class ListIgnoresStatus(PetStore):
    def check_query(self, request: Request) -> tuple[int, str | None]:
        limit, _ = super().check_query(request)
        return limit, None


@fault("list_ignores_status_sold")
class ListIgnoresStatusSold(PetStore):
    def check_query(self, request: Request) -> tuple[int, str | None]:
        limit, wanted = super().check_query(request)
        return limit, None if wanted == "sold" else wanted


@fault("list_ignores_status_without_limit")
class ListIgnoresStatusWithoutLimit(PetStore):
    def check_query(self, request: Request) -> tuple[int, str | None]:
        limit, wanted = super().check_query(request)
        return limit, wanted if "limit" in request.query_params else None


@fault("list_ignores_limit")
class ListIgnoresLimit(PetStore):
    def check_query(self, request: Request) -> tuple[int, str | None]:
        _, wanted = super().check_query(request)
        return 20, wanted


@fault("list_status_ignores_limit")
class ListStatusIgnoresLimit(PetStore):
    def check_query(self, request: Request) -> tuple[int, str | None]:
        limit, wanted = super().check_query(request)
        return 100 if wanted is not None else limit, wanted


# -- the animals listed ---------------------------------------------------------------------------------------


@fault("list_hides_newest")
class ListHidesNewest(PetStore):
    def matching(self, wanted: str | None) -> Pets:
        newest = max(self.pets, default=None)
        return [p for p in super().matching(wanted) if p["id"] != newest]


@fault("list_forgets_after_100")
class ListForgetsAfter100(PetStore):
    def matching(self, wanted: str | None) -> Pets:
        forgotten = set(list(self.pets)[100:])  # the store's order is creation order
        return [p for p in super().matching(wanted) if p["id"] not in forgotten]


@fault("list_filter_leaks_over_100")
class ListFilterLeaksOver100(PetStore):
    def matching(self, wanted: str | None) -> Pets:
        if wanted is None or len(self.pets) <= 100:
            return super().matching(wanted)
        leaked = next(reversed(self.pets))  # the animal created last
        return [p for p in super().matching(None) if p.get("status") == wanted or p["id"] == leaked]


@fault("list_late_names_wrong")
class ListLateNamesWrong(PetStore):
    def matching(self, wanted: str | None) -> Pets:
        if wanted is not None:
            return super().matching(wanted)
        late = set(list(self.pets)[100:101])  # the 101st animal created: the store's order is creation order
        return [{**p, "name": p["name"].upper()} if p["id"] in late else p for p in super().matching(None)]


# -- the page -------------------------------------------------------------------------------------------------


@fault("list_limit_off_by_one")
class ListLimitOffByOne(PetStore):
    def page_size(self, limit: int) -> int:
        return super().page_size(limit) + 1


@fault("list_cap_inconsistent")
class ListCapInconsistent(PetStore):
    def page_size(self, limit: int) -> int:
        size = super().page_size(limit)
        return min(size, 3) if limit < 10 else size


@fault("list_short_by_one")
class ListShortByOne(PetStore):
    def cut(self, matching: Pets, size: int, limit: int) -> Pets:
        chosen = super().cut(matching, size, limit)
        return chosen[: size - 1] if len(matching) >= size else chosen


@fault("list_empty_past_store")
class ListEmptyPastStore(PetStore):
    def cut(self, matching: Pets, size: int, limit: int) -> Pets:
        return [] if limit > len(matching) else super().cut(matching, size, limit)


@fault("list_repeats_animal")
class ListRepeatsAnimal(PetStore):
    def cut(self, matching: Pets, size: int, limit: int) -> Pets:
        chosen = super().cut(matching, size, limit)
        return [*chosen[:-1], chosen[0]] if len(matching) > size >= 2 else chosen


@fault("list_filter_after_cut")
class ListFilterAfterCut(PetStore):
    def cut(self, matching: Pets, size: int, limit: int) -> Pets:
        # The first ``size`` animals of every status, then only those of the status asked for.
        first = {p["id"] for p in self.matching(None)[:size]}
        return [p for p in matching if p["id"] in first]


# -- the answer -----------------------------------------------------------------------------------------------


@fault("list_wraps_array")
class ListWrapsArray(PetStore):
    def list_answer(self, page: Pets, headers: dict[str, str]) -> Response:
        return self.json({"items": page}, 200, headers)


@fault("deprecation_on_list")
class DeprecationOnList(PetStore):
    def list_answer(self, page: Pets, headers: dict[str, str]) -> Response:
        # After a variant's X-Total-Count and before its Link, where they have always been sent.
        link = {"Link": headers.pop("Link")} if "Link" in headers else {}
        return super().list_answer(page, {**headers, "Deprecation": DEPRECATION, "Sunset": SUNSET, **link})


class ItemChanged(PetStore):
    """Lists every animal as ``item`` changes it (a read by id shows it unchanged)."""

    def item(self, pet: dict[str, Any]) -> dict[str, Any]:
        raise NotImplementedError

    def list_answer(self, page: Pets, headers: dict[str, str]) -> Response:
        return super().list_answer([self.item(p) for p in page], headers)


@fault("list_item_id_string")
class ListItemIdString(ItemChanged):
    def item(self, pet: dict[str, Any]) -> dict[str, Any]:
        return {**pet, "id": str(pet["id"])}


@fault("list_item_status_uppercase")
class ListItemStatusUppercase(ItemChanged):
    def item(self, pet: dict[str, Any]) -> dict[str, Any]:
        return {**pet, "status": pet["status"].upper()} if "status" in pet else pet


@fault("list_item_missing_category")
class ListItemMissingCategory(ItemChanged):
    def item(self, pet: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in pet.items() if k != "categoryId"}


@fault("list_item_category_shifted")
class ListItemCategoryShifted(ItemChanged):
    def item(self, pet: dict[str, Any]) -> dict[str, Any]:
        category = pet.get("categoryId")
        if pet["id"] % 2 != 0 or type(category) is not int:
            return pet
        return {**pet, "categoryId": category + 1 if category < INT64_MAX else category - 1}
