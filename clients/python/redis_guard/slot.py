"""The Cluster hash slot of a key (CRC16/XMODEM of its hash tag), for the
clients that route by slot number rather than by key."""

from __future__ import annotations

from .results import EncodableT

SLOTS = 16384


def _table_entry(byte: int) -> int:
    crc = byte << 8
    for _ in range(8):
        crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else crc << 1
    return crc & 0xFFFF


_TABLE = [_table_entry(byte) for byte in range(256)]


def _crc16(data: bytes) -> int:
    crc = 0
    for byte in data:
        crc = ((crc << 8) & 0xFFFF) ^ _TABLE[(crc >> 8) ^ byte]
    return crc


def key_slot(key: EncodableT) -> int:
    data = key.encode() if isinstance(key, str) else key
    # A non-empty {tag} hashes alone, so related keys share a slot.
    start = data.find(b"{")
    if start != -1:
        end = data.find(b"}", start + 1)
        if end > start + 1:
            data = data[start + 1 : end]
    return _crc16(data) % SLOTS
