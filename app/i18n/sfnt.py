"""One face of a TrueType/OpenType collection (``.ttc``) as a standalone font file.

Chromium's font sanitiser (OTS) refuses Debian's ``wqy-zenhei.ttc`` as a web font ("FFTM:
misaligned table": the collection packs a table at an offset that is not a multiple of 4), and
browsers would only ever read a collection's first face anyway. ``extract_face`` copies one face's
tables into a new sfnt, each at a 4-byte-aligned offset, leaving out the tables a browser never
reads (FontForge's timestamp ``FFTM``); table data and checksums are copied as they are.
"""
import struct

#: tables no browser reads; FFTM is the one OTS finds misaligned in wqy-zenhei.ttc
DROPPED = {b"FFTM"}


def face_offsets(data):
    """Offsets of the faces in ``data``: one ``[0]`` for a plain sfnt, the TTC directory otherwise."""
    if data[:4] != b"ttcf":
        return [0]
    count = struct.unpack_from(">I", data, 8)[0]
    return list(struct.unpack_from(f">{count}I", data, 12))


def extract_face(data, index=0):
    """The bytes of face ``index`` of the collection (or plain font) ``data``, as a plain sfnt."""
    start = face_offsets(data)[index]
    version, num_tables = struct.unpack_from(">IH", data, start)
    records = []
    for i in range(num_tables):
        tag, checksum, offset, length = struct.unpack_from(">4sIII", data, start + 12 + 16 * i)
        if tag not in DROPPED:
            records.append((tag, checksum, offset, length))
    records.sort()                                   # the table directory is sorted by tag
    n = len(records)
    entry_selector = max(n.bit_length() - 1, 0)
    search_range = (1 << entry_selector) * 16
    header = struct.pack(">IHHHH", version, n, search_range, entry_selector, n * 16 - search_range)
    body = bytearray()
    directory = bytearray()
    position = 12 + 16 * n
    for tag, checksum, offset, length in records:
        directory += struct.pack(">4sIII", tag, checksum, position + len(body), length)
        body += data[offset:offset + length]
        body += b"\0" * (-len(body) % 4)              # the next table starts 4-byte aligned
    return header + bytes(directory) + bytes(body)
