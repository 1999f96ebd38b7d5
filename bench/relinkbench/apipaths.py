"""relinkd's object paths, the one Python copy of RelinkAPI's APIPath rule.

Identifier objects are /org/relink/central/<escaped>: ASCII letters and
digits kept, every other UTF-8 byte as _xx (two lowercase hex digits).
Peripheral objects are /org/relink/peripheral/<uuid, lowercase, - as _>.
bench/tests/test_apipaths.py checks this against the documented examples.
"""

CENTRAL_PREFIX = "/org/relink/central/"
PERIPHERAL_PREFIX = "/org/relink/peripheral/"


def escape(text: str) -> str:
    """One object path element for `text`."""
    return "".join(chr(b) if chr(b).isascii() and chr(b).isalnum() else f"_{b:02x}" for b in text.encode("utf-8"))


def central_path(identifier: str) -> str:
    """The Central1 object of a restore identifier."""
    return CENTRAL_PREFIX + escape(identifier)


def peripheral_path(uuid: str) -> str:
    """The Peripheral1 object of a peripheral UUID (either case)."""
    return PERIPHERAL_PREFIX + uuid.lower().replace("-", "_")
