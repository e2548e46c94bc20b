"""The iteration orders of the Java maps whose order decides something in Kafka's controller
(docs/model.md §20.4): which stale broker is fenced first, which broker the activation touches
first. Pure functions of the keys and the order they came in.

* ``ConcurrentHashMap`` (4.1's ``BrokerHeartbeatTracker``): bins in index order, index =
  ``spread(hashCode) & (n - 1)``, n = 16 doubling when the size reaches 3/4 of it
  (``addCount``); within a bin, the order the keys came in (a resize's split of a bin is taken
  to keep it).
* ``TimelineHashMap`` / ``BaseHashTable`` (``ClusterControlManager.brokerRegistrations``): slots
  in index order, slot = Knuth's multiplicative hash of ``hashCode`` (``findSlot``), capacity 2
  doubling before an insert that would pass a load of 3/4 (``baseAddOrReplace``, ``rehash``);
  within a slot, the order the keys came in.
"""
MASK32 = 0xFFFFFFFF
MASK64 = (1 << 64) - 1
FIBONACCI = -7046029254386353131   # BaseHashTable.findSlot's multiplier


def _int(value):
    value &= MASK32
    return value - (1 << 32) if value >= 1 << 31 else value


def objects_hash_int_long(first, second):
    """``Objects.hash(Integer, Long)``: 31 x (31 + first) + Long.hashCode(second), as a Java int."""
    long_hash = (second ^ ((second & MASK64) >> 32)) & MASK32
    return _int(31 * (31 + first) + long_hash)


def chm_bin(hash_code, table_size):
    """``ConcurrentHashMap.spread(h) & (n - 1)``."""
    h = hash_code & MASK32
    return ((h ^ (h >> 16)) & 0x7FFFFFFF) & (table_size - 1)


def chm_table_size(most_keys_held):
    """The table size after holding ``most_keys_held`` keys at once (16, doubling at 3/4 full)."""
    size = 16
    while most_keys_held >= size - (size >> 2):
        size <<= 1
    return size


def chm_order(keys, hash_of, table_size):
    """``keys`` (in the order they came in) as a ConcurrentHashMap of that size iterates them."""
    return sorted(keys, key=lambda key: chm_bin(hash_of(key), table_size))


def _slot(hash_code, capacity):
    log2size = capacity.bit_length()          # 32 - numberOfLeadingZeros(capacity)
    return ((hash_code * FIBONACCI) & MASK64) >> (65 - log2size)


def timeline_order(int_keys):
    """Integer keys (their hashCode is themselves), added in this order to a BaseHashTable of
    initial capacity 2 and never removed: the order its iterator yields them."""
    slots = [[] for _ in range(2)]
    size = 0
    for key in int_keys:
        if any(key in slot for slot in slots):
            continue                          # baseAddOrReplace: replaced in place
        if (size + 1) * 0.75 > len(slots):
            old, slots = slots, [[] for _ in range(2 * len(slots))]
            for bucket in old:                # rehash: old slots in order, each slot's keys in order
                for moved in bucket:
                    slots[_slot(moved, len(slots))].append(moved)
        slots[_slot(key, len(slots))].append(key)
        size += 1
    return [key for slot in slots for key in slot]
