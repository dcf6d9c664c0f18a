"""The compact form of a conversation's bulky texts: one zstd frame per conversation and part.

A part (the conversation's meta, its events' meta, its prompts) is one document per
conversation, compressed whole, so a prompt that repeats the transcript before it costs only
what is new in it. Each part has one dictionary per run: the first stored document of that part
(raw content), so the templates and instructions every conversation shares cost once per run.
Frames carry a checksum, so a damaged document is detected, never read as other text.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import zstandard

LEVEL = 3
"""zstd level: measured on real runs, levels above 3 gain about 10 % more for 4-100x the CPU
(docs/data-schema.md, "How prompts are stored")."""
MIN_DICTIONARY = 64
"""A document shorter than this does not become a part's dictionary (nothing to share)."""
PARTS = ("conversation_meta", "event_meta", "prompts")


class DocumentError(ValueError):
    """A stored document that cannot be decoded (damaged, or its dictionary is missing)."""


def encode_text(text: str) -> bytes:
    """UTF-8 that keeps any Python string (lone surrogates included) byte for byte."""
    return text.encode("utf-8", "surrogatepass")


def decode_text(data: bytes) -> str:
    return data.decode("utf-8", "surrogatepass")


def records(rows: Iterable[tuple[int, str]]) -> str:
    """A document of `seq<TAB>json` lines (JSON text never holds a raw line break)."""
    return "\n".join(f"{seq}\t{text}" for seq, text in rows)


def parse_records(document: str) -> Iterator[tuple[int, str]]:
    """The (seq, json) pairs of a `records` document."""
    if not document:
        return
    for line in document.split("\n"):
        seq, _, text = line.partition("\t")
        yield int(seq), text


class Codec:
    """Compresses and decompresses the documents of one run store, with its dictionaries."""

    def __init__(self, dictionaries: dict[int, bytes] | None = None) -> None:
        self._raw: dict[int, bytes] = {}
        self._compressors: dict[int | None, zstandard.ZstdCompressor] = {
            None: zstandard.ZstdCompressor(level=LEVEL, write_checksum=True)
        }
        self._decompressors: dict[int | None, zstandard.ZstdDecompressor] = {
            None: zstandard.ZstdDecompressor()
        }
        for key, raw in (dictionaries or {}).items():
            self.add_dictionary(key, raw)

    def add_dictionary(self, key: int, raw: bytes) -> None:
        """Use `raw` (a document's bytes) as dictionary `key`."""
        self._raw[key] = raw
        dictionary = zstandard.ZstdCompressionDict(raw, dict_type=zstandard.DICT_TYPE_RAWCONTENT)
        dictionary.precompute_compress(level=LEVEL)
        self._compressors[key] = zstandard.ZstdCompressor(
            level=LEVEL, dict_data=dictionary, write_checksum=True
        )
        self._decompressors[key] = zstandard.ZstdDecompressor(dict_data=dictionary)

    def has(self, key: int) -> bool:
        return key in self._raw

    def compress(self, data: bytes, dictionary: int | None) -> bytes:
        return self._compressors[dictionary].compress(data)

    def decompress(self, data: bytes, dictionary: int | None) -> bytes:
        decompressor = self._decompressors.get(dictionary)
        if decompressor is None:
            raise DocumentError(f"a stored document needs dictionary {dictionary}, not stored")
        try:
            return decompressor.decompress(data)
        except zstandard.ZstdError as error:
            raise DocumentError(f"a stored document is damaged ({error})") from None

    def text(self, data: bytes, dictionary: int | None) -> str:
        return decode_text(self.decompress(data, dictionary))


def pack_dictionary(raw: bytes) -> bytes:
    """A dictionary as stored (compressed on its own)."""
    return zstandard.ZstdCompressor(level=LEVEL, write_checksum=True).compress(raw)


def unpack_dictionary(data: bytes) -> bytes:
    try:
        return zstandard.ZstdDecompressor().decompress(data)
    except zstandard.ZstdError as error:
        raise DocumentError(f"a stored dictionary is damaged ({error})") from None
