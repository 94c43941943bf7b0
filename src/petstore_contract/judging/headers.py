"""Total readers of the header values a target sends: each returns what it read or ``None``, never raises.

The target is hostile input: a date beyond the years Python's ``datetime`` holds, control
characters, a challenge of another scheme, an empty value.  These readers work on integers and
plain strings only, so the checks built on them (``expect``, ``generated``) judge every value
instead of crashing on one.
"""

from __future__ import annotations

import calendar
import re

# RFC 9651 §3.1.2: an Item may carry parameters (``;key`` or ``;key=bare-item``, each after ";" and
# spaces), so ``@1767225600;reason="x"`` is still the Date @1767225600.  The bare items: integer or
# decimal, string, token, byte sequence, boolean, date, display string (§3.3).
SF_KEY = r"[a-z*][a-z0-9_.*-]*"
SF_BARE = (
    r'(?:-?[0-9]{1,15}(?:\.[0-9]{1,3})?|"(?:[\x20\x21\x23-\x5b\x5d-\x7e]|\\["\\])*"'
    r"|[A-Za-z*][!#$%&'*+.^_`|~0-9A-Za-z:/-]*|:[A-Za-z0-9+/=]*:|\?[01]|@-?[0-9]{1,15}"
    r'|%"(?:[\x20\x21\x23\x24\x26-\x5b\x5d-\x7e]|%[0-9a-f]{2})*")'
)
SF_PARAMETERS = rf"(?:; *{SF_KEY}(?:={SF_BARE})?)*"
SF_DATE = re.compile(rf"@(-?[0-9]{{1,15}}){SF_PARAMETERS}")  # RFC 9651 §3.3.7 Date, as RFC 9745 §2.1 requires
IMF_FIXDATE = re.compile(
    r"(Mon|Tue|Wed|Thu|Fri|Sat|Sun), ([0-9]{2}) (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) ([0-9]{4}) "
    r"([0-9]{2}):([0-9]{2}):([0-9]{2}) GMT"
)  # RFC 9110 §5.6.7, the form a sender must generate
MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
DAY = 86_400


def sf_date_seconds(value: str | None) -> int | None:
    """``@<seconds>`` (a Structured Field Date, with or without parameters: RFC 9651 §3.1.2) as seconds
    since the epoch; None if it is not one."""
    if value is None:
        return None
    match = SF_DATE.fullmatch(value.strip())
    return int(match.group(1)) if match else None


def http_date_seconds(value: str | None) -> int | None:
    """An IMF-fixdate (``Thu, 05 Dec 2030 00:00:00 GMT``) as seconds since the epoch; None if it is not
    one or names a day or time that does not exist."""
    if value is None:
        return None
    match = IMF_FIXDATE.fullmatch(value.strip())
    if not match:
        return None
    _, day_text, month_name, *numbers = match.groups()  # the weekday is redundant: not judged here
    year, hour, minute, second = (int(n) for n in numbers)
    month, day = MONTHS.index(month_name) + 1, int(day_text)
    if year < 1 or not 1 <= day <= calendar.monthrange(year, month)[1]:
        return None
    if hour > 23 or minute > 59 or second > 60:  # 60: a leap second
        return None
    return calendar.timegm((year, month, day, hour, minute, second, 0, 0, 0))


def day_of(seconds: int) -> int:
    """The day (days since 1 January 1970, UTC) a moment falls on: integer arithmetic, any range."""
    return seconds // DAY


def epoch_day(year: int, month: int, day: int) -> int:
    return calendar.timegm((year, month, day, 0, 0, 0, 0, 0, 0)) // DAY


def challenge_schemes(values: list[str] | str | None) -> list[str]:
    """The auth schemes of WWW-Authenticate values, lower-cased (RFC 9110 §11.6.1: case-insensitive).

    A rough split: a challenge's parameters follow its scheme after a space, and several
    challenges are separated by commas; a parameter after a comma (``a=b``) is no scheme."""
    if values is None:
        return []
    found = []
    for value in [values] if isinstance(values, str) else values:
        for part in value.split(","):
            words = part.strip().split(None, 1)
            if words and "=" not in words[0]:
                found.append(words[0].lower())
    return found


def media_type(value: str | None) -> str:
    """The media type of a Content-Type value, lower-cased, without parameters ("" when none)."""
    return (value or "").split(";", 1)[0].strip().lower()


def after_now(seconds: int, date_header: str | None, now: float, slack: int = DAY) -> bool:
    """A moment later than "now" by more than ``slack``: now is the later of this client's clock and the
    answer's ``Date`` (so a client clock that runs late does not make a server's date look future)."""
    server_now = http_date_seconds(date_header)
    return seconds > max(now, server_now if server_now is not None else now) + slack
