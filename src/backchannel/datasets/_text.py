"""Answer-text normalisation and alias matching shared by the loaders and the rule judge."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from functools import lru_cache

_ARTICLES = frozenset({"a", "an", "the"})
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}\b)")
_DECIMAL = re.compile(r"(?<=\d)\.(?=\d)")
_NONWORD = re.compile(r"[\W_]+")
_CONTRACTION = re.compile(r"n['’]t\b")


@lru_cache(maxsize=65536)
def normalize(text: str) -> str:
    """Lower-case, strip accents, drop punctuation and articles, collapse spaces.

    Digit groups survive ("1,200" -> "1200", "3.5" -> "3dot5") so numbers compare as wholes;
    "isn't" becomes "is not" so negations stay visible to the judge.
    """
    decomposed = unicodedata.normalize("NFKD", text)
    ascii_text = "".join(ch for ch in decomposed if not unicodedata.combining(ch)).lower()
    ascii_text = _CONTRACTION.sub(" not", ascii_text.replace("can't", "can not"))
    ascii_text = _THOUSANDS.sub("", ascii_text)
    ascii_text = _DECIMAL.sub("dot", ascii_text)
    tokens = [t for t in _NONWORD.split(ascii_text) if t and t not in _ARTICLES]
    return " ".join(tokens)


def tokens(text: str) -> list[str]:
    """The normalised tokens of a text."""
    norm = normalize(text)
    return norm.split() if norm else []


def find_phrase(haystack: list[str], phrase: list[str]) -> list[int]:
    """Start indices where the token sequence ``phrase`` occurs in ``haystack`` as whole words."""
    n = len(phrase)
    if n == 0:
        return []
    return [i for i in range(len(haystack) - n + 1) if haystack[i : i + n] == phrase]


def contains_phrase(text: str, phrase: str) -> bool:
    """Whether the normalised ``phrase`` occurs in the normalised ``text`` on word boundaries."""
    return bool(find_phrase(tokens(text), tokens(phrase)))


def aliases_overlap(left: Iterable[str], right: Iterable[str]) -> bool:
    """Whether any alias of one side equals, or occurs as whole words inside, one of the other."""
    left_toks = [tokens(a) for a in left]
    right_toks = [tokens(a) for a in right]
    for lt in left_toks:
        for rt in right_toks:
            if not lt or not rt:
                continue
            if find_phrase(lt, rt) or find_phrase(rt, lt):
                return True
    return False


def clean_aliases(aliases: Iterable[str]) -> tuple[str, ...]:
    """Aliases stripped, de-duplicated in order, without those that normalise to nothing."""
    kept: dict[str, None] = {}
    for alias in aliases:
        alias = alias.strip()
        if normalize(alias):
            kept.setdefault(alias, None)
    return tuple(kept)
